"""Targets from a compiler-backed labeller's output (go_types, java_javac): each call
names its callee's definition and its caller's unit by index; a target gathers its
sites, the sites through a receiver, and its callers."""


def targets_from_calls(calls, target_of, unit_of):
    """`target_of(callee)` gives a new target's fields (path, name, chain, kind, start,
    name_line, end_line and any selector hints), or None to leave the callee out;
    `unit_of(caller)` gives a caller unit's dict (path, start, name_line, name)."""
    targets = {}
    for c in calls:
        t = targets.get(c["callee"])
        if t is None:
            fields = target_of(c["callee"])
            if fields is None:
                continue
            t = targets[c["callee"]] = dict(fields, sites=set(), member_sites=set(), callers=set())
        t["sites"].add((c["path"], c["line"]))
        if c["member"]:
            t["member_sites"].add((c["path"], c["line"]))
        if c["caller"] < 0:
            t["callers"].add((c["path"], 0, 0, "<top level>"))
        else:
            u = unit_of(c["caller"])
            t["callers"].add((u["path"], u["start"], u["name_line"], u["name"]))
    out = []
    for t in targets.values():
        for k in ("sites", "member_sites", "callers"):
            t[k] = sorted(t[k])
        out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    return out

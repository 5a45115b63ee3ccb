"""The tasks: each a scripted policy, the same code for every binary. A policy asks what
an agent would ask, reads only what answers give (text and structured content), adapts
to the tools/list the server offers, and never fails on an older binary: an error answer
is a scored failure. Scores in [0, 1]; what ground truth each uses is in truth.py."""
import json
import os
import re
import time

from . import scoring

MAX_PAGES = 10          # pages an agent walks before it stops
POLL_DEADLINE_S = 30    # freshness: how long to keep asking until the answer is right
POLL_EVERY_S = 0.1


class Task:
    def __init__(self, id, question, measures, run):
        self.id, self.question, self.measures, self.run = id, question, measures, run


def _nonzero(x):
    if isinstance(x, dict):
        return any(_nonzero(v) for k, v in x.items() if k in ("count", "nodes", "total"))
    if isinstance(x, (list, tuple)):
        return len(x) > 0
    return bool(x)


def _last_segment(selector):
    return re.split(r"::|\.|:|/", selector)[-1]


def _pick(cands, want_path, name):
    """The candidate of `want_path` whose qualified name ends with `name` (else the first
    of that file)."""
    mine = [c for c in cands if c.get("path") == want_path]
    exact = [c for c in mine if re.split(r"::|\.", c.get("qualified_name") or "")[-1] == name]
    return (exact or mine or [None])[0]


async def _find_pick(sess, name, want_path, notes):
    """The extra call an agent makes when an answer named no candidate: find the name,
    pick the definition of the file it means."""
    f = await sess.call("find", {"pattern": name})
    notes.append(f"find {name!r}: {'error' if f.is_error else len(f.sc.get('symbols') or [])} definitions")
    if f.is_error:
        return None
    c = _pick(f.sc.get("symbols") or [], want_path, name)
    return c


async def _recover(sess, a, target, want_path, notes):
    """A selector for the definition meant, after an ambiguous (or not found) answer: one of
    the candidates the answer lists, else from a find."""
    name = _last_segment(target)
    cands = scoring.candidates(a.text, a.structured)
    notes.append(f"{a.error_kind or 'answer'} with {len(cands)} candidates listed")
    c = _pick(cands, want_path, name) if cands else None
    if c is not None:
        if c.get("target"):
            return c["target"]
        if "path:line" in a.text:
            return f"{c['path']}:{c['line']}"
        return f"{c['path']}:{name}"
    c = await _find_pick(sess, name, want_path, notes)
    if c is None:
        return None
    return f"{c['path']}:{c.get('qualified_name') or name}"


async def relations_walk(sess, target, direction, want_path, notes, **extra):
    """`relations` as an agent runs it for a complete answer: recover from an ambiguity by
    the candidates listed (else find), ask again for what the answer says it left out
    (unresolved uses, name-only links) when the tool takes that flag, and walk the pages.
    Returns the answers that count (the last target's) and whether the target resolved."""
    args = {"target": target, "direction": direction, **extra}
    a = await sess.call("relations", args)
    if a.is_error or (a.sc.get("candidates") and not a.sc.get("relations") and not a.sc.get("groups")):
        if a.error_kind not in ("ambiguous", "not_found", None):
            notes.append(f"error {a.error_kind}")
            return [a], False
        sel = await _recover(sess, a, target, want_path, notes)
        if sel is None:
            return [a], False
        args["target"] = sel
        a = await sess.call("relations", args)
        if a.is_error:
            notes.append(f"retry {sel!r}: error {a.error_kind}")
            return [a], False
    more = {}
    un = a.sc.get("unresolved") or {}
    if (un.get("count") or 0) > 0 and not un.get("sites") and sess.offers("relations", "include_unresolved"):
        more["include_unresolved"] = True
    left = a.sc.get("name_only_left_out")
    if _nonzero(left) and sess.offers("relations", "include_name_only"):
        more["include_name_only"] = True
    if more:
        notes.append("asked again with " + ", ".join(sorted(more)))
        args.update(more)
        a = await sess.call("relations", args)
        if a.is_error:
            return [a], False
    answers = [a]
    pages = 1
    while (a.sc.get("page") or {}).get("more") and (a.sc.get("page") or {}).get("next_cursor") and pages < MAX_PAGES:
        a = await sess.call("relations", dict(args, cursor=a.sc["page"]["next_cursor"]))
        pages += 1
        if a.is_error:
            break
        answers.append(a)
    if pages > 1:
        notes.append(f"{pages} pages")
    return answers, True


def _relation_items(answers):
    nodes, sites, unresolved, groups = [], [], [], []
    for a in answers:
        n, s, u, g = scoring.relation_items(a.structured)
        nodes += n
        sites += s
        unresolved += u
        groups += g
    return nodes, sites, unresolved, groups


def _targets_ok(answers, truth_target):
    """Whether the answers are about the definition meant (their `targets`)."""
    for a in answers:
        for t in a.sc.get("targets") or []:
            if isinstance(t, str) and t.startswith(truth_target["path"] + ":"):
                return True
    return False


def _in_compiled(compiled, item):
    return any(s - 1 <= item[1] <= e for s, e in compiled.get(item[0], ()))


# ------------------------------------------------------------------ the tasks

async def callers_add_permits(ctx):
    t = ctx.truth["callers"]["add_permits"]
    notes = []
    answers, ok = await relations_walk(ctx.sess, "src/sync/semaphore.rs:add_permits", "callers",
                                       t["target"]["path"], notes)
    nodes, sites, unresolved, _ = _relation_items(answers)
    found = sites + unresolved
    truth_sites = [tuple(x) for x in t["sites"]]
    return {"score": scoring.recall(truth_sites, found) if ok else 0.0,
            "precision": scoring.precision(truth_sites, found, lambda x: _in_compiled(ctx.truth["compiled"], x)),
            "details": {"true_sites": len(truth_sites), "sites_named": len(set(found)),
                        "true_sites_named": len(set(truth_sites) & set(found)),
                        "true_sites_resolved": len(set(truth_sites) & set(sites)),
                        "missed": sorted(set(truth_sites) - set(found))},
            "notes": notes}


async def impact_sleep_reset(ctx):
    t = ctx.truth["callers"]["sleep_reset"]
    notes = []
    answers, ok = await relations_walk(ctx.sess, "Sleep::reset", "impact", t["target"]["path"], notes)
    nodes, sites, unresolved, _ = _relation_items(answers)
    fns = [tuple(c) for c in t["callers"]]
    items = [(p, l) for p, l, _ in nodes] + sites + unresolved
    d1 = [(p, l) for p, l, d in nodes if d in (1, None)] + unresolved
    named = [f for f in fns if any(scoring.in_function(i, f) for i in items)]
    prec_items = [x for x in d1 if _in_compiled(ctx.truth["compiled"], x)]
    prec = (sum(1 for x in prec_items if any(scoring.in_function(x, f) for f in fns)) / len(prec_items)
            if prec_items else None)
    return {"score": scoring.function_recall(fns, items) if ok else 0.0, "precision": prec,
            "details": {"true_callers": len(fns), "true_callers_named": len(named),
                        "nodes": len(nodes), "unresolved_sites": len(unresolved),
                        "missed": [f"{f[0]}:{f[2]} {f[4]}" for f in fns if f not in named]},
            "notes": notes}


async def impact_notify_file(ctx):
    t = ctx.truth["notify_dependents"]
    notes = []
    extra = {"depth": 1}
    if "file" in ctx.sess.arg_enum("relations", "group_by"):
        extra["group_by"] = "file"
        notes.append("group_by file")
    answers, ok = await relations_walk(ctx.sess, t["file"], "impact", t["file"], notes, **extra)
    nodes, sites, unresolved, groups = _relation_items(answers)
    files = set(groups) | {p for p, _, _ in nodes} | {p for p, _ in sites} | {p for p, _ in unresolved}
    files.discard(t["file"])
    truth_files = set(t["files"])
    return {"score": scoring.recall([(f,) for f in truth_files], [(f,) for f in files]) if ok else 0.0,
            "precision": scoring.precision([(f,) for f in truth_files], [(f,) for f in files]),
            "details": {"true_files": len(truth_files), "files_named": len(files),
                        "missed": sorted(truth_files - files), "extra": sorted(files - truth_files)[:20]},
            "notes": notes}


async def ambiguous_acquire(ctx):
    t = ctx.truth["callers"]["semaphore_acquire"]
    notes = []
    answers, ok = await relations_walk(ctx.sess, "Semaphore::acquire", "callers", t["target"]["path"], notes)
    ok = ok and _targets_ok(answers, t["target"])
    nodes, sites, unresolved, _ = _relation_items(answers)
    found = sites + unresolved
    truth_sites = [tuple(x) for x in t["sites"]]
    return {"score": scoring.recall(truth_sites, found) if ok else 0.0,
            "precision": scoring.precision(truth_sites, found, lambda x: _in_compiled(ctx.truth["compiled"], x))
            if ok else None,
            "details": {"resolved_target": ok, "true_sites": len(truth_sites), "sites_named": len(set(found)),
                        "missed": sorted(set(truth_sites) - set(found))},
            "notes": notes}


def _module_fits(path, modules):
    parts = path[:-3].split("/") if path.endswith(".rs") else path.split("/")
    return all(m in parts for m in modules)


async def partial_path_spawn_blocking(ctx):
    t = ctx.truth["definitions"]["spawn_blocking"]
    notes = []
    sel = "task::spawn_blocking"
    a = await ctx.sess.call("symbol", {"symbol": sel, "body_lines": 0})
    chosen = None
    listed = []
    if not a.is_error:
        defs = a.sc.get("definitions") or []
        listed = [(d.get("path"), d.get("line")) for d in defs]
        fit = [d for d in defs if _module_fits(d.get("path") or "", ["task"])]
        chosen = (fit or defs or [None])[0]
        notes.append(f"symbol gave {len(defs)} definitions")
    else:
        notes.append(f"symbol: {a.error_kind}")
        # The hint's call, else the find an agent would make.
        m = re.search(r'find \{"pattern":\s*"([^"]+)"', a.text) or re.search(r"loci find '([^']+)'", a.text)
        pattern = m.group(1) if m else _last_segment(sel)
        f = await ctx.sess.call("find", {"pattern": pattern})
        if not f.is_error:
            syms = f.sc.get("symbols") or []
            listed = [(s.get("path"), s.get("line")) for s in syms]
            free = [s for s in syms if s.get("name") == "spawn_blocking" and s.get("qualified_name") == "spawn_blocking"]
            fit = [s for s in free if _module_fits(s.get("path") or "", ["task"])]
            chosen = (fit or [None])[0]
            notes.append(f"find {pattern!r}: {len(syms)} definitions, {len(fit)} in a `task` module")
    right = chosen is not None and scoring.definition_match(t, chosen.get("path"), chosen.get("line") or 0)
    listed_right = any(scoring.definition_match(t, p, l or 0) for p, l in listed)
    return {"score": 1.0 if right else 0.5 if listed_right else 0.0,
            "details": {"chosen": chosen and f"{chosen.get('path')}:{chosen.get('line')}",
                        "truth": f"{t['path']}:{t['name_line']}"},
            "notes": notes}


async def definition_joinset_spawn(ctx):
    t = ctx.truth["definitions"]["joinset_spawn"]
    notes = []
    a = await ctx.sess.call("symbol", {"symbol": "JoinSet::spawn", "body_lines": 0})
    defs = [] if a.is_error else a.sc.get("definitions") or []
    hits = [d for d in defs if scoring.definition_match(t, d.get("path"), d.get("line") or 0)]
    notes.append(f"{len(defs)} definitions" if not a.is_error else f"error {a.error_kind}")
    score = 0.0
    if hits:
        score = 1.0 if len(defs) == 1 else 0.5
    return {"score": score, "details": {"definitions": [f"{d.get('path')}:{d.get('line')}" for d in defs][:10],
                                        "truth": f"{t['path']}:{t['name_line']}"}, "notes": notes}


async def callees_poll_tick(ctx):
    t = ctx.truth["callees"]["poll_tick"]
    notes = []
    answers, ok = await relations_walk(ctx.sess, "Interval::poll_tick", "callees", t["target"]["path"], notes)
    nodes, _, _, _ = _relation_items(answers)
    truth = t["callees"]  # [path, start, name_line, label]
    named = [c for c in truth if any(p == c[0] and c[1] - 1 <= l <= c[2] + 1 for p, l, _ in nodes)]
    return {"score": (len(named) / len(truth) if truth else None) if ok else 0.0,
            "details": {"true_callees": len(truth), "nodes": len(nodes),
                        "missed": [f"{c[0]}:{c[2]} {c[3]}" for c in truth if c not in named]},
            "notes": notes}


async def outline_semaphore(ctx):
    t = ctx.truth["outline"]
    path = t["path"]
    notes = []
    answers = []
    sess = ctx.sess
    if sess.describes("symbol", "file's path") or sess.describes("symbol", "outline of a file"):
        notes.append("symbol on the file's path")
        a = await sess.call("symbol", {"symbol": path, "body_lines": 0})
        answers.append(a)
        while not a.is_error and (a.sc.get("page") or {}).get("more") and len(answers) < MAX_PAGES:
            a = await sess.call("symbol", {"symbol": path, "body_lines": 0, "cursor": a.sc["page"]["next_cursor"]})
            answers.append(a)
    elif sess.offers("find", "path"):
        notes.append("find * with a path")
        a = await sess.call("find", {"pattern": "*", "path": path})
        answers.append(a)
    elif sess.offers("query"):
        notes.append("no outline tool: query SQL")
        sql = ("SELECT s.name, s.qualified_name, s.kind, s.start_line, s.end_line FROM symbols s "
               "JOIN files f ON f.id = s.file_id WHERE f.path = ? ORDER BY s.start_line")
        a = await sess.call("query", {"sql": sql, "params": [path], "limit": 1000})
        answers.append(a)
        while not a.is_error and (a.sc.get("page") or {}).get("more") and len(answers) < MAX_PAGES:
            a = await sess.call("query", {"sql": sql, "params": [path], "limit": 1000,
                                          "cursor": a.sc["page"]["next_cursor"]})
            answers.append(a)
    found = []
    for a in answers:
        if not a.is_error:
            found += scoring.named_definitions(a.structured, path)
    ok = answers and not all(a.is_error for a in answers)
    return {"score": scoring.outline_recall(t["items"], found) if ok else 0.0,
            "details": {"true_items": len(t["items"]), "items_named": len(set(found)),
                        "missed": [f"{n}@{l}" for n, k, l in t["items"]
                                   if not any(n == fn and abs(l - fl) <= 1 for fn, fl in found)][:20]},
            "notes": notes}


async def search_msrv(ctx):
    t = ctx.truth["msrv"]
    notes = []
    args = {"pattern": t["pattern"]}
    a = await ctx.sess.call("search", args)
    answers = [a]
    while not a.is_error and (a.sc.get("page") or {}).get("more") and len(answers) < MAX_PAGES:
        a = await ctx.sess.call("search", dict(args, cursor=a.sc["page"]["next_cursor"]))
        answers.append(a)
    found = []
    for a in answers:
        if a.is_error:
            continue
        for h in a.sc.get("hits") or []:
            if h.get("path") is not None and h.get("line") is not None:
                found.append((h["path"], int(h["line"])))
    truth = [tuple(x) for x in t["lines"]]
    by_file = {}
    for p, _ in truth:
        by_file[p] = by_file.get(p, 0) + 1
    return {"score": scoring.recall(truth, found) if not answers[0].is_error else 0.0,
            "details": {"true_lines": len(truth), "hits": len(found),
                        "missed_by_file": {p: n - sum(1 for x in found if x[0] == p and x in truth)
                                           for p, n in sorted(by_file.items())
                                           if n - sum(1 for x in found if x[0] == p and x in truth)}},
            "notes": notes}


async def sql_mpsc_files(ctx):
    t = ctx.truth["mpsc_files"]
    notes = []
    if not ctx.sess.offers("query"):
        return {"score": 0.0, "details": {}, "notes": ["no query tool"]}
    desc = ctx.sess.tools["query"].description or ""
    m = re.search(r"files\(([^)]*)\)", desc)
    cols = [c.strip() for c in m.group(1).split(",")] if m else ["path"]
    want_lines = "lines" in cols
    sql = (f"SELECT path{', lines' if want_lines else ''} FROM files WHERE path LIKE ? ORDER BY path")
    a = await ctx.sess.call("query", {"sql": sql, "params": [t["dir"] + "%"]})
    rows = [] if a.is_error else scoring.query_rows(a.structured)
    got = {r.get("path"): r.get("lines") for r in rows}
    right = [p for p, n in t["files"] if p in got and got[p] == n]
    notes.append(f"{len(rows)} rows" if not a.is_error else f"error {a.error_kind}")
    return {"score": len(right) / len(t["files"]),
            "details": {"true_files": len(t["files"]), "rows": len(rows),
                        "wrong": {p: [got.get(p), n] for p, n in t["files"] if p not in right}},
            "notes": notes}


def _rename(tree, rel, old, new):
    """Renames a definition in the tree; returns the 1-based line of the new name."""
    full = os.path.join(tree, rel)
    with open(full) as f:
        src = f.read()
    if src.count(old) != 1:
        raise RuntimeError(f"{rel}: {old!r} occurs {src.count(old)} times")
    line = src[:src.index(old)].count("\n") + 1
    with open(full, "w") as f:
        f.write(src.replace(old, new))
    return line


async def _probe(sess, tool, args, right):
    """The first answer right after an edit, then the same question again until the answer
    is right or the deadline passes (these polls are not the agent's: not counted)."""
    first = await sess.call(tool, args)
    t0 = time.monotonic()
    res = {"first_right": right(first), "first_says_not_fresh": scoring.says_not_fresh(first.text, first.structured),
           "first_ms": round(first.ms, 1), "first_text": first.text[:300], "seconds_until_right": 0.0 if right(first) else None,
           "polls": 0}
    deadline = t0 + POLL_DEADLINE_S
    if not res["first_right"]:
        while time.monotonic() < deadline:
            a = await sess.call(tool, args, counted=False)
            res["polls"] += 1
            if right(a):
                res["seconds_until_right"] = round(time.monotonic() - t0 + first.ms / 1000, 2)
                break
            await _sleep_until(time.monotonic() + POLL_EVERY_S)
    return res


async def _sleep_until(when):
    import asyncio
    await asyncio.sleep(max(0.0, when - time.monotonic()))


async def freshness_rename(ctx):
    """Two edits, each asked about at once: a new name (find) and a name that no longer
    exists (symbol). An answer scores when it is right or clearly says the index lags."""
    notes = []
    sess = ctx.sess
    line_a = _rename(ctx.tree, "src/time/interval.rs", "pub fn reset_immediately(", "pub fn reset_immediately_now(")

    def right_a(a):
        return not a.is_error and any(s.get("name") == "reset_immediately_now" and s.get("path") == "src/time/interval.rs"
                                      and abs((s.get("line") or 0) - line_a) <= 1 for s in a.sc.get("symbols") or [])
    pa = await _probe(sess, "find", {"pattern": "reset_immediately_now"}, right_a)
    _rename(ctx.tree, "src/sync/rwlock.rs", "pub fn try_read(", "pub fn try_read_now(")

    def right_b(a):
        if a.is_error:
            return a.error_kind == "not_found"
        return not any(d.get("path") == "src/sync/rwlock.rs" and d.get("name") == "try_read"
                       for d in a.sc.get("definitions") or [])
    pb = await _probe(sess, "symbol", {"symbol": "RwLock::try_read", "body_lines": 0}, right_b)
    probes = {"new_name_find": pa, "old_name_symbol": pb}
    score = scoring.mean([1.0 if p["first_right"] or p["first_says_not_fresh"] else 0.0 for p in probes.values()])
    for k, p in probes.items():
        notes.append(f"{k}: first answer {'right' if p['first_right'] else 'flagged stale' if p['first_says_not_fresh'] else 'wrong, not flagged'}"
                     f"; right after {p['seconds_until_right']} s" if p["seconds_until_right"] is not None
                     else f"{k}: not right within {POLL_DEADLINE_S} s")
    return {"score": score, "details": probes, "notes": notes}


MEMORY_NAME = "notify-one-wakes-oldest"
MEMORY_BODY = ("Notify::notify_one must wake the oldest waiter first (FIFO); the mpsc channel's "
               "fairness relies on that order, so keep NotifyOneStrategy::Fifo there.")
MEMORY_LINK = "src/sync/notify.rs:Notify::notify_one"


def _hit(a, name):
    for h in a.sc.get("hits") or []:
        if h.get("name") == name:
            return h
    return None


async def memory_stale(ctx):
    notes = []
    sess = ctx.sess
    if not sess.offers("remember") or not sess.offers("recall"):
        return {"score": 0.0, "details": {}, "notes": ["no memory tools"]}
    args = {"name": MEMORY_NAME, "body": MEMORY_BODY, "type": "decision"}
    if sess.offers("remember", "links"):
        args["links"] = [MEMORY_LINK]
    r = await sess.call("remember", args)
    if r.is_error:
        return {"score": 0.0, "details": {"remember": r.text[:300]}, "notes": [f"remember: {r.error_kind}"]}
    full = os.path.join(ctx.tree, "src/sync/notify.rs")
    with open(full) as f:
        src = f.read()
    old = "    pub fn notify_one(&self) {\n        self.notify_with_strategy(NotifyOneStrategy::Fifo);"
    if src.count(old) != 1:
        raise RuntimeError("notify_one's body is not as expected")
    with open(full, "w") as f:
        f.write(src.replace(old, old.replace("Fifo", "Lifo")))
    a = await sess.call("recall", {"query": "notify_one oldest waiter FIFO order"})
    h = None if a.is_error else _hit(a, MEMORY_NAME)
    text_line = next((l for l in a.text.split("\n") if MEMORY_NAME in l), "")
    stale = h is not None and (h.get("stale") is True or "STALE" in text_line or "stale" in text_line.lower())
    notes.append("hit found" if h else "no hit")
    return {"score": 1.0 if stale else 0.0,
            "details": {"hit": h is not None, "stale": stale, "stale_reasons": (h or {}).get("stale_reasons")},
            "notes": notes}


async def memory_snippet(ctx):
    notes = []
    sess = ctx.sess
    if not sess.offers("recall"):
        return {"score": 0.0, "details": {}, "notes": ["no recall tool"]}
    a = await sess.call("recall", {"symbol": "Notify::notify_one"})
    h = None if a.is_error else _hit(a, MEMORY_NAME)
    if h is None:
        return {"score": 0.0, "details": {"hit": False}, "notes": ["no hit" if not a.is_error else f"error {a.error_kind}"]}
    shown = json.dumps(h, ensure_ascii=False) + "\n" + a.text
    has = scoring.body_snippet(MEMORY_BODY, shown)
    return {"score": 1.0 if has else 0.0, "details": {"hit": True, "snippet": h.get("snippet")}, "notes": notes}


TASKS = [
    Task("callers_add_permits", "Who calls tokio::sync::Semaphore::add_permits (src/sync/semaphore.rs)?",
         "recall of the true call sites (resolved or listed as unresolved) in the answers", callers_add_permits),
    Task("impact_sleep_reset", "What is impacted if Sleep::reset changes?",
         "recall of the true direct callers (functions) among the nodes and sites named", impact_sleep_reset),
    Task("impact_notify_file", "What depends on src/sync/notify.rs (depth 1)?",
         "recall of the true dependent files; characters", impact_notify_file),
    Task("ambiguous_acquire", "Who calls Semaphore::acquire (tokio::sync::Semaphore)?",
         "the right definition reached from an ambiguous name; recall of its true call sites", ambiguous_acquire),
    Task("partial_path_spawn_blocking", "Where is task::spawn_blocking defined?",
         "a Rust partial path resolved to the right definition (0.5: listed, not chosen)", partial_path_spawn_blocking),
    Task("definition_joinset_spawn", "Where is JoinSet::spawn defined?",
         "the right definition, alone (0.5: among others)", definition_joinset_spawn),
    Task("callees_poll_tick", "What does Interval::poll_tick call?",
         "recall of the true callees (crate functions)", callees_poll_tick),
    Task("outline_semaphore", "What does src/sync/semaphore.rs define?",
         "recall of the file's items (name and line)", outline_semaphore),
    Task("search_msrv", "Where is MSRV mentioned?",
         "recall of the lines of every text file that contain MSRV", search_msrv),
    Task("sql_mpsc_files", "Which files are under src/sync/mpsc/ and how long are they (query)?",
         "share of the files with their exact line count", sql_mpsc_files),
    Task("freshness_rename", "Right after renaming a function: find the new name; symbol the old one",
         "each first answer right or saying the index lags (mean of 2); seconds until right", freshness_rename),
    Task("memory_stale", "Remember a decision linked to Notify::notify_one, edit it, recall",
         "the recalled hit says its code changed", memory_stale),
    Task("memory_snippet", "Recall the memories of Notify::notify_one",
         "the hit shows a snippet of its body", memory_snippet),
]

"""What the evaluation reads out of MCP answers, and how it scores them. Pure functions
over an answer's text and structured content (what a host shows an agent), no I/O:
python3 -m unittest agent_eval.test_scoring (from scripts/) tests them."""
import json
import re

# `path/to/file.rs:LINE` (optionally `:COL`), as answers' texts write locations.
LOCATION = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]+):(\d+)(?::\d+)?")
# A candidate line of an ambiguity's text: `  path:LINE kind Qualified::name  signature`.
CANDIDATE = re.compile(r"^\s+((?:[\w.-]+/)*[\w.-]+\.\w+):(\d+)\s+(\w+)\s+(\S+)")
# The bracketed line a text ends with when the index is not fresh.
FRESHNESS_LINE = re.compile(r"^\[[^\]\n]*(?:changed|stale|indexing)[^\]\n]*\]$", re.M)


def answer_chars(text, structured):
    """Characters of one answer: its text plus its structured content as compact JSON."""
    n = len(text or "")
    if structured is not None:
        n += len(json.dumps(structured, separators=(",", ":"), ensure_ascii=False))
    return n


def error_kind(text):
    """`ambiguous`, `not_found`, ... from an error's text (`KIND: message`)."""
    m = re.match(r"^([a-z_]+): ", text or "")
    return m.group(1) if m else None


def parse_site(s):
    """`path:LINE` (a relation's `site`) as (path, line), else None."""
    m = re.match(r"^(.*):(\d+)$", s or "")
    return (m.group(1), int(m.group(2))) if m else None


# ------------------------------------------------------------------ reading answers

def candidates(text, structured):
    """The definitions an ambiguous answer offers: [{"path", "line", "kind", "qualified_name",
    "target"?}], from structured `candidates` when the answer has them, else from the text's
    candidate lines. Empty when the answer lists none."""
    out = []
    for c in (structured or {}).get("candidates") or []:
        if isinstance(c, dict):
            out.append({"path": c.get("path"), "line": c.get("line"), "kind": c.get("kind"),
                        "qualified_name": c.get("qualified_name") or c.get("name"), "target": c.get("target")})
    if out:
        return out
    for line in (text or "").split("\n"):
        m = CANDIDATE.match(line)
        if m:
            out.append({"path": m.group(1), "line": int(m.group(2)), "kind": m.group(3),
                        "qualified_name": m.group(4), "target": None})
    return out


def relation_items(structured):
    """Every definition a relations answer reaches and every call site it names:
    (nodes [(path, line, depth)], sites [(path, line)], unresolved sites [(path, line)],
    groups [path])."""
    nodes, sites, unresolved, groups = [], [], [], []
    sc = structured or {}
    for r in sc.get("relations") or []:
        if r.get("path") is not None and r.get("line") is not None:
            nodes.append((r["path"], int(r["line"]), r.get("depth")))
        s = parse_site(r.get("site"))
        if s:
            sites.append(s)
    un = sc.get("unresolved") or {}
    for s in un.get("sites") or []:
        if s.get("path") is not None and s.get("line") is not None:
            unresolved.append((s["path"], int(s["line"])))
    for g in sc.get("groups") or []:
        if g.get("path"):
            groups.append(g["path"])
    return nodes, sites, unresolved, groups


def text_locations(text):
    """Every `path:LINE` a text names."""
    return [(m.group(1), int(m.group(2))) for m in LOCATION.finditer(text or "")]


def named_definitions(structured, path=None):
    """(name, line) of every definition-like object in an answer (a find's `symbols`, a
    symbol's `definitions` and their `members`, an outline's entries, a query's rows with
    `name` and `start_line` columns), keeping those of `path` (or without a path)."""
    out = []

    def walk(x, inherited_path):
        if isinstance(x, dict):
            p = x.get("path", inherited_path)
            name = x.get("name")
            line = x.get("line", x.get("start_line"))
            if isinstance(name, str) and isinstance(line, int) and (path is None or p in (None, path)):
                out.append((name, line))
            for v in x.values():
                walk(v, p)
        elif isinstance(x, list):
            for v in x:
                walk(v, inherited_path)
    walk(structured, None)
    sc = structured or {}
    cols = sc.get("columns")
    if isinstance(cols, list) and "name" in cols and "start_line" in cols:
        i, j = cols.index("name"), cols.index("start_line")
        k = cols.index("path") if "path" in cols else None
        for row in sc.get("rows") or []:
            if isinstance(row, list) and len(row) > max(i, j) and (k is None or path is None or row[k] == path):
                out.append((row[i], row[j]))
    return out


def query_rows(structured):
    """A query answer's rows as dicts by column name."""
    sc = structured or {}
    cols = sc.get("columns") or []
    out = []
    for row in sc.get("rows") or []:
        if isinstance(row, list):
            out.append(dict(zip(cols, row)))
        elif isinstance(row, dict):
            out.append(row)
    return out


def says_not_fresh(text, structured):
    """Whether an answer clearly says the index lags the files: its `index` (structured,
    or an error's text) names changed or stale files or a run writing, or its text ends
    with the bracketed freshness line."""
    idx = (structured or {}).get("index") or {}
    if (idx.get("changed_files") or 0) > 0 or (idx.get("stale_files") or 0) > 0 or idx.get("state") == "indexing":
        return True
    return bool(FRESHNESS_LINE.search(text or ""))


# ------------------------------------------------------------------ scores

def recall(truth, found):
    truth = set(map(tuple, truth))
    if not truth:
        return None
    return len(truth & set(map(tuple, found))) / len(truth)


def precision(truth, found, scored=None):
    """Of the items found (those `scored` says count, default all), the share that are true."""
    found = {tuple(x) for x in found if scored is None or scored(x)}
    if not found:
        return None
    return len(found & set(map(tuple, truth))) / len(found)


def in_function(item, fn):
    """An answer's (path, line) names the function fn = (path, start, name_line, end, ..)."""
    return item[0] == fn[0] and fn[1] - 1 <= item[1] <= fn[3]


def function_recall(truth_fns, items):
    """Share of the true functions that some item (a reached node or a site) lies in."""
    if not truth_fns:
        return None
    return sum(1 for f in truth_fns if any(in_function(i, f) for i in items)) / len(truth_fns)


def definition_match(truth, path, line):
    """An answer's (path, line) names the definition truth = {path, start, name_line}."""
    return path == truth["path"] and truth["start"] - 1 <= line <= truth["name_line"] + 1


def outline_recall(truth_items, found):
    """Share of the true items [name, kind, name_line] named with their line (±1)."""
    if not truth_items:
        return None
    have = {}
    for name, line in found:
        have.setdefault(name, set()).add(line)
    return sum(1 for name, _, line in truth_items
               if any(abs(line - x) <= 1 for x in have.get(name, ()))) / len(truth_items)


def body_snippet(body, text, min_run=24):
    """Whether `text` holds a run of at least `min_run` characters of `body`."""
    body, text = body or "", text or ""
    if len(body) < min_run:
        return bool(body) and body in text
    return any(body[i:i + min_run] in text for i in range(0, len(body) - min_run + 1))


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None

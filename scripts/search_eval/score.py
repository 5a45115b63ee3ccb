"""Scoring: every mode ranks code units for a query; the query's rank is the rank of the
first unit that is its target function.

A hit (path, line) belongs to the innermost function unit of the stripped tree whose
line span holds it (every function-like definition with a body, documented or not);
a line outside every function belongs to its file's top-level unit. Hits are deduped
by the unit they fall in, in the order the mode ranks them; rank = 1 + the number of
distinct units ranked before the first hit in the target. Metrics: recall@1/5/10 (the
share of queries with rank <= k) and MRR (mean of 1/rank, 0 when the target is not in
the first 100 units).

Modes:
* `loci-text`: today's `loci search`, used as an agent would with a sentence: the
  query's content words (lower-cased, stop words and words under 3 letters dropped) as
  one case-insensitive regex alternation `w1|w2|...` (`loci search -e -i --source-only
  --json`, every page up to 50,000 hits); hits grouped by the function they fall in
  (hits outside every function are left out: they name no function); functions ranked
  by how many distinct query words their hit lines hold (more first), ties by the first
  hit's order in loci's answer.
* `bm25`: computed here, not by loci: Okapi BM25 (k1 1.2, b 0.75) over every function
  unit's stripped text (its name split into words plus its body lines), the same
  tokenizer on both sides (identifiers split at `_` and lower-to-upper case changes,
  lower-cased, stop words dropped).
* `loci-fts`, `meaning`, `hybrid`: `loci search --meaning TEXT --json` with
  `--text-only` (full text over loci's code units alone), `--meaning-only` (vectors
  alone) and neither (the fused ranking); run only when `loci search --help` lists
  those flags, else "not available".
"""
import json
import math
import os
import re
import subprocess
from collections import Counter, defaultdict

STOP = set("""a an the and or not no nor of to in on at by for from with without into onto over under
as is are was were be been being it its this that these those there here which who whom whose what when
where why how if then else than so such can could may might must shall should will would do does did done
has have had having i we you he she they them their our your my me us his her him also any all each every
some most more other only own same just very via per e g ie eg etc true false none null nil returns return
get gets set sets given whether one two use used uses using new""".split())

MAX_RANK = 100
MAX_HITS = 50000


def split_ident(tok):
    parts = []
    for p in re.split(r"[_\W]+", tok):
        parts += re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+", p)
    return [x.lower() for x in parts if x]


def tokens(text):
    out = []
    for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        out += [w for w in split_ident(t) if len(w) >= 2 and w not in STOP]
    return out


def content_words(query):
    """The query's words for the regex: lower-cased, >= 3 letters, not stop words, in order."""
    seen = []
    for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", query):
        w = w.lower()
        if len(w) >= 3 and w not in STOP and w not in seen:
            seen.append(w)
    return seen


class Tree:
    """The function units of one stripped tree, for hit-to-unit lookup and BM25."""

    def __init__(self, root, units):
        self.root = root
        self.by_path = defaultdict(list)
        for path, qual, start, end in units:
            self.by_path[path].append((start, end, qual))
        for v in self.by_path.values():
            v.sort()
        self._bm25 = None

    def unit_of(self, path, line):
        best = None
        for start, end, qual in self.by_path.get(path, ()):
            if start > line:
                break
            if end >= line and (best is None or end - start < best[1] - best[0]):
                best = (start, end, qual)
        return (path, best[0], best[2]) if best else (path, 0, "<top>")

    def bm25_index(self):
        if self._bm25 is None:
            docs = []
            for path, units in sorted(self.by_path.items()):
                try:
                    with open(os.path.join(self.root, path), encoding="utf-8") as f:
                        lines = f.read().splitlines()
                except OSError:
                    continue
                for start, end, qual in units:
                    body = "\n".join(lines[start - 1:end])
                    docs.append(((path, start, qual), Counter(tokens(qual) + tokens(body))))
            df = Counter()
            for _, tf in docs:
                df.update(tf.keys())
            avg = sum(sum(tf.values()) for _, tf in docs) / max(1, len(docs))
            self._bm25 = (docs, df, avg)
        return self._bm25

    def bm25(self, query, k1=1.2, b=0.75):
        docs, df, avg = self.bm25_index()
        n = len(docs)
        q = set(tokens(query))
        scored = []
        for i, (key, tf) in enumerate(docs):
            s = 0.0
            dl = sum(tf.values())
            for w in q:
                f = tf.get(w)
                if f:
                    idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avg))
            if s > 0:
                scored.append((-s, i, key))
        scored.sort()
        return [k for _, _, k in scored[:MAX_RANK]]


def rank_of(units, target):
    """1-based rank of the target among distinct units, else None."""
    seen = []
    for u in units:
        if u in seen:
            continue
        seen.append(u)
        if u[0] == target["path"] and u[1] == target["start"]:
            return len(seen)
        if len(seen) >= MAX_RANK:
            break
    return None


# ---------------------------------------------------------------- loci

def loci_json(loci, env, args, cwd):
    r = subprocess.run([loci] + args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        return json.loads(r.stdout) if r.stdout.strip() else {"error": r.stderr[-500:], "exit": r.returncode}
    except json.JSONDecodeError:
        return {"error": r.stdout[-500:], "exit": r.returncode}


def loci_hits(loci, env, tree_root, args):
    """Every hit of a `loci search` (pages followed up to MAX_HITS) and whether it was cut."""
    hits, cursor = [], None
    while True:
        page_args = list(args) + ["--limit", "10000"] + (["--cursor", cursor] if cursor else [])
        out = loci_json(loci, env, page_args, tree_root)
        if "hits" not in out:
            raise RuntimeError(f"loci {' '.join(args[:3])}...: {out}")
        hits += out["hits"]
        cursor = out.get("next_cursor")
        if not cursor or not out.get("truncated", bool(cursor)):
            return hits, False
        if len(hits) >= MAX_HITS:
            return hits, True


def loci_text_rank(loci, env, tree, query):
    words = content_words(query)
    if not words:
        return []
    pattern = "|".join(re.escape(w) for w in words)
    hits, _ = loci_hits(loci, env, tree.root, ["search", "-e", "-i", "--source-only", "--json", pattern])
    matched = {}
    order = []
    for h in hits:
        u = tree.unit_of(h["path"], h["line"])
        if u[2] == "<top>":  # not inside a function: no function to group it under
            continue
        if u not in matched:
            matched[u] = set()
            order.append(u)
        text = h.get("text", "").lower()
        matched[u].update(w for w in words if w in text)
    pos = {u: i for i, u in enumerate(order)}
    return sorted(order, key=lambda u: (-len(matched[u]), pos[u]))


def meaning_modes(loci, env):
    """Which of `loci-fts` / `meaning` / `hybrid` this loci supports, by its `search --help`."""
    r = subprocess.run([loci, "search", "--help"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    h = r.stdout
    out = {}
    if "--meaning" in h and "--meaning-only" in h:
        out["meaning"] = ["--meaning", "--meaning-only"]
        out["hybrid"] = ["--meaning"]
        if "--text-only" in h:
            out["loci-fts"] = ["--meaning", "--text-only"]
    return out


def loci_meaning_rank(loci, env, tree, query, flags):
    args = ["search"] + flags[:1] + [query] + flags[1:] + ["--json", "--limit", str(MAX_RANK)]
    out = loci_json(loci, env, args, tree.root)
    if "hits" not in out:
        raise RuntimeError(f"loci search --meaning: {out}")
    return [tree.unit_of(h["path"], h["line"]) for h in out["hits"]]


# ---------------------------------------------------------------- metrics

def metrics(ranks):
    n = len(ranks)
    if not n:
        return {"n": 0}
    def at(k):
        return sum(1 for r in ranks if r is not None and r <= k) / n
    return {"n": n, "r1": at(1), "r5": at(5), "r10": at(10),
            "mrr": sum(1.0 / r for r in ranks if r is not None) / n}

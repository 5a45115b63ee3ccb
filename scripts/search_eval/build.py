"""Builds the set: draws trees by seed, writes their doc-stripped copies, collects the
queries (first sentences of doc comments) with their answers, caps each tree, splits
the queries into a tune and a held-out half by hash.

Layout of OUT/set/: `trees/LANG/TREE/...` (the stripped copies loci indexes),
`set.json` (seed, versions, trees with every function unit, queries with answers and
half) and `queries.jsonl` (one query a line, the same records).
"""
import hashlib
import json
import os
import random
import re
import shutil
import sys

from accuracy_oracle import rust_thir
from accuracy_oracle.oracle import ensure_pip_target, fetch_npm, sh

from . import extract, pools
from .sentences import normalized

LANGS = ("py", "rust", "ts", "go")
PER_TREE = 50        # queries kept from one tree at most (a random sample by seed)
MIN_PER_TREE = 15    # a tree with fewer usable queries is passed over
PER_LANG = 300       # trees are drawn until the language holds at least this many
MAX_FILES = 400      # a tree with more source files is passed over
SKIP_DIRS = {"node_modules", "dist", "build", "umd", "esm", "cjs", "es", "lib-esm", "types", "test", "tests",
             "__tests__", "spec", "bench", "benches", "benchmark", "examples", "example", "docs", "coverage",
             "fixtures", "testdata", "idle_test", "__pycache__", "vendor"}
PYLIB_REQS = ("tree-sitter==0.26.1", "tree-sitter-rust==0.24.2", "tree-sitter-javascript==0.25.0",
              "tree-sitter-typescript==0.23.2", "tree-sitter-go==0.25.0")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def ensure_pylib(cache):
    """tree-sitter and its grammars (PyPI), installed once into CACHE/pylib."""
    pylib = ensure_pip_target(cache, "pylib", "tree_sitter_go", PYLIB_REQS)
    extract.set_pylib(pylib)
    return pylib


def half_of(lang, tree, path, qual):
    h = hashlib.sha256(f"{lang}/{tree}/{path}/{qual}".encode()).digest()
    return "tune" if h[0] % 2 == 0 else "heldout"


# ---------------------------------------------------------------- sources

def _walk(root, keep, recursive=True):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if recursive and x not in SKIP_DIRS and not x.startswith("."))
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(d, f), root)
            if keep(rel):
                yield rel


def source_files(lang, spec, cache):
    """(root, relative source paths) of one pool entry, or raises RuntimeError."""
    if lang == "py":
        root = os.path.join(pools.PY_ROOT, spec)
        return root, list(_walk(root, lambda r: r.endswith(".py")))
    if lang == "go":
        root = os.path.join(pools.GO_ROOT, spec)
        return root, list(_walk(root, lambda r: r.endswith(".go") and not r.endswith("_test.go"), recursive=False))
    if lang == "rust":
        root = rust_thir.fetch(spec, cache)
        return root, ["src/" + r for r in _walk(os.path.join(root, "src"), lambda r: r.endswith(".rs"))]
    pkg = fetch_npm(cache, spec)
    ts = list(_walk(pkg, lambda r: re.search(r"\.(ts|tsx|mts|cts)$", r) and not re.search(r"\.d\.[mc]?ts$", r)))
    if len(ts) >= 10:
        return pkg, ts
    return pkg, list(_walk(pkg, lambda r: re.search(r"\.(js|mjs|cjs|jsx)$", r) and ".min." not in r))


def unique_queries(cands):
    """The candidates whose query (case and spacing aside) no other candidate of the same
    tree has: a query with two answers is dropped whole."""
    counts = {}
    for c in cands:
        counts[normalized(c["query"])] = counts.get(normalized(c["query"]), 0) + 1
    return [c for c in cands if counts[normalized(c["query"])] == 1]


def tree_name(spec):
    return spec.replace("/", "+")


# ---------------------------------------------------------------- one tree

def build_tree(lang, spec, seed, cache, trees_dir):
    """Writes the stripped tree; returns (tree record, its queries) or (None, why)."""
    root, files = source_files(lang, spec, cache)
    if not files:
        return None, "no source files"
    if len(files) > MAX_FILES:
        return None, f"{len(files)} source files (> {MAX_FILES})"
    name = tree_name(spec)
    dest = os.path.join(trees_dir, lang, name)
    shutil.rmtree(dest, ignore_errors=True)
    units_out, cands, skipped, dropped, texts = [], [], {}, {}, []
    for rel in files:
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        dialect = extract.dialect_of(rel)
        try:
            stripped, units = extract.extract(dialect, data)
        except extract.Skip as e:
            skipped[rel] = str(e)
            continue
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(stripped)
        texts.append(stripped.decode("utf-8"))
        lines = texts[-1].splitlines()
        for u in units:
            units_out.append([rel, u["qual"], u["start"], u["end"]])
        for u, q, why in extract.targets(lang, units, lines):
            if q is None:
                dropped[why] = dropped.get(why, 0) + 1
                continue
            cands.append({"lang": lang, "tree": name, "path": rel, "qual": u["qual"], "name": u["name"],
                          "start": u["start"], "end": u["end"], "query": q})
    if not units_out:
        shutil.rmtree(dest, ignore_errors=True)
        return None, "no function units"
    unique = unique_queries(cands)
    dropped["duplicate in tree"] = len(cands) - len(unique)
    if len(unique) < MIN_PER_TREE:
        shutil.rmtree(dest, ignore_errors=True)
        return None, f"{len(unique)} usable queries (< {MIN_PER_TREE})"
    rng = random.Random(f"{seed}:{lang}:{name}")
    kept = sorted(rng.sample(unique, min(PER_TREE, len(unique))), key=lambda c: (c["path"], c["start"]))
    for c in kept:
        c["half"] = half_of(lang, name, c["path"], c["qual"])
        c["id"] = f"{lang}/{name}/{c['path']}:{c['start']}:{c['qual']}"
    # A check, not a filter: how many kept queries still appear word for word in the
    # stripped tree (in a plain comment, a string or a message), reported in set.json.
    flat = re.sub(r"\s+", " ", " ".join(texts)).lower()
    verbatim = sum(1 for c in kept if normalized(c["query"]) in flat)
    rec = {"lang": lang, "tree": name, "verbatim_in_tree": verbatim, "spec": spec, "files": len(files) - len(skipped),
           "skipped_files": skipped, "units": units_out, "candidates": len(unique), "kept": len(kept),
           "dropped": dropped}
    return rec, kept


def build(seed, out, cache, langs=LANGS, per_lang=PER_LANG):
    ensure_pylib(cache)
    set_dir = os.path.join(out, "set")
    trees_dir = os.path.join(set_dir, "trees")
    shutil.rmtree(set_dir, ignore_errors=True)
    os.makedirs(trees_dir)
    trees, queries, passed = [], [], []
    for lang in langs:
        pool = pools.pool(lang)
        random.Random(f"{seed}:{lang}").shuffle(pool)
        have = 0
        for spec in pool:
            if have >= per_lang:
                break
            try:
                rec, kept = build_tree(lang, spec, seed, cache, trees_dir)
            except Exception as e:  # a fetch that fails: passed over, said so
                rec, kept = None, f"error: {str(e)[:200]}"
            if rec is None:
                passed.append({"lang": lang, "spec": spec, "why": kept})
                log(f"  {lang} {spec}: passed over ({kept})")
                continue
            trees.append(rec)
            queries.extend(kept)
            have += len(kept)
            log(f"  {lang} {spec}: {len(kept)} queries of {rec['candidates']} ({rec['files']} files)")
    record = {"seed": seed, "versions": versions(cache), "rules": rules(), "trees": trees, "passed_over": passed,
              "queries": queries}
    with open(os.path.join(set_dir, "set.json"), "w") as f:
        json.dump(record, f)
    with open(os.path.join(set_dir, "queries.jsonl"), "w") as f:
        for q in queries:
            f.write(json.dumps(q, sort_keys=True) + "\n")
    return record


def rules():
    return {"per_tree": PER_TREE, "min_per_tree": MIN_PER_TREE, "per_lang": PER_LANG, "max_files": MAX_FILES}


def versions(cache):
    out = {"python (ast)": sys.version.split()[0], "tree-sitter": list(PYLIB_REQS)}
    for pkg in ("libpython3.11-stdlib", "golang-1.19-src"):
        try:
            out[pkg] = sh(["dpkg-query", "-W", "-f", "${Version}", pkg]).strip()
        except Exception:
            out[pkg] = "not installed"
    return out


def set_digest(set_dir):
    with open(os.path.join(set_dir, "queries.jsonl"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()

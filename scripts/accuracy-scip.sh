#!/usr/bin/env bash
# Callers against a precise indexer: scip-typescript (npm @sourcegraph/scip-typescript)
# on rxjs's TypeScript sources, or scip-python (npm @sourcegraph/scip-python) on a pure
# Python package from PyPI (not the standard library: pyright resolves `email.parser` to
# its own stubs of the standard library, not to the files indexed). Reports how many of SCIP's call references loci finds as
# CALLS edges (same site line, target definition holding SCIP's definition line), and how
# many of loci's `exact`/`import` (and, apart, `name`) CALLS edges SCIP confirms (a SCIP
# reference at that line to that definition). A SCIP call is a reference to a function or
# method (`().` symbols) followed by `(`; references into files outside the tree (the
# TypeScript or Python library) are left out.
#
# Usage: scripts/accuracy-scip.sh [--loci BIN] [--keep DIR] typescript|python [PYPI_PACKAGE==VERSION]
#   PYPI_PACKAGE (default requests==2.32.3) is downloaded with pip (its wheel, no deps).
#   --keep DIR keeps the tree, both indexes and every miss and unconfirmed edge, each
#   with its source line (missed.txt, unconfirmed.txt), in DIR for reading.
# Tools and sources are installed into $LOCI_ACCURACY_CACHE (default ~/.cache/loci-accuracy).
set -euo pipefail
cd "$(dirname "$0")/.."
loci=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --loci) loci=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) break ;;
  esac
done
lang=${1:?usage: scripts/accuracy-scip.sh [--loci BIN] typescript|python [PACKAGE]}
package=${2:-requests==2.32.3}
if [ -z "$loci" ]; then
  if [ -x target/release/loci ]; then loci=target/release/loci; else loci=target/debug/loci; fi
fi
loci=$(realpath "$loci")
here=$(pwd)
cache=${LOCI_ACCURACY_CACHE:-$HOME/.cache/loci-accuracy}
tools=$cache/scip-tools
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm_install() { # dir, packages...
  local dir=$1; shift
  mkdir -p "$dir"
  npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dir" "$@" >/dev/null
}
[ -f "$tools/node_modules/@sourcegraph/scip-typescript/dist/src/scip.js" ] ||
  npm_install "$tools" @sourcegraph/scip-typescript@0.4.0 @sourcegraph/scip-python@0.6.6
scipjs=$tools/node_modules/@sourcegraph/scip-typescript/dist/src/scip.js
case "$lang" in
  typescript)
    src=$cache/npm/rxjs@7.8.1/node_modules/rxjs/src
    [ -d "$src" ] || npm_install "$cache/npm/rxjs@7.8.1" rxjs@7.8.1
    tree=$work/tree
    cp -r "$src" "$tree"
    # rxjs's own tsconfig extends one outside src/: a self-contained one, same paths.
    printf '%s\n' '{ "compilerOptions": { "target": "es2017", "lib": ["es2018", "dom"],' \
      '"noEmit": true, "moduleResolution": "node", "baseUrl": ".",' \
      '"paths": {"rxjs": ["./"], "rxjs/*": ["./*"]} }, "include": ["./**/*.ts"] }' >"$tree/tsconfig.json"
    (cd "$tree" && node "$tools/node_modules/@sourcegraph/scip-typescript/dist/src/main.js" \
      index --output "$work/index.scip" >/dev/null)
    ;;
  python)
    wheels=$cache/pypi/$package
    [ -n "$(ls "$wheels"/*.whl 2>/dev/null)" ] ||
      python3 -m pip download --quiet --no-deps --only-binary :all: -d "$wheels" "$package"
    tree=$work/tree
    mkdir -p "$tree"
    python3 -m zipfile -e "$(ls "$wheels"/*.whl | head -1)" "$tree"
    rm -rf "$tree"/*.dist-info
    (cd "$tree" && node "$tools/node_modules/@sourcegraph/scip-python/index.js" index . \
      --project-name "${package%%=*}" --project-version 0 --output "$work/index.scip" \
      >/dev/null 2>&1)
    ;;
  *) echo "accuracy-scip: unknown language $lang (typescript or python)" >&2; exit 2 ;;
esac
node "$here/scripts/scip-dump.js" "$scipjs" "$work/index.scip" >"$work/scip.json"
export LOCI_HOME=$work/home
"$loci" index --index-path "$work/index.db" "$tree" >/dev/null
"$loci" query --json --max-rows 1000000 --timeout 60s -w "$tree" \
  "SELECT sf.path, e.line, df.path, d.start_line, d.end_line, e.confidence, d.kind
   FROM edges e JOIN files sf ON sf.id = e.src_file
   JOIN symbols d ON d.id = e.dst_symbol JOIN files df ON df.id = d.file_id
   WHERE e.kind = 'CALLS' AND d.kind IN ('function', 'method', 'class')" >"$work/loci.json"
python3 - "$work/scip.json" "$work/loci.json" "$tree" "$lang" "$work" <<'PY'
import json, os, re, sys
docs = json.load(open(sys.argv[1]))
edges = [tuple(r) for r in json.load(open(sys.argv[2]))["rows"]]
tree, lang = sys.argv[3], sys.argv[4]
def key(path, sym):
    # `local N` symbols are numbered per file.
    return (path, sym) if sym.startswith("local ") else sym
def is_class(sym):
    return sym.endswith("#")
def is_callable(sym):
    return sym.endswith(").")
def is_constructor(sym):
    return "`<constructor>`()." in sym or sym.endswith("#__init__().")
defs = {}  # symbol -> (path, every definition line: TypeScript overloads have several)
for d in docs:
    for line, col, end, sym, roles in d["occ"]:
        if roles & 1:
            defs.setdefault(key(d["path"], sym), (d["path"], set()))[1].add(line + 1)
# A call is a reference followed by `(`: to a function or method, or a construction —
# TypeScript's `new X(..)` (to X's constructor, or to X when it declares none) and
# Python's `X(..)` (to the class). A constructor call is found by a CALLS edge to the
# class that holds it (loci links `new X()` to X), a function's only by one to the
# function. SCIP confirms one of loci's edges when it has, at that line, a reference of
# the same sort (a function or method for one, the class or its constructor for a class)
# whose definition the edge's target holds.
calls, refs = set(), {}
for d in docs:
    try:
        lines = open(os.path.join(tree, d["path"]), encoding="utf-8", errors="replace").read().split("\n")
    except OSError:
        continue
    for line, col, end, sym, roles in d["occ"]:
        k = key(d["path"], sym)
        if roles & 1 or k not in defs:
            continue
        dpath, dlines = defs[k]
        text = lines[line] if line < len(lines) else ""
        rest = re.sub(r"^<[^()]*>", "", text[end:].lstrip()).lstrip()  # f<T>(..)
        constructs = is_constructor(sym) or (
            is_class(sym) and (lang == "python" or re.search(r"\bnew\s+$", text[:col]) is not None))
        # A local's kind is unknown (`const emit = () => ..`), and a term may hold a
        # function (`timeoutProvider.setTimeout`): either confirms a function.
        local = sym.startswith("local ")
        term = sym.endswith(".")
        sort = "class" if constructs else "callable" if term or local else None
        if sort is None:
            continue
        refs.setdefault((d["path"], line + 1, dpath, sort), set()).update(dlines)
        if rest.startswith("(") and (constructs or is_callable(sym)):
            calls.add((d["path"], line + 1, dpath, frozenset(dlines), sort))
def sort_of(kind):
    return "class" if kind == "class" else "callable"
by_site = {}
for path, line, dpath, start, end, conf, kind in edges:
    by_site.setdefault((path, line, dpath, sort_of(kind)), []).append((start, end, conf))
def is_found(c):
    path, line, dpath, dlines, sort = c
    targets = by_site.get((path, line, dpath, sort), [])
    if sort == "class":  # the constructor itself, when loci links it
        targets = targets + by_site.get((path, line, dpath, "callable"), [])
    return any(s <= l <= e for s, e, _ in targets for l in dlines)
found = [c for c in calls if is_found(c)]
missed = sorted(set(calls) - set(found), key=lambda c: (c[0], c[1]))
def confirmed(path, line, dpath, start, end, kind):
    return any(start <= l <= end for l in refs.get((path, line, dpath, sort_of(kind)), ()))
stats = {}
for path, line, dpath, start, end, conf, kind in edges:
    k = "exact/import" if conf in ("exact", "import") else "name"
    t = stats.setdefault(k, [0, 0, []])
    t[0] += 1
    if confirmed(path, line, dpath, start, end, kind):
        t[1] += 1
    elif len(t[2]) < 10:
        t[2].append(f"{path}:{line} -> {dpath}:{start}")
work = sys.argv[5]
def source(path, line):
    try:
        return open(os.path.join(tree, path), encoding="utf-8", errors="replace").read().split("\n")[line - 1].strip()
    except (OSError, IndexError):
        return ""
with open(os.path.join(work, "missed.txt"), "w") as out:
    for m in missed:
        out.write(f"{m[0]}:{m[1]} -> {m[2]}:{min(m[3])}\t{source(m[0], m[1])}\n")
with open(os.path.join(work, "unconfirmed.txt"), "w") as out:
    for path, line, dpath, start, end, conf, kind in sorted(edges):
        if not confirmed(path, line, dpath, start, end, kind):
            out.write(f"{conf} {path}:{line} -> {dpath}:{start}\t{source(path, line)}\n")
constructions = sum(1 for c in calls if c[4] == "class")
print(f"{lang}: {len(docs)} files; SCIP call references into the tree: {len(calls)} ({constructions} constructions)")
print(f"  found by loci: {len(found)} ({100.0 * len(found) / max(1, len(calls)):.1f}%)")
for m in missed[:15]:
    print(f"    missed {m[0]}:{m[1]} -> {m[2]}:{min(m[3])}")
for k, (n, ok, bad) in sorted(stats.items()):
    print(f"  loci {k} CALLS edges: {n}, confirmed by SCIP: {ok} ({100.0 * ok / max(1, n):.1f}%)")
    for b in bad:
        print(f"    unconfirmed {b}")
PY
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  rm -rf "$keep/tree"
  cp -r "$work"/. "$keep"/
fi

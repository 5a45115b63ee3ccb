#!/usr/bin/env bash
# The held-out evaluation set for search by meaning (issue #33, item 4) and the scores
# of today's search on it. Builds, from a seed, doc-stripped copies of Python, Rust,
# TypeScript/JavaScript and Go trees with CodeSearchNet-style queries (the first
# sentence of each function's doc comment, whose answer is the function), indexes each
# tree with loci and scores `loci search` (a word-alternation regex, as an agent would
# use it), a BM25 reference computed here, and `loci search --meaning` when the binary
# has it. See docs/search.md.
#
# Usage: scripts/search-eval.sh [--loci BIN] [--seed N] [--out DIR] [--langs py,rust,ts,go]
#          [--reuse-set] [--modes loci-text,bm25,meaning,hybrid]
#   --out DIR (default target/search-eval) gets set/ (the stripped trees, set.json,
#   queries.jsonl), results.json, results.md and tune-misses.txt (the tune half's
#   misses only; held-out queries are never printed).
# Needs python3 (3.11), Debian's libpython3.11-stdlib and golang-1.19-src
# (apt-get install golang-1.19-src), npm (reaching the npm registry) and cargo (for a
# crate missing from ~/.cargo/registry). tree-sitter and its grammars are installed
# from PyPI into $LOCI_SEARCH_EVAL_CACHE (default ~/.cache/loci-search-eval).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
loci=""
out=""
seed=33
while [ $# -gt 0 ]; do
  case "$1" in
    --loci) loci=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ -z "$loci" ]; then
  if [ -x target/release/loci ]; then loci=target/release/loci; else loci=target/debug/loci; fi
fi
out=${out:-target/search-eval}
mkdir -p "$out"
loci=$(realpath "$loci")
out=$(realpath "$out")
cd scripts
exec python3 -m search_eval.run --loci "$loci" --seed "$seed" --out "$out" "${args[@]}"

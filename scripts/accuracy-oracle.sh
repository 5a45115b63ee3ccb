#!/usr/bin/env bash
# Callers against precise oracles (issue #29): scores `loci callers --depth 1 --json`
# against callers derived from precise indexers (scip-typescript, scip-python, rustc's
# THIR, clang's AST for C and C++, Go's go/types, javac's attribution) on packages
# drawn by seed from the pools in scripts/accuracy_oracle/pools.py, split by a stable
# hash into a `tune` and a `heldout` half. See docs/accuracy.md.
#
# Usage: scripts/accuracy-oracle.sh [--loci BIN] [--seed N] [--langs ts,py,rust,c,cpp,go,java] [--repos N]
#          [--per-repo N] [--out DIR] [--keep] [--codegraph]
#   --out DIR (default target/accuracy-oracle) gets results.json, results.md and
#   tune-misses.txt (the tune half's misses only; held-out misses are never written).
#   --codegraph also scores npm @colbymchenry/codegraph on the same targets (function level).
# Tools and sources are installed into $LOCI_ACCURACY_CACHE (default ~/.cache/loci-accuracy).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
loci=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --loci) loci=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ -z "$loci" ]; then
  if [ -x target/release/loci ]; then loci=target/release/loci; else loci=target/debug/loci; fi
fi
out=${out:-target/accuracy-oracle}
mkdir -p "$out"
loci=$(realpath "$loci")
out=$(realpath "$out")
cd scripts
exec python3 -m accuracy_oracle.run --loci "$loci" --out "$out" "${args[@]}"

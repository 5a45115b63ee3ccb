#!/usr/bin/env bash
# Measures what following a checkout costs: `loci sync` after `git checkout` between two
# revisions, against a full `loci index` of the same tree, alternated in one run so the
# ratio holds while the machine's speed drifts. The sync should cost in proportion to
# the files the two revisions differ by, not to the tree.
#
# Usage: scripts/bench-checkout.sh <repo-path> <rev-a> <rev-b> [runs]   (default 5)
#        LOCI_BIN=/path/to/loci to measure a given binary (else a release build).
# The repo is cloned to a temp dir first (loci writes .loci/ inside the workspace).
# Each run: check out the other revision (not timed), time `loci sync`, then time a
# full index of the same checkout into a fresh index file. Prints each run and the
# medians; the sync's report says how many files it read.
set -euo pipefail

repo=${1:?usage: scripts/bench-checkout.sh <repo-path> <rev-a> <rev-b> [runs]}
rev_a=${2:?rev-a}
rev_b=${3:?rev-b}
runs=${4:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z "${LOCI_BIN:-}" ]]; then
    cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
    LOCI_BIN="${CARGO_TARGET_DIR:-$here/target}/release/loci"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LOCI_HOME="$work/home"
git clone -q --no-checkout "$repo" "$work/repo"
ws="$work/repo"
git -C "$ws" checkout -q --detach "$rev_a"
differ=$(git -C "$ws" diff --name-only "$rev_a" "$rev_b" | wc -l)
echo "$rev_a..$rev_b: $differ files differ; $(git -C "$ws" ls-files | wc -l) files tracked" >&2
"$LOCI_BIN" index "$ws" --json >/dev/null

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
: >"$work/sync" ; : >"$work/full"
target=$rev_b
for i in $(seq 1 "$runs"); do
    git -C "$ws" checkout -q --detach "$target"
    t=$(date +%s%N)
    parsed=$("$LOCI_BIN" sync "$ws" --json | sed -n 's/.*"files_parsed": *\([0-9]*\).*/\1/p' | head -1)
    sync_ms=$(ms "$t")
    rm -f "$work/full.db"*
    t=$(date +%s%N)
    "$LOCI_BIN" index "$ws" --index-path "$work/full.db" --json >/dev/null
    full_ms=$(ms "$t")
    echo "run $i: to ${target:0:12}: sync ${sync_ms} ms (files parsed: ${parsed:-?}), full index ${full_ms} ms" >&2
    echo "$sync_ms" >>"$work/sync"
    echo "$full_ms" >>"$work/full"
    if [[ $target == "$rev_b" ]]; then target=$rev_a; else target=$rev_b; fi
done
s=$(median <"$work/sync")
f=$(median <"$work/full")
echo "median: sync after checkout ${s} ms, full index ${f} ms, ratio $(awk -v s="$s" -v f="$f" 'BEGIN {printf "%.3f", s / f}')"

#!/usr/bin/env bash
# Benchmarks the memory as whole CLI processes: the median wall time of `loci remember`
# (no embedding) and of `loci recall` over a workspace with an index, against the
# median of `loci --version` (the process's own start-up) measured in the same run.
# The library figures come from `cargo bench -p loci-memory` (remember) and
# `cargo run --release -p loci-memory --example recall_at_scale` (recall at 100,000).
#
# Usage: scripts/bench-memory.sh [runs]      (default 50)
#        RECALL_AT_SCALE=100000 scripts/bench-memory.sh   (also recall at scale, vectors on and off)
set -euo pipefail

runs=${1:-50}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
loci="${CARGO_TARGET_DIR:-$here/target}/release/loci"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LOCI_HOME="$work/home"
mkdir -p "$work/ws/src"
printf 'pub fn fetch_with_retry() -> u32 {\n    3\n}\n' > "$work/ws/src/lib.rs"
cd "$work/ws"
"$loci" index . >/dev/null

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_runs() { # name, command...
    local name=$1; shift
    for i in $(seq "$runs"); do
        local t0; t0=$(now_ns)
        "$@" "$i" >/dev/null
        echo $(( $(now_ns) - t0 ))
    done | median | awk -v n="$name" '{printf "%s: median %.2f ms\n", n, $1 / 1e6}'
}
version() { "$loci" --version; }
remember() { "$loci" remember --name "note-$1" --type decision -d "retry budget" \
    'We retry `fetch_with_retry` three times; see src/lib.rs:1.' \
    --entities '[{"name": "Retry", "type": "concept"}]'; }
recall() { "$loci" recall retry budget 2>/dev/null; }
time_runs "loci --version (start-up baseline)" version
time_runs "loci remember (no embedding)" remember
time_runs "loci recall" recall

# Recall at scale, with and without vectors, in one run (bench-only pseudo-random unit
# vectors: see crates/memory/examples/recall_at_scale.rs). `RECALL_AT_SCALE=N` (e.g.
# 100000) runs it; it prints both percentiles and their ratio.
if [[ -n "${RECALL_AT_SCALE:-}" ]]; then
    cargo run --release -q -p loci-memory --manifest-path "$here/Cargo.toml" \
        --example recall_at_scale -- "$RECALL_AT_SCALE" "$work/scale.db" --vectors
fi

#!/usr/bin/env bash
# Measures what an idle `loci watch` costs: the CPU time (utime + stime from
# /proc/PID/stat) and the number of syncs over a period with no change at all, after
# its catch-up sync. An idle watcher should sync 0 times and use ~0 CPU.
#
# Usage: scripts/bench-watch-idle.sh <repo-path> [seconds]   (default 60)
#        LOCI_BIN=/path/to/loci to measure a given binary (else a release build).
# The repo is copied to a temp dir first (loci writes .loci/ inside the workspace).
set -euo pipefail

repo=${1:?usage: scripts/bench-watch-idle.sh <repo-path> [seconds]}
seconds=${2:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z "${LOCI_BIN:-}" ]]; then
    cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
    LOCI_BIN="${CARGO_TARGET_DIR:-$here/target}/release/loci"
fi

work=$(mktemp -d)
pid=
cleanup() {
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export LOCI_HOME="$work/home"
mkdir -p "$work/repo"
cp -a "$repo"/. "$work/repo/"
rm -rf "$work/repo/.loci"
ws="$work/repo"
files=$(find "$ws" -type f | wc -l)
echo "indexing $files files ..." >&2
"$LOCI_BIN" index "$ws" --json >/dev/null

"$LOCI_BIN" watch "$ws" --json >"$work/watch.out" 2>"$work/watch.err" &
pid=$!
# The catch-up sync is the first line.
for _ in $(seq 1 600); do
    [[ -s "$work/watch.out" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/watch.err" >&2; exit 1; }
    sleep 0.1
done
[[ -s "$work/watch.out" ]] || { echo "no catch-up sync within 60 s" >&2; exit 1; }

# Fields 14 and 15 of /proc/PID/stat (after the parenthesised command name).
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
lines_before=$(wc -l <"$work/watch.out")
cpu_before=$(ticks)
sleep "$seconds"
cpu_after=$(ticks)
lines_after=$(wc -l <"$work/watch.out")

python3 - "$files" "$seconds" "$hz" "$cpu_before" "$cpu_after" "$lines_before" "$lines_after" <<'PY'
import sys
files, seconds, hz, c0, c1, l0, l1 = map(int, sys.argv[1:])
cpu = (c1 - c0) / hz
print(f"idle loci watch over {seconds} s on {files} files: "
      f"{cpu:.2f} s CPU ({100 * cpu / seconds:.1f}% of a core), {l1 - l0} syncs")
PY

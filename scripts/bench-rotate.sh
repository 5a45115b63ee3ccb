#!/usr/bin/env bash
# Full index of one tree by several loci binaries, in rotating order (run i starts with
# binary i mod N), so each sees the machine's good and bad moments alike. Prints each
# binary's median wall and user CPU seconds and their ratio to the first binary's.
# Cheaper than scripts/bench-ab.sh (no queries) and takes any number of binaries.
#
# Usage: scripts/bench-rotate.sh <repo-path> <runs> <loci-A> <loci-B> [<loci-C> ...]
set -euo pipefail
repo=${1:?usage: scripts/bench-rotate.sh <repo-path> <runs> <loci-A> <loci-B> [...]}
runs=${2:?}
shift 2
[ $# -ge 2 ] || { echo "give at least two binaries" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree"
cp -a "$repo"/. "$work/tree/"
python3 - "$work" "$runs" "$@" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, time
work, runs, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
tree = os.path.join(work, "tree")
env = dict(os.environ, LOCI_HOME=os.path.join(work, "home"))
times = {b: [] for b in bins}
for i in range(runs):
    for j in range(len(bins)):
        b = bins[(i + j) % len(bins)]
        shutil.rmtree(os.path.join(tree, ".loci"), ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        t = time.perf_counter()
        p = subprocess.run([b, "index", "--json", tree], capture_output=True, env=env)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit(f"{b} failed: {p.stderr.decode(errors='replace')}")
        times[b].append((wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before))
base = None
print(f"{runs} runs each, rotated\n")
print("| binary | wall (s) | ratio | user CPU (s) | ratio |")
print("|---|---|---|---|---|")
for b in bins:
    w = statistics.median(x[0] for x in times[b])
    u = statistics.median(x[1] for x in times[b])
    base = base or (w, u)
    print(f"| {b} | {w:.3f} | {w / base[0]:.3f} | {u:.3f} | {u / base[1]:.3f} |")
PY

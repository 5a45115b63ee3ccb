#!/usr/bin/env bash
# Benchmarks loci on a real repository, as whole CLI processes:
#   full index (wall, CPU, peak RSS), no-change re-index, one-file-change re-index,
#   and median latency of find / callers --depth 3 / impact / search.
# The baselines measured in the same run are universal-ctags over the same tree
# (`ctags -R`, definitions only) and tree-sitter alone parsing the files loci indexes on
# all cores (`cargo run -p loci-index --example parse_only`), so figures are reported as
# ratios too.
#
# Usage: scripts/bench.sh <repo-path> [runs]     (LOCI_BENCH_FULL_RUNS: full index runs, default 5)
# The repo is copied to a temp dir first (loci writes .loci/ inside the workspace).
set -euo pipefail

repo=${1:?usage: scripts/bench.sh <repo-path> [runs]}
runs=${2:-15}
# Full index runs (each against a ctags run); their medians are reported.
full_runs=${LOCI_BENCH_FULL_RUNS:-5}
here=$(cd "$(dirname "$0")/.." && pwd)

cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
cargo build --release -p loci-index --example parse_only --manifest-path "$here/Cargo.toml" >&2
loci="${CARGO_TARGET_DIR:-$here/target}/release/loci"
parse_only="${CARGO_TARGET_DIR:-$here/target}/release/examples/parse_only"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LOCI_HOME="$work/home"
echo "copying $repo ..." >&2
mkdir -p "$work/repo"
cp -a "$repo"/. "$work/repo/"
rm -rf "$work/repo/.loci"
# Third-party packages are not part of a standard library or a crate tree's own code.
find "$work/repo" -type d -name site-packages -prune -exec rm -rf {} + 2>/dev/null || true
ws="$work/repo"
sync

python3 - "$loci" "$ws" "$runs" "$full_runs" "$parse_only" <<'PY'
import json, os, re, shutil, statistics, subprocess, sys, time, resource

loci, ws, runs, full_runs, parse_only = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def timed(cmd, **kw):
    """Wall seconds, CPU seconds of the child, peak RSS (KiB), stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, p.stdout

def median_ms(cmd, n=runs):
    return statistics.median(timed(cmd)[0] for _ in range(n)) * 1000

# Full index against the baselines, universal-ctags (definitions only) and tree-sitter
# alone over the same tree, alternated so all see the same machine; medians of
# `full_runs` runs each.
# Each loci run is wrapped so the peak RSS is that process's alone.
wrapper = ("import resource,subprocess,sys,json;p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
           "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
           "print(json.dumps({'rc':p.returncode,'out':p.stdout,'err':p.stderr,'rss':r.ru_maxrss,'cpu':r.ru_utime+r.ru_stime}))")
tags = os.path.join(os.path.dirname(ws), "tags")
ctags_walls, ctags_cpus, full_walls, full_cpus, full_rsss = [], [], [], [], []
ts_walls, ts_cpus = [], []
for _ in range(full_runs):
    w, c, _, _ = timed(["ctags", "-R", "-f", tags, ws])
    os.remove(tags)
    ctags_walls.append(w)
    ctags_cpus.append(c)
    w, c, _, _ = timed([parse_only, ws])
    ts_walls.append(w)
    ts_cpus.append(c)
    shutil.rmtree(os.path.join(ws, ".loci"), ignore_errors=True)
    t = time.perf_counter()
    res = json.loads(subprocess.run([sys.executable, "-c", wrapper, loci, "index", "--json", ws], capture_output=True, text=True).stdout)
    full_walls.append(time.perf_counter() - t)
    if res["rc"] != 0:
        sys.exit("index failed: " + res["out"] + res["err"])
    full_cpus.append(res["cpu"])
    full_rsss.append(res["rss"])
report = json.loads(res["out"])
ctags_wall, ctags_cpu = statistics.median(ctags_walls), statistics.median(ctags_cpus)
ts_wall, ts_cpu = statistics.median(ts_walls), statistics.median(ts_cpus)
full_wall, full_cpu, full_rss = statistics.median(full_walls), statistics.median(full_cpus), max(full_rsss)

nochange = median_ms([loci, "index", "--json", ws])

# One-file change: append a function to a mid-sized source file, re-index, revert, repeat.
files = []
for d, _, fs in os.walk(ws):
    if "/.loci" in d:
        continue
    files += [os.path.join(d, f) for f in fs if f.endswith((".py", ".rs"))]
files.sort()
target = files[len(files) // 2]
original = open(target, "rb").read()
one = []
for i in range(runs):
    extra = f"\ndef bench_{i}():\n    return {i}\n" if target.endswith(".py") else f"\npub fn bench_{i}() -> u32 {{ {i} }}\n"
    open(target, "wb").write(original + extra.encode())
    one.append(timed([loci, "index", "--json", ws])[0] * 1000)
open(target, "wb").write(original)
timed([loci, "index", "--json", ws])
one_change = statistics.median(one)

# Pick a well-used function to query: the one with most callers among frequent names.
found = json.loads(timed([loci, "-w", ws, "find", "*", "--kind", "function", "--limit", "400", "--json"])[3])["symbols"]
best, best_n = None, -1
for s in found[::8][:40]:
    sel = f"{s['path']}:{s['qualified_name']}"
    p = subprocess.run([loci, "-w", ws, "callers", sel, "--json"], capture_output=True, text=True)
    if p.returncode == 0:
        n = len(json.loads(p.stdout)["reached"])
        if n > best_n:
            best, best_n = (s, sel), n
sym, sel = best
word = sym["name"]

q = {
    "find": median_ms([loci, "-w", ws, "find", word, "--json"]),
    "callers --depth 3": median_ms([loci, "-w", ws, "callers", sel, "--depth", "3", "--json"]),
    "impact": median_ms([loci, "-w", ws, "impact", sel, "--json"]),
    "search": median_ms([loci, "-w", ws, "search", word, "--json"]),
}

lines = report["files_indexed"]
print(f"## {os.path.basename(sys.argv[2].rstrip('/'))}: {report['files_indexed']} files, {report['symbols']} symbols, {report['edges']} edges")
print(f"(query symbol: `{sel}`, {best_n} direct callers; {runs} runs per median, {full_runs} full index runs per median)\n")
print("| measure | loci | baseline: ctags -R | ratio | baseline: tree-sitter alone, all cores | ratio |")
print("|---|---|---|---|---|---|")
print(f"| full index wall | {full_wall:.2f} s | {ctags_wall:.2f} s | {full_wall / ctags_wall:.2f}x | {ts_wall:.2f} s | {full_wall / ts_wall:.2f}x |")
print(f"| full index CPU | {full_cpu:.2f} s | {ctags_cpu:.2f} s | {full_cpu / max(ctags_cpu, 1e-9):.2f}x | {ts_cpu:.2f} s | {full_cpu / max(ts_cpu, 1e-9):.2f}x |")
print(f"| full index peak RSS | {full_rss / 1024:.0f} MiB | | | | |")
print(f"| no-change re-index (median) | {nochange:.1f} ms | | {nochange / (report['files_indexed'] / 2000):.1f} ms per 2,000 files | | |")
print(f"| one-file change re-index (median) | {one_change:.1f} ms | | | | |")
for name, ms in q.items():
    print(f"| `{name}` (median, whole process) | {ms:.1f} ms | | | | |")
PY

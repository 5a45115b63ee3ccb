#!/usr/bin/env bash
# A/B of two loci binaries on one tree, alternated in the same run so both see the
# same machine: full index (wall, CPU, peak RSS), no-change re-index and the median
# latency of find / callers --depth 3 / impact / search as whole CLI processes.
# Prints each figure for A and B and the ratio B/A (below 1: B is faster).
#
# Usage: scripts/bench-ab.sh <loci-A> <loci-B> <repo-path> [runs]
#   e.g. A = a previous release built from an older commit, B = target/release/loci.
set -euo pipefail
a=${1:?usage: scripts/bench-ab.sh <loci-A> <loci-B> <repo-path> [runs]}
b=${2:?}
repo=${3:?}
runs=${4:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in a b; do
  mkdir -p "$work/$side"
  cp -a "$repo"/. "$work/$side/"
  rm -rf "$work/$side/.loci"
done
python3 - "$a" "$b" "$work" "$runs" <<'PY'
import json, os, shutil, statistics, subprocess, sys, time, resource
bins = {"a": sys.argv[1], "b": sys.argv[2]}
work, runs = sys.argv[3], int(sys.argv[4])
wrapper = ("import resource,subprocess,sys,json;p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
           "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
           "print(json.dumps({'rc':p.returncode,'out':p.stdout,'err':p.stderr,'rss':r.ru_maxrss,'cpu':r.ru_utime+r.ru_stime}))")
env = dict(os.environ)
def run(side, args):
    e = dict(env, LOCI_HOME=os.path.join(work, side + "-home"))
    t = time.perf_counter()
    res = json.loads(subprocess.run([sys.executable, "-c", wrapper, bins[side], *args], capture_output=True, text=True, env=e).stdout)
    wall = time.perf_counter() - t
    if res["rc"] != 0:
        sys.exit(f"{side} {args} failed: {res['out']} {res['err']}")
    return wall, res["cpu"], res["rss"], res["out"]
full = {"a": [], "b": []}
for i in range(max(3, runs // 3)):
    for side in ("a", "b") if i % 2 == 0 else ("b", "a"):
        ws = os.path.join(work, side)
        shutil.rmtree(os.path.join(ws, ".loci"), ignore_errors=True)
        full[side].append(run(side, ["index", "--json", ws]))
def med(xs, k):
    return statistics.median(x[k] for x in xs)
rows = [("full index wall (s)", med(full["a"], 0), med(full["b"], 0)),
        ("full index CPU (s)", med(full["a"], 1), med(full["b"], 1)),
        ("full index peak RSS (MiB)", max(x[2] for x in full["a"]) / 1024, max(x[2] for x in full["b"]) / 1024)]
def latency(side, args):
    """Wall milliseconds of one whole process, started directly (no wrapper)."""
    e = dict(env, LOCI_HOME=os.path.join(work, side + "-home"))
    t = time.perf_counter()
    p = subprocess.run([bins[side], *args], capture_output=True, env=e)
    ms = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"{side} {args} failed: {p.stdout!r} {p.stderr!r}")
    return ms
def alternate(args_of):
    out = {"a": [], "b": []}
    for i in range(runs):
        for side in ("a", "b") if i % 2 == 0 else ("b", "a"):
            out[side].append(latency(side, args_of(side)))
    return statistics.median(out["a"]), statistics.median(out["b"])
rows.append(("no-change re-index (ms)", *alternate(lambda s: ["index", "--json", os.path.join(work, s)])))
# A query symbol both index the same way: the first function with a few callers.
ws_b = os.path.join(work, "b")
found = json.loads(run("b", ["-w", ws_b, "find", "*", "--kind", "function", "--limit", "400", "--json"])[3])["symbols"]
sel, word = None, None
for s in found[::8]:
    cand = f"{s['path']}:{s['qualified_name']}"
    p = subprocess.run([bins["b"], "-w", ws_b, "callers", cand, "--json"], capture_output=True, text=True, env=dict(env, LOCI_HOME=os.path.join(work, "b-home")))
    if p.returncode == 0 and len(json.loads(p.stdout)["reached"]) >= 3:
        sel, word = cand, s["name"]
        break
sel = sel or f"{found[0]['path']}:{found[0]['qualified_name']}"
word = word or found[0]["name"]
for name, args in [("find", ["find", word]), ("callers --depth 3", ["callers", sel, "--depth", "3"]),
                   ("impact", ["impact", sel]), ("search", ["search", word])]:
    rows.append((f"`{name}` (ms, whole process)", *alternate(lambda s, args=args: ["-w", os.path.join(work, s), *args, "--json"])))
print(f"query symbol: `{sel}`; {runs} runs per median, alternated\n")
print("| measure | A | B | B/A |")
print("|---|---|---|---|")
for name, x, y in rows:
    print(f"| {name} | {x:.2f} | {y:.2f} | {y / max(x, 1e-9):.2f} |")
PY

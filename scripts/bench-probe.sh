#!/usr/bin/env bash
# Benchmarks the gate's API probe chain as whole `loci gate --json` processes on a small
# workspace (so the probe, not the drift walk, is what differs), medians of N runs:
#   marker   the `.loci/` marker decides (no probe at all): the baseline
#   cli      no marker, api.enabled = false: loci's own registry decides
#   api-up   no marker, a `loci serve` already listening: its point lookup decides
#   spawn    no marker, no server: the gate starts one, asks it, stops it
# For each: the wall time of the gate process and the classification's own time
# (`facts.elapsed_ms`), plus the overhead over the marker path measured in the same run.
# Targets: api-up within 50 ms of the marker path; spawn about 1 s or less, and never
# past api.probeDeadlineMs (its maximum is reported against the deadline).
#
# Usage: scripts/bench-probe.sh [runs]      (default 30)
set -euo pipefail

runs=${1:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
loci="${CARGO_TARGET_DIR:-$here/target}/release/loci"

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export LOCI_HOME="$work/home" XDG_CONFIG_HOME="$work/xdg"
unset LOCI_API_KEY LOCI_API_ENABLED LOCI_API_PORT LOCI_API_PROBE_DEADLINE_MS LOCI_SESSION_ID
export LOCI_LIFECYCLE_GATE_BUDGET_MS=60000 LOCI_LIFECYCLE_LIVENESS_CACHE_MS=0 LOCI_LIFECYCLE_SYNC_ON_START=0

for ws in marked unmarked; do
    mkdir -p "$work/$ws/src"
    for i in $(seq 1 20); do printf 'def f%s():\n    return %s\n' "$i" "$i" > "$work/$ws/src/m$i.py"; done
done
"$loci" index "$work/marked" --json > /dev/null
"$loci" index "$work/unmarked" --index-path "$work/unmarked-index.db" --json > /dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up_port=$(free_port)
export LOCI_API_KEY=bench-key-0123456789
"$loci" serve --port "$up_port" > /dev/null 2>&1 &
server_pid=$!
python3 - "$up_port" <<'PY'
import socket, sys, time
end = time.time() + 60
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close(); sys.exit(0)
    except OSError:
        time.sleep(0.02)
sys.exit("loci serve did not start")
PY
unset LOCI_API_KEY

python3 - "$loci" "$work" "$runs" "$up_port" <<'PY'
import json, os, socket, statistics, subprocess, sys, time

loci, work, runs, up_port = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def gate(ws, env):
    e = dict(os.environ, **env)
    t = time.perf_counter()
    p = subprocess.run([loci, "gate", ws, "--json"], capture_output=True, text=True, env=e)
    wall = (time.perf_counter() - t) * 1000
    v = json.loads(p.stdout)
    return wall, v["facts"].get("elapsed_ms", 0), v["facts"].get("decided_by", "marker"), v["state"]

cases = [
    ("marker", f"{work}/marked", {"LOCI_API_PORT": str(free_port())}),
    ("cli", f"{work}/unmarked", {"LOCI_API_ENABLED": "0"}),
    ("api-up", f"{work}/unmarked", {"LOCI_API_PORT": up_port, "LOCI_API_KEY": "bench-key-0123456789"}),
    ("spawn", f"{work}/unmarked", None),
]
results = {name: [] for name, _, _ in cases}
deciders = {}
for _ in range(runs):
    # Interleaved, so every case sees the same machine.
    for name, ws, env in cases:
        env = env if env is not None else {"LOCI_API_PORT": str(free_port())}
        wall, elapsed, decider, state = gate(ws, env)
        if state != "clean":
            sys.exit(f"{name}: state {state}")
        results[name].append((wall, elapsed))
        deciders[name] = decider

deadline = 2000
base = statistics.median(w for w, _ in results["marker"])
print(f"probe chain, {runs} runs each, medians (ms)")
print(f"{'case':8} {'decider':20} {'wall':>7} {'check':>7} {'max':>7} {'over marker':>12}")
for name, _, _ in cases:
    walls = [w for w, _ in results[name]]
    checks = [c for _, c in results[name]]
    med = statistics.median(walls)
    print(f"{name:8} {deciders[name]:20} {med:7.1f} {statistics.median(checks):7.1f} {max(walls):7.1f} {med - base:+12.1f}")
spawn_max = max(c for _, c in results["spawn"])
print(f"spawn path: slowest check {spawn_max} ms against api.probeDeadlineMs {deadline} ms")
PY

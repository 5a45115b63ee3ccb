#!/usr/bin/env bash
# Benchmarks what the killable query worker buys `loci serve`:
#   1. `GET /health` p99 (wrk, keep-alive loopback) with no load (the baseline), then
#      while four 300M-row recursive CTEs run through `POST /query` (one per workspace,
#      so four workers at once), then with no load again. Target: <= 20 ms under load.
#   2. The time from `DELETE /query/{id}` of a running statement to its worker process
#      having exited (state Z or gone from /proc). Target: <= 50 ms.
# Not a CI test: figures depend on the machine and its load.
#
# Usage: scripts/bench-serve-query.sh [wrk-seconds (10)] [cancel-runs (20)]
# Needs wrk (Debian: apt-get install -y wrk).
set -euo pipefail

secs=${1:-10}
runs=${2:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 1; }

cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
loci="${CARGO_TARGET_DIR:-$here/target}/release/loci"

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export LOCI_HOME="$work/home"
export LOCI_API_KEY="bench-key-$$"
# Statements may run for ten minutes: only a cancel ends them here.
export LOCI_LIMITS_QUERY_TIMEOUT_MS=600000 LOCI_API_REQUEST_TIMEOUT_MS=600000
for i in 1 2 3 4; do
    mkdir -p "$work/ws$i/src"
    printf 'pub fn f%s() -> u32 { %s }\n' "$i" "$i" > "$work/ws$i/src/lib.rs"
    "$loci" index "$work/ws$i" >/dev/null
done

"$loci" serve --port 0 --json > "$work/listening" 2>"$work/serve.err" &
server_pid=$!
for _ in $(seq 200); do [ -s "$work/listening" ] && break; sleep 0.05; done
addr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listening"])' "$work/listening")

python3 - "$addr" "$server_pid" "$secs" "$runs" "$work" <<'PY'
import json, os, re, statistics, subprocess, sys, threading, time, urllib.request, urllib.error

addr, server_pid, secs, runs, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
key = os.environ["LOCI_API_KEY"]
base = f"http://{addr}"

def call(method, path, body=None, timeout=900):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

def p99_ms(label):
    out = subprocess.run(["wrk", "-t1", "-c4", f"-d{secs}s", "--latency", base + "/health"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)
    p99 = float(m.group(1)) * scale
    print(f"/health p99 {label}: {p99:.2f} ms ({rps} req/s)")
    return p99

def descendants(root):
    parents = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            parents[int(d)] = int(stat.rsplit(") ", 1)[1].split()[1])
    found, i = [root], 0
    while i < len(found):
        found += [p for p, pp in parents.items() if pp == found[i]]
        i += 1
    return found[1:]

def worker_of(ws_dir):
    for p in descendants(server_pid):
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if " worker --db " in cmd and f"{ws_dir}/" in cmd:
            return p
    return None

def cpu_ticks(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()
        return int(f[11]) + int(f[12])
    except (OSError, IndexError):
        return 0

def busy_worker(ws_dir):
    """The workspace's worker once it has burnt 50 ms of CPU on the statement (a cancel
    that lands before the statement reaches the worker has nothing to kill)."""
    pid = worker_of(ws_dir)
    return pid if pid is not None and cpu_ticks(pid) >= 5 else None

def exited(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True

def wait(what, cond, limit=60):
    until = time.monotonic() + limit
    while not cond():
        if time.monotonic() > until:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.005)

status, listed = call("GET", "/api/v1/workspaces")
ids = {os.path.basename(w["name"]): w["id"] for w in listed["workspaces"]}
wss = [(ids[f"ws{i}"], f"{work}/ws{i}") for i in (1, 2, 3, 4)]

before = p99_ms("baseline, no load")

cte = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c"
answers = {}
def run(wid, qid):
    answers[qid] = call("POST", f"/api/v1/workspaces/{wid}/query", {"sql": cte, "id": qid})
threads = [threading.Thread(target=run, args=(wid, f"cte{n}")) for n, (wid, _) in enumerate(wss)]
for t in threads:
    t.start()
for n, (wid, _) in enumerate(wss):
    wait(f"cte{n} to run", lambda: call("GET", f"/api/v1/workspaces/{wid}/query")[1]["running"] == f"cte{n}")
started = time.monotonic()
loaded = p99_ms("while four 300M-row CTEs run")
still = sum(1 for n, (wid, _) in enumerate(wss)
            if call("GET", f"/api/v1/workspaces/{wid}/query")[1]["running"] == f"cte{n}")
print(f"  ({still} of 4 CTEs still running after {time.monotonic() - started:.1f} s of wrk)")
for n, (wid, _) in enumerate(wss):
    call("DELETE", f"/api/v1/workspaces/{wid}/query/cte{n}")
for t in threads:
    t.join()
after = p99_ms("no load again")

endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
wid, ws_dir = wss[0]
gone = []
for i in range(runs):
    qid = f"cancel{i}"
    t = threading.Thread(target=call, args=("POST", f"/api/v1/workspaces/{wid}/query", {"sql": endless, "id": qid}))
    t.start()
    wait(f"{qid} to run", lambda: call("GET", f"/api/v1/workspaces/{wid}/query")[1]["running"] == qid
         and busy_worker(ws_dir) is not None)
    pid = busy_worker(ws_dir)
    t0 = time.perf_counter()
    status, body = call("DELETE", f"/api/v1/workspaces/{wid}/query/{qid}")
    assert status == 200 and body["cancelled"] == "running", body
    wait(f"worker {pid} to exit", lambda: exited(pid), limit=10)
    gone.append((time.perf_counter() - t0) * 1000)
    t.join()
gone.sort()
print(f"DELETE /query/{{id}} -> worker exited, {runs} runs: median {statistics.median(gone):.2f} ms, "
      f"p90 {gone[int(len(gone) * 0.9) - 1]:.2f} ms, max {gone[-1]:.2f} ms")
print(f"ratio: /health p99 under load / baseline = {loaded / before:.2f}x (baseline after: {after:.2f} ms)")
PY

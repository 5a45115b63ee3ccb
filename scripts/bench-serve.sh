#!/usr/bin/env bash
# Benchmarks `loci serve` under HTTP load with wrk (Debian's `wrk`), on a warm index of a
# real tree (default: tokio's sources from the cargo registry):
#   - `GET /health` (no key, no read): the baseline, measured in the same run;
#   - `POST .../find` and `POST .../callers` with depth 3, over keep-alive loopback;
#   - a fresh idle server with 50 registered workspaces, each read once: RSS and CPU idle.
# wrk runs on the same two cores as the server, so figures are also given as ratios
# against the /health baseline.
#
# Usage: scripts/bench-serve.sh [tree] [seconds]     (env: BENCH_THREADS=2 BENCH_CONNS=32,
#        LOCI_BIN=path: benchmark that binary instead of building this tree's release)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tokio-1.* 2>/dev/null | sort -V | tail -1)}
secs=${2:-10}
threads=${BENCH_THREADS:-2}
conns=${BENCH_CONNS:-32}
[ -d "$tree" ] || { echo "no tree to index (give one: scripts/bench-serve.sh PATH)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 2; }

if [ -n "${LOCI_BIN:-}" ]; then
  loci=$LOCI_BIN
else
  cargo build --release -p loci --manifest-path "$here/Cargo.toml" >&2
  loci="${CARGO_TARGET_DIR:-$here/target}/release/loci"
fi

work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export LOCI_HOME="$work/home"
export LOCI_API_KEY="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
# The server's own deadlines must not cut a benchmark request short.
export LOCI_API_REQUEST_TIMEOUT_MS=60000

echo "indexing $tree ..." >&2
cp -a "$tree" "$work/repo"
"$loci" index "$work/repo" --json >/dev/null
for i in $(seq 1 49); do
  mkdir -p "$work/small/w$i/src"
  printf 'pub fn f%s() { g%s(); }\nfn g%s() {}\n' "$i" "$i" "$i" >"$work/small/w$i/src/lib.rs"
  "$loci" index "$work/small/w$i" --json >/dev/null
done

"$loci" serve --port 0 --json >"$work/serve.out" 2>"$work/serve.err" &
server=$!
for _ in $(seq 1 200); do
  grep -q listening "$work/serve.out" 2>/dev/null && break
  sleep 0.05
done
addr=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$work/serve.out")
base="http://$addr"

python3 - "$base" "$LOCI_API_KEY" "$work" <<'PY' >"$work/ids"
import json, sys, urllib.request
base, key, work = sys.argv[1:]
req = urllib.request.Request(base + "/api/v1/workspaces", headers={"Authorization": "Bearer " + key})
ws = json.load(urllib.request.urlopen(req))["workspaces"]
big = max(ws, key=lambda w: w["files"])
print(big["id"])
for w in ws:
    if w["id"] != big["id"]:
        print(w["id"])
PY
big=$(head -1 "$work/ids")

lua() { # lua METHOD PATH BODY > file: a wrk script sending one request with the key
  cat <<EOF
wrk.method = "$1"
wrk.path = "$2"
wrk.body = [[$3]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $LOCI_API_KEY"
function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("unexpected status " .. status .. ": " .. body .. "\n")
    os.exit(1)
  end
end
EOF
}
lua GET /health "" >"$work/health.lua"
lua POST "/api/v1/workspaces/$big/find" '{"pattern": "spawn", "limit": 20}' >"$work/find.lua"
lua POST "/api/v1/workspaces/$big/callers" '{"target": "Handle::spawn_blocking", "depth": 3, "limit": 50}' >"$work/callers.lua"

run() { # run NAME: wrk's summary as one JSON line
  wrk -t"$threads" -c"$conns" -d"${secs}s" --latency -s "$work/$1.lua" "$base" >"$work/$1.wrk"
  python3 - "$1" "$work/$1.wrk" <<'PY'
import json, re, sys
name, text = sys.argv[1], open(sys.argv[2]).read()
def ms(v):
    n, unit = re.match(r"([\d.]+)(us|ms|s)", v).groups()
    return float(n) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
lat = {p: ms(v) for p, v in re.findall(r"^\s+(50|90|99)%\s+(\S+)", text, re.M)}
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(json.dumps({"route": name, "req_per_s": round(rps), "p50_ms": lat["50"], "p90_ms": lat["90"],
                  "p99_ms": lat["99"], "non_2xx": int(errors.group(1)) if errors else 0}))
PY
}
# One warm-up pass reads every page the benchmarks touch.
wrk -t1 -c1 -d1s -s "$work/find.lua" "$base" >/dev/null
wrk -t1 -c1 -d1s -s "$work/callers.lua" "$base" >/dev/null
run health >"$work/r.health"
run find >"$work/r.find"
run callers >"$work/r.callers"

# The idle figure is a fresh server's (the load above warmed the big index's page caches):
# every workspace read once, so each has its pooled handle; then the server idles.
kill "$server" && wait "$server" 2>/dev/null || true
"$loci" serve --port 0 --json >"$work/serve.out" 2>"$work/serve.err" &
server=$!
for _ in $(seq 1 200); do
  grep -q listening "$work/serve.out" 2>/dev/null && break
  sleep 0.05
done
base="http://$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$work/serve.out")"
while read -r id; do
  curl -fsS -o /dev/null -H "Authorization: Bearer $LOCI_API_KEY" "$base/api/v1/workspaces/$id/stats"
done <"$work/ids"
sleep 1
ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
t0=$(ticks)
sleep 5
t1=$(ticks)
rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$server/status")
hz=$(getconf CLK_TCK)

python3 - "$work" "$rss_kb" "$t0" "$t1" "$hz" "$(wc -l <"$work/ids")" <<'PY'
import json, sys
work, rss_kb, t0, t1, hz, nws = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
rows = {n: json.loads(open(f"{work}/r.{n}").read()) for n in ("health", "find", "callers")}
h = rows["health"]
print(f"{'route':<10}{'req/s':>10}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'vs /health req/s':>18}")
for n, r in rows.items():
    print(f"{n:<10}{r['req_per_s']:>10}{r['p50_ms']:>9.2f}{r['p90_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['req_per_s'] / h['req_per_s']:>18.2f}")
    if r["non_2xx"]:
        print(f"  {n}: {r['non_2xx']} answers were not 2xx", file=sys.stderr)
cpu_ms = (t1 - t0) * 1000 / hz
print(f"idle: {nws} workspaces read once, RSS {rss_kb / 1024:.1f} MB, CPU over 5 s idle {cpu_ms:.0f} ms")
PY

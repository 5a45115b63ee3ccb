#!/usr/bin/env bash
# Runs the MCP conformance suite (npm @modelcontextprotocol/conformance, Node >= 22 from
# the npm package node@22, both installed into $LOCI_CONFORMANCE_DIR) against `/mcp` on
# a `loci serve` over a small indexed workspace, and prints the suite's summary.
#
#   scripts/mcp-conformance.sh [path/to/loci]
#
# The suite sends no API key, so it talks to the server through a loopback proxy
# (scripts/mcp-auth-proxy.py) that adds `Authorization: Bearer KEY` to every request.
set -euo pipefail
cd "$(dirname "$0")/.."
loci="$(realpath "${1:-target/debug/loci}")"
dir="${LOCI_CONFORMANCE_DIR:-$HOME/.cache/loci-ci/conformance}"
if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
  mkdir -p "$dir"
  npm install --silent --no-audit --no-fund --prefix "$dir" node@22 @modelcontextprotocol/conformance
fi
export PATH="$dir/node_modules/.bin:$PATH"

work="$(mktemp -d)"
cleanup() {
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null || true
  [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/ws/src" "$work/home"
printf 'pub fn parse_config() -> u32 { helper() }\nfn helper() -> u32 { 1 }\n' > "$work/ws/src/lib.rs"
export LOCI_HOME="$work/home" XDG_CONFIG_HOME="$work/home/xdg" LOCI_API_KEY="conformance-key-0123456789"
"$loci" index "$work/ws" --json > /dev/null
(cd "$work/ws" && exec "$loci" serve --port 0 --json > "$work/serve.out" 2> "$work/serve.err") &
serve_pid=$!
for _ in $(seq 300); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
addr="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listening"])' "$work/serve.out")"
python3 scripts/mcp-auth-proxy.py "$addr" "$LOCI_API_KEY" > "$work/proxy.out" &
proxy_pid=$!
for _ in $(seq 100); do grep -q 127.0.0.1 "$work/proxy.out" 2>/dev/null && break; sleep 0.1; done
proxy="$(cat "$work/proxy.out")"
echo "node $(node --version), conformance $(conformance --version), loci serve on $addr via $proxy" >&2
conformance server --url "http://$proxy/mcp" "${@:2}"

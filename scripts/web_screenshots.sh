#!/usr/bin/env bash
# Screenshots of the web view on a real tree, for the README: starts `loci serve` on a
# free loopback port, signs a headless chromium in through the one-time URL (WebDriver,
# Debian's chromium-driver, spoken with curl), and saves the workspaces page, a search
# and the callers graph of one symbol as PNGs.
#
#   scripts/web_screenshots.sh LOCI_BINARY SYMBOL_SELECTOR OUT_DIR [DEPTH]
#
# The tree must be indexed and registered first (`loci index .`); the first registered
# workspace is shown. Needs chromium, chromedriver, curl and python3.
set -euo pipefail
loci="$1"; symbol="$2"; out="$3"; depth="${4:-2}"
mkdir -p "$out"
json() { python3 -c "import json,sys; v=json.load(sys.stdin); print($1)"; }

serve_out="$(mktemp)"
"$loci" serve --port 0 --json >"$serve_out" 2>/dev/null &
serve_pid=$!
driver_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
chromedriver --port="$driver_port" >/dev/null 2>&1 &
driver_pid=$!
trap 'kill $serve_pid $driver_pid 2>/dev/null || true; rm -f "$serve_out"' EXIT

for _ in $(seq 1 300); do [ -s "$serve_out" ] && break; sleep 0.1; done
addr=$(json 'v["listening"]' <"$serve_out")
signin=$(json 'v["web_signin"]' <"$serve_out")
wd="http://127.0.0.1:$driver_port"
for _ in $(seq 1 300); do curl -sf "$wd/status" >/dev/null && break; sleep 0.1; done

sid=$(curl -sf -X POST "$wd/session" -H 'Content-Type: application/json' -d '{
  "capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
    "binary": "/usr/bin/chromium",
    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,3000"]}}}}' |
  json 'v["value"]["sessionId"]')
go() { curl -sf -X POST "$wd/session/$sid/url" -H 'Content-Type: application/json' -d "{\"url\": \"http://$addr$1\"}" >/dev/null; }
shot() { curl -sf "$wd/session/$sid/screenshot" | json 'v["value"]' | base64 -d >"$out/$1.png"; echo "$out/$1.png"; }

go "$signin"
shot workspaces
id=$(curl -sf "$wd/session/$sid/url" | json 'v["value"]' >/dev/null; \
     curl -sf -X POST "$wd/session/$sid/element" -H 'Content-Type: application/json' \
       -d '{"using": "css selector", "value": "tbody a"}' | json 'list(v["value"].values())[0]')
href=$(curl -sf "$wd/session/$sid/element/$id/attribute/href" | json 'v["value"]')
ws=${href#*/web/w/}; ws=${ws%%/*}
sel=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$symbol")
go "/web/w/$ws/search?q=$sel"
shot search
go "/web/w/$ws/symbol?s=$sel&dir=callers&depth=$depth"
shot symbol
graph=$(curl -sf -X POST "$wd/session/$sid/element" -H 'Content-Type: application/json' \
  -d '{"using": "css selector", "value": "section[aria-labelledby=graph-h]"}' | json 'list(v["value"].values())[0]')
curl -sf "$wd/session/$sid/element/$graph/screenshot" | json 'v["value"]' | base64 -d >"$out/callers-graph.png"
echo "$out/callers-graph.png"
curl -sf -X DELETE "$wd/session/$sid" >/dev/null

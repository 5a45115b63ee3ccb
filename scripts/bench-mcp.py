#!/usr/bin/env python3
"""Benchmarks `loci mcp` over stdio with a thin JSON-RPC client (no SDK overhead in the
timings), against baselines measured in the same run.

    scripts/bench-mcp.py [--loci target/release/loci] [--tree DIR] [--calls 1000]

Reports, as JSON on stdout:
- `initialize`: from spawning `loci mcp` to its `initialize` answer, and the
  `initialize` round trip alone; on an indexed and on an unindexed workspace;
- `find` round trip on the warm index (p50/p99), and the same question through one
  `loci find --json` process per call (the baseline an agent shelling out pays);
- `relations` callers depth 3 round trip (p50/p99);
- RSS idle (after initialize) and after N mixed calls;
- `tools/list` size in bytes.

The tree (default: tokio's sources from the cargo registry) is indexed into a temp
dir with `--index-path`, so nothing is written into it.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


def pct(samples, p):
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(samples_ms):
    return {"p50_ms": round(pct(samples_ms, 50), 3), "p99_ms": round(pct(samples_ms, 99), 3), "n": len(samples_ms)}


def rss_kb(pid):
    """RSS, and the part of it that is the process's own memory (anonymous): the rest
    is the binary's pages, shared with every other loci and evictable."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("Rss", "Anonymous"):
                out[key.lower() + "_kb"] = int(line.split()[1])
    return out


class Client:
    def __init__(self, loci, workspace, env):
        self.started = time.perf_counter()
        self.p = subprocess.Popen([loci, "mcp", "--workspace", workspace], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.next_id = 1

    def request(self, method, params=None):
        i = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"loci mcp closed its output during {method}")
            v = json.loads(line)
            if v.get("id") == i:
                return v, line

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def timed(self, method, params=None):
        t = time.perf_counter()
        v, line = self.request(method, params)
        return (time.perf_counter() - t) * 1000, v, line

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def initialize(loci, ws, env):
    c = Client(loci, ws, env)
    rt, _, _ = c.timed("initialize", INIT)
    spawn_to_answer = (time.perf_counter() - c.started) * 1000
    c.notify("notifications/initialized")
    return c, spawn_to_answer, rt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", default="target/release/loci")
    ap.add_argument("--tree", default=None)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args()
    tree = args.tree or sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tokio-1.*")))[-1]
    home = tempfile.mkdtemp(prefix="loci-bench-mcp-")
    env = dict(os.environ, LOCI_HOME=home, XDG_CONFIG_HOME=os.path.join(home, "xdg"))
    for var in ("LOCI_LOG", "LOCI_SESSION_ID"):
        env.pop(var, None)
    index_path = os.path.join(home, "tokio-index.db")
    t = time.perf_counter()
    subprocess.run([args.loci, "index", tree, "--index-path", index_path, "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
    index_s = time.perf_counter() - t
    out = {"tree": tree, "index_s": round(index_s, 2)}

    # Warm the binary's pages so the first measured spawn is not a cold one.
    for _ in range(3):
        c, _, _ = initialize(args.loci, tree, env)
        c.close()

    # initialize on an unindexed workspace
    empty = tempfile.mkdtemp(prefix="loci-bench-empty-")
    with open(os.path.join(empty, "a.py"), "w") as f:
        f.write("def a():\n    return 1\n")
    inits = []
    for _ in range(10):
        c, spawn, rt = initialize(args.loci, empty, env)
        inits.append((spawn, rt))
        c.close()
    out["initialize_unindexed"] = {"spawn_to_answer": summary([s for s, _ in inits]), "round_trip": summary([r for _, r in inits])}

    inits = []
    for _ in range(10):
        c, spawn, rt = initialize(args.loci, tree, env)
        inits.append((spawn, rt))
        c.close()
    out["initialize_indexed"] = {"spawn_to_answer": summary([s for s, _ in inits]), "round_trip": summary([r for _, r in inits])}

    c, _, _ = initialize(args.loci, tree, env)
    _, _, line = c.timed("tools/list")
    out["tools_list_bytes"] = len(line)
    time.sleep(0.5)
    out["rss_idle_kb"] = rss_kb(c.p.pid)

    # The transport's floor: `ping` does no work.
    for _ in range(20):
        c.timed("ping")
    out["ping_round_trip"] = summary([c.timed("ping")[0] for _ in range(args.samples)])

    find = {"name": "find", "arguments": {"pattern": "spawn_blocking", "limit": 20}}
    for _ in range(20):
        c.timed("tools/call", find)
    samples = [c.timed("tools/call", find)[0] for _ in range(args.samples)]
    out["find_round_trip"] = summary(samples)

    # `spawn_blocking` names several definitions: ask for the most-called one by path.
    target, _ = c.timed("tools/call", {"name": "query", "arguments": {"sql":
        "SELECT f.path || ':' || s.name FROM symbols s JOIN files f ON f.id = s.file_id "
        "JOIN edges e ON e.dst_symbol = s.id AND e.kind = 'CALLS' WHERE s.name = 'spawn_blocking' "
        "GROUP BY s.id ORDER BY count(*) DESC LIMIT 1"}})[1:]
    rel = {"name": "relations", "arguments": {"target": target["result"]["structuredContent"]["rows"][0][0], "direction": "callers", "depth": 3}}
    first = c.timed("tools/call", rel)[1]
    if first["result"].get("isError"):
        raise SystemExit(f"relations failed: {first}")
    out["relations_target"] = rel["arguments"]["target"]
    out["relations_depth3_shown"] = first["result"].get("structuredContent", {}).get("page", {}).get("shown")
    samples = [c.timed("tools/call", rel)[0] for _ in range(args.samples)]
    out["relations_depth3_round_trip"] = summary(samples)

    mixed = [
        find,
        rel,
        {"name": "symbol", "arguments": {"symbol": "Runtime", "body_lines": 20}},
        {"name": "search", "arguments": {"pattern": "fn poll", "limit": 50}},
        {"name": "query", "arguments": {"sql": "SELECT kind, count(*) FROM symbols GROUP BY kind"}},
        {"name": "status", "arguments": {}},
        {"name": "relations", "arguments": {"target": "JoinHandle", "direction": "refs"}},
    ]
    t = time.perf_counter()
    for i in range(args.calls):
        c.timed("tools/call", mixed[i % len(mixed)])
    out["mixed_calls"] = args.calls
    out["mixed_calls_s"] = round(time.perf_counter() - t, 2)
    out["rss_after_mixed_kb"] = rss_kb(c.p.pid)
    c.close()

    # Baseline: the same find through one `loci find --json` process per call.
    base = []
    for _ in range(30):
        t = time.perf_counter()
        subprocess.run([args.loci, "find", "spawn_blocking", "--limit", "20", "--json", "-w", tree], env=env, check=True, stdout=subprocess.DEVNULL)
        base.append((time.perf_counter() - t) * 1000)
    out["baseline_cli_find_process"] = summary(base)
    out["find_speedup_vs_cli_p50"] = round(out["baseline_cli_find_process"]["p50_ms"] / out["find_round_trip"]["p50_ms"], 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())

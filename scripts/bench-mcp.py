#!/usr/bin/env python3
"""Benchmarks `loci mcp` over stdio with a thin JSON-RPC client (no SDK overhead in the
timings), against baselines measured in the same run.

    scripts/bench-mcp.py [--loci target/release/loci] [--tree DIR] [--calls 1000]
    scripts/bench-mcp.py --mixed 1000 --tree DIR [--in-tree]

`--mixed N` measures memory instead: one `loci mcp` on the tree, its RSS idle, then N
mixed calls with varied arguments (find/symbol/relations/search/query/status over names
drawn from the index itself), and its RSS, high-water mark and threads after. `--in-tree`
indexes into the tree's own `.loci/` (a copy of yours: a second run only syncs it),
else into a temp dir.

`--shared N` measures what N idle sessions at once cost: N `loci mcp` processes of
the same binary on the tree, each one's RSS, Pss (the binary's clean pages divided
among the processes that map them) and private memory, and their sums.

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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import INIT, summary


def rss_kb(pid):
    """RSS, and the part of it that is the process's own memory (anonymous): the rest
    is the binary's pages (file-backed), shared with every other loci and evictable.
    Also the private dirty pages, the high-water mark and the thread count."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("Rss", "Pss", "Anonymous", "Private_Clean", "Private_Dirty"):
                out[key.lower() + "_kb"] = int(line.split()[1])
    out["file_backed_kb"] = out["rss_kb"] - out["anonymous_kb"]
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM"):
                out[key.lower() + "_kb"] = int(line.split()[1])
            elif key == "Threads":
                out["threads"] = int(line.split()[1])
    return out


def smaps_top(pid, n=12):
    """The resident kilobytes per mapping name (the binary, [heap], anonymous, stacks,
    index files), largest first: where the RSS is."""
    by = {}
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
                name = parts[5] if len(parts) > 5 else "[anon]"
                name = os.path.basename(name) if name.startswith("/") else name
            elif parts[0] == "Rss:":
                by[name] = by.get(name, 0) + int(parts[1])
    return dict(sorted(by.items(), key=lambda kv: -kv[1])[:n])


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


def call_ok(c, name, arguments, times=None):
    ms, v, _ = c.timed("tools/call", {"name": name, "arguments": arguments})
    if times is not None:
        times.setdefault(name, []).append(ms)
    return v.get("result", {})


def mixed_calls(c, n, seed=7):
    """N calls with varied arguments over names drawn from the index: the workload of
    an agent exploring an unfamiliar tree. Returns the seconds taken and the errors."""
    import random
    rnd = random.Random(seed)
    rows = call_ok(c, "query", {"sql": "SELECT name FROM symbols WHERE kind IN ('function','method','struct','trait','enum') "
                                       "AND length(name) > 3 GROUP BY name ORDER BY count(*) DESC, name LIMIT 400", "limit": 400})
    names = [r[0] for r in rows["structuredContent"]["rows"]]
    rows = call_ok(c, "query", {"sql": "SELECT f.path || ':' || s.name FROM symbols s JOIN files f ON f.id = s.file_id "
                                       "WHERE s.kind IN ('function','method') ORDER BY s.id LIMIT 400", "limit": 400})
    selectors = [r[0] for r in rows["structuredContent"]["rows"]]
    rows = call_ok(c, "query", {"sql": "SELECT path FROM files WHERE path LIKE '%/src/%' ORDER BY id LIMIT 200", "limit": 200})
    paths = [r[0] for r in rows["structuredContent"]["rows"]]
    words = ["fn new", "impl ", "TODO", "unwrap()", "pub(crate)", "#[test]", "Result<", "match ", "async fn", "unsafe"]
    sqls = ["SELECT kind, count(*) FROM symbols GROUP BY kind",
            "SELECT lang, count(*) FROM files GROUP BY lang",
            "SELECT kind, confidence, count(*) FROM edges GROUP BY kind, confidence",
            "SELECT f.path, count(*) AS n FROM symbols s JOIN files f ON f.id = s.file_id GROUP BY f.id ORDER BY n DESC LIMIT 20"]
    errors = {}
    times = {}
    t = time.perf_counter()
    for i in range(n):
        k = i % 10
        if k in (0, 1):
            name = rnd.choice(names)
            a = ("find", {"pattern": rnd.choice([name, name[:4] + "*", "*" + name[-4:]]), "limit": rnd.choice([10, 50, 200])})
        elif k == 2:
            a = ("symbol", {"symbol": rnd.choice(selectors), "body_lines": rnd.choice([0, 20, 80])})
        elif k in (3, 4):
            a = ("relations", {"target": rnd.choice(selectors), "direction": rnd.choice(["callers", "callees", "refs"]),
                               "depth": rnd.choice([1, 2, 3])})
        elif k == 5:
            a = ("relations", {"target": rnd.choice(paths), "direction": "impact", "depth": 2})
        elif k == 6:
            a = ("search", {"pattern": rnd.choice(words + names), "limit": rnd.choice([20, 100]),
                            "ignore_case": rnd.choice([True, False])})
        elif k == 7:
            a = ("query", {"sql": rnd.choice(sqls)})
        elif k == 8:
            a = ("status", {})
        else:
            a = ("find", {"pattern": rnd.choice(names), "kind": "function", "max_chars": 100000})
        r = call_ok(c, *a, times=times)
        if r.get("isError"):
            kind = r.get("_meta", {}).get("loci/error", {}).get("kind", "?")
            errors[f"{a[0]} {kind}"] = errors.get(f"{a[0]} {kind}", 0) + 1
    per_tool = {k: dict(summary(v), max_ms=round(max(v), 1)) for k, v in sorted(times.items())}
    return time.perf_counter() - t, errors, per_tool


def shared_main(args, tree, home, env):
    """`--shared N`: N idle sessions of one binary at once."""
    out = {"tree": tree, "index_s": index_tree(args.loci, tree, os.path.join(home, "index.db"), env)}
    for n in (1, args.shared):
        clients = []
        for _ in range(n):
            c, _, _ = initialize(args.loci, tree, env)
            c.timed("tools/list")
            clients.append(c)
        time.sleep(1.0)
        each = [rss_kb(c.p.pid) for c in clients]
        out[f"{n}_processes"] = {
            "each": each,
            "sum_rss_kb": sum(e["rss_kb"] for e in each),
            "sum_pss_kb": sum(e["pss_kb"] for e in each),
            "mean_pss_kb": round(sum(e["pss_kb"] for e in each) / n),
        }
        for c in clients:
            c.close()
    print(json.dumps(out, indent=2))


def index_tree(loci, tree, index_path, env):
    t = time.perf_counter()
    subprocess.run([loci, "index", tree, "--index-path", index_path, "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
    return round(time.perf_counter() - t, 2)


def mixed_main(args, tree, home, env):
    """`--mixed N`: memory of one session through N varied calls."""
    out = {"tree": tree}
    if args.in_tree:
        t = time.perf_counter()
        subprocess.run([args.loci, "index", tree, "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
        out["index_s"] = round(time.perf_counter() - t, 2)
    else:
        out["index_s"] = index_tree(args.loci, tree, os.path.join(home, "index.db"), env)
    c, _, _ = initialize(args.loci, tree, env)
    call_ok(c, "status", {})
    time.sleep(1.0)
    out["idle"] = rss_kb(c.p.pid)
    out["idle_top"] = smaps_top(c.p.pid)
    secs, errors, per_tool = mixed_calls(c, args.mixed)
    out["mixed_calls"] = args.mixed
    out["mixed_calls_s"] = round(secs, 2)
    out["tool_errors"] = errors
    out["per_tool"] = per_tool
    out["after"] = rss_kb(c.p.pid)
    out["after_top"] = smaps_top(c.p.pid)
    c.close()
    print(json.dumps(out, indent=2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", default="target/release/loci")
    ap.add_argument("--tree", default=None)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--mixed", type=int, default=0, help="memory mode: N mixed calls on the tree")
    ap.add_argument("--in-tree", action="store_true", help="(--mixed) index into the tree's own .loci/")
    ap.add_argument("--shared", type=int, default=0, help="memory of N idle sessions of the binary at once")
    args = ap.parse_args()
    tree = args.tree or sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tokio-1.*")))[-1]
    home = tempfile.mkdtemp(prefix="loci-bench-mcp-")
    env = dict(os.environ, LOCI_HOME=home, XDG_CONFIG_HOME=os.path.join(home, "xdg"))
    for var in ("LOCI_LOG", "LOCI_SESSION_ID"):
        env.pop(var, None)
    try:
        if args.mixed:
            return mixed_main(args, tree, home, env)
        if args.shared:
            return shared_main(args, tree, home, env)
        return full_main(args, tree, home, env)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def full_main(args, tree, home, env):
    """The default: latencies, initialize, RSS idle and after mixed calls, tools/list."""
    index_path = os.path.join(home, "tokio-index.db")
    out = {"tree": tree, "index_s": index_tree(args.loci, tree, index_path, env)}

    # Warm the binary's pages so the first measured spawn is not a cold one.
    for _ in range(3):
        c, _, _ = initialize(args.loci, tree, env)
        c.close()

    # initialize on an unindexed workspace
    empty = os.path.join(home, "empty")
    os.mkdir(empty)
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
    _, listed, line = c.timed("tools/list")
    out["tools_list_bytes"] = len(line)
    # As the MCP Python SDK's test measures it: json.dumps of the tools (", " and ": "
    # separators, non-ASCII escaped).
    out["tools_list_sdk_bytes"] = len(json.dumps(listed["result"]["tools"]).encode())
    time.sleep(0.5)
    out["rss_idle_kb"] = rss_kb(c.p.pid)
    out["rss_idle_top_kb"] = smaps_top(c.p.pid)

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

"""What the MCP benchmark scripts share (bench-mcp.py, bench-mcp-recall.py,
bench-mcp-meaning.py): the `initialize` parameters of a thin JSON-RPC client, one
`loci mcp` session over stdio, and percentiles of timings."""

import json
import subprocess
import time

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


def pct(samples, p):
    """The p-th percentile of `samples` (nearest rank)."""
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(samples_ms):
    """p50, p99 and the count of timings in milliseconds."""
    return {"p50_ms": round(pct(samples_ms, 50), 3), "p99_ms": round(pct(samples_ms, 99), 3), "n": len(samples_ms)}


class Session:
    """One `loci mcp` process and the requests sent to it, one at a time."""

    def __init__(self, loci, workspace, env=None):
        self.p = subprocess.Popen([loci, "mcp", "--workspace", workspace],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.next_id = 1
        self.request("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"loci mcp closed its output during {method}")
            v = json.loads(line)
            if v.get("id") == i:
                if "error" in v:
                    raise SystemExit(f"{method}: {v['error']}")
                return v["result"]

    def tool(self, name, arguments):
        """The tool's structured answer and the round trip in milliseconds."""
        t = time.perf_counter()
        r = self.request("tools/call", {"name": name, "arguments": arguments})
        ms = (time.perf_counter() - t) * 1000
        if r.get("isError"):
            raise SystemExit(f"{name}: {r}")
        return r.get("structuredContent") or json.loads(r["content"][0]["text"]), ms

    def peak_rss_mb(self):
        """The process's peak resident set (VmHWM), in MB."""
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return None

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)

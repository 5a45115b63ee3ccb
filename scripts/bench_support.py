"""What the MCP benchmark scripts share (bench-mcp.py, bench-mcp-recall.py): the
`initialize` parameters of a thin JSON-RPC client, and percentiles of timings."""

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


def pct(samples, p):
    """The p-th percentile of `samples` (nearest rank)."""
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(samples_ms):
    """p50, p99 and the count of timings in milliseconds."""
    return {"p50_ms": round(pct(samples_ms, 50), 3), "p99_ms": round(pct(samples_ms, 99), 3), "n": len(samples_ms)}

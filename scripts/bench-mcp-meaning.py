#!/usr/bin/env python3
"""Search by meaning as an agent sends it: the MCP `search` tool's `meaning` mode over
`loci mcp` (stdio, a thin JSON-RPC client), one process, the model loaded once, N
sentence queries against a workspace that `loci index` and `loci embed` have filled.

    scripts/bench-mcp-meaning.py --workspace DIR [--queries 200] [--signals hybrid,vectors,text]
                                 [--loci target/release/loci]
                                 [--baseline OTHER_LOCI --baseline-workspace DIR2]
                                 [--cli-queries 20]

The queries are the first sentences of the workspace's Rust doc comments (`/// ...` up to
the first `. `, 4 to 30 words), deduplicated and picked by a fixed hash: the same set on
every run. Each query runs once per signals mode, the modes interleaved. The first call
(model and vectors loaded) is reported apart from the rest.

`--baseline OTHER_LOCI` compares with an older build that has no MCP meaning mode: both
builds then run `loci search --meaning Q --json` (one process per query: the model
loaded, the vectors scanned from SQLite each time) for the first `--cli-queries`
queries, alternating, in the same run. The older build reads its own copy of the
workspace (`--baseline-workspace`: a newer `loci embed` upgrades the vectors file's
layout, which the older build then refuses).

Reports JSON on stdout: per mode p50/p99 over MCP, the first call, the process's peak
RSS (VmHWM), and the CLI timings of both builds.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time

from bench_support import Session, summary


def search(session, text, signals):
    """The answer's hit count and the round trip in milliseconds."""
    answer, ms = session.tool("search", {"meaning": text, "signals": signals})
    return len(answer["hits"]), ms


DOC = re.compile(r"^\s*///\s?(.*)$")


def sentences(root, n):
    """N first sentences of doc comments under `root`, picked by a fixed hash."""
    found = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", ".loci", "target")]
        for name in files:
            if not name.endswith(".rs"):
                continue
            try:
                lines = open(os.path.join(d, name), encoding="utf-8").read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            prev_doc = False
            for i, line in enumerate(lines):
                m = DOC.match(line)
                if m and not prev_doc:
                    text = m.group(1)
                    j = i + 1
                    while ("." not in text and j < len(lines) and DOC.match(lines[j])
                           and DOC.match(lines[j]).group(1).strip()):
                        text += " " + DOC.match(lines[j]).group(1)
                        j += 1
                    first = text.split(". ")[0].strip().rstrip(".")
                    words = first.split()
                    if 4 <= len(words) <= 30 and not first.startswith(("#", "```")):
                        found.add(first)
                prev_doc = bool(m)
    return sorted(found, key=lambda s: hashlib.sha256(s.encode()).hexdigest())[:n]


def cli_ms(loci, workspace, text):
    t = time.perf_counter()
    out = subprocess.run([loci, "search", "--meaning", text, "--json"], cwd=workspace,
                         capture_output=True)
    ms = (time.perf_counter() - t) * 1000
    if out.returncode != 0:
        raise SystemExit(f"{loci} search --meaning {text!r}: {out.stdout[-500:]!r}")
    return ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--signals", default="hybrid,vectors,text")
    ap.add_argument("--loci", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "loci"))
    ap.add_argument("--baseline")
    ap.add_argument("--baseline-workspace")
    ap.add_argument("--cli-queries", type=int, default=20)
    a = ap.parse_args()
    loci = os.path.abspath(a.loci)
    modes = a.signals.split(",")
    queries = sentences(a.workspace, a.queries)
    print(f"{len(queries)} queries from {a.workspace}", file=sys.stderr)

    s = Session(loci, a.workspace)
    _, first = search(s, queries[0], modes[0])
    timings = {m: [] for m in modes}
    empty = 0
    for q in queries:
        for m in modes:
            hits, ms = search(s, q, m)
            timings[m].append(ms)
            empty += hits == 0
    report = {"queries": len(queries), "first_call_ms": round(first, 1),
              "empty_answers": empty,
              "mcp": {m: summary(t) for m, t in timings.items()},
              "mcp_peak_rss_mb": s.peak_rss_mb()}
    s.close()

    if a.baseline:
        if not a.baseline_workspace:
            raise SystemExit("--baseline needs --baseline-workspace")
        new, old = [], []
        for q in queries[:a.cli_queries]:
            new.append(cli_ms(loci, a.workspace, q))
            old.append(cli_ms(os.path.abspath(a.baseline), a.baseline_workspace, q))
        report["cli_hybrid"] = {"this": summary(new), "baseline": summary(old)}
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

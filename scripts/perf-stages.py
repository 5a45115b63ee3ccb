#!/usr/bin/env python3
"""Where a recall's time goes, stage by stage, from a `perf record --call-graph dwarf` of
a `loci mcp` session (`scripts/bench-mcp-recall.py --perf OUT.data`).

    scripts/perf-stages.py OUT.data QUERIES

Each sample is charged to the innermost stage its call stack passes through (full
text, the query's embedding, the vector k-NN, the graph, the hits' summaries, links and
snippets, the answer's JSON, opening the store, the index's freshness); the rest of the
tool call is `other`, and samples outside any tool call (the JSON-RPC loop, idle
threads) are left out, except the encoder's and the k-NN's worker threads. Prints, per stage, its share of the tool calls' samples and its
mean milliseconds per recall (samples / frequency / QUERIES).
"""

import subprocess
import sys

# (stage, substrings of a frame's symbol), checked from the leaf up: the first frame
# that matches any stage names the sample's stage.
STAGES = [
    ("full text", ["fts_impl", "SqliteStore>::fts", "score_common", "keep_filtered"]),
    ("query embedding", ["loci_embed::", "ModelEmbedder"]),
    ("vector k-NN", ["vector::nearest", "nearest_cached", "vector_cache", "vector_scan"]),
    ("graph", ["entities_named", "memories_of_entities", "entity_edges", "entities_of_memories",
               "memories_linked_to", "CodeGraph", "mentions::extract"]),
    ("hits: summaries", ["summaries_impl", "SqliteStore>::summaries"]),
    ("hits: links", ["checked_links", "links_of"]),
    ("hits: snippets", ["read_impl", "SqliteStore>::read", "snippet::", "bodies"]),
    ("fusion", ["fusion::"]),
    ("answer JSON", ["serde_json", "to_value", "serde::ser"]),
    ("open store + code graph", ["Ctx::open", "of_target", "IndexCodeGraph::open", "Config::load",
                                 "SqliteStore::open", "open_connections"]),
    ("index freshness", ["freshness", "Workspace::read"]),
]
ROOT = "loci_mcp::server::LociMcp::call"


def samples(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "period,ip,sym"],
                         capture_output=True, check=True, text=True).stdout
    for block in out.split("\n\n"):
        frames = [line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
                  for line in block.strip().splitlines()[1:]]
        if frames:
            yield frames


def main():
    path, queries = sys.argv[1], int(sys.argv[2])
    freq = None
    header = subprocess.run(["perf", "report", "-i", path, "--header-only"], capture_output=True,
                            text=True).stdout
    for line in header.splitlines():
        if "sample_freq" in line:
            freq = int(line.split("sample_freq")[1].split(",")[0].strip(" =}"))
    counts = {}
    total = 0
    for frames in samples(path):
        stage = None
        for f in frames:
            stage = next((name for name, keys in STAGES if any(k in f for k in keys)), None)
            if stage:
                break
        if not any(ROOT in f for f in frames):
            # A helper thread's share of a stage (the encoder's and the k-NN's
            # workers) counts; the rest outside a tool call does not.
            if stage not in ("query embedding", "vector k-NN"):
                continue
        total += 1
        stage = stage or "other"
        counts[stage] = counts.get(stage, 0) + 1
    print(f"{total} samples in tool calls at {freq} Hz over {queries} recalls")
    print("| stage | share | ms per recall |\n|---|---:|---:|")
    for stage, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        ms = n / freq / queries * 1000 if freq else float("nan")
        print(f"| {stage} | {100 * n / total:.1f} % | {ms:.2f} |")
    ms = total / freq / queries * 1000 if freq else float("nan")
    print(f"| all | 100 % | {ms:.2f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Embedding throughput and peak RSS: loci's packed encoder against candle's BertModel
# (the path loci ran before: sorted, 16 per batch, padded to the batch's longest), on
# the same chunks, each engine in its own process (so each peak RSS is its own), the
# two alternated in the same run so both see the same machine. Prints each run's line
# and, per chunk mix, the median chunks/s and peak RSS of each engine and their ratio.
#
# Usage: scripts/bench-embed.sh [corpus.jsonl] [runs] [chunks]
#   corpus.jsonl: the quality set's (scripts/quality_set.py OUT writes OUT/corpus.jsonl);
#   without it, loci's own docs. Needs the model installed (loci models install) and
#   cargo build --release -p loci-embed --example embed_bench.
#   BENCH_EMBED_MIXES (default "real full") and BENCH_EMBED_ARGS (extra flags) tune it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-}
runs=${2:-3}
chunks=${3:-256}
bin=${EMBED_BENCH:-$here/target/release/examples/embed_bench}
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p loci-embed --example embed_bench" >&2; exit 2; }
text=()
[ -n "$corpus" ] && text=(--text "$corpus")
python3 - "$bin" "$runs" "$chunks" "${BENCH_EMBED_MIXES:-real full}" "${BENCH_EMBED_ARGS:-}" "${text[@]}" <<'PY'
import json, statistics, subprocess, sys
bin, runs, chunks, mixes, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5].split()
text = sys.argv[6:]
for mix in mixes:
    got = {"candle": [], "packed": []}
    for i in range(runs):
        for engine in ("candle", "packed") if i % 2 == 0 else ("packed", "candle"):
            out = subprocess.run([bin, "--engine", engine, "--mix", mix, "--chunks", chunks, *text, *extra],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{engine} {mix}: {out.stderr}")
            line = json.loads(out.stdout.strip().splitlines()[-1])
            print(json.dumps(line))
            got[engine].append(line)
    med = lambda e, k: statistics.median(r[k] for r in got[e])
    c, p = got["candle"][0], got["packed"][0]
    print(f"# mix {mix}: {c['chunks']} chunks, mean {c['mean_tokens']} / p90 {c['p90_tokens']} / max {c['max_tokens']} tokens")
    for k in ("chunks_per_s", "gflop_per_s", "gflop_per_cpu_s", "peak_rss_mb"):
        a, b = med("candle", k), med("packed", k)
        print(f"#   {k}: candle {a:.1f}  packed {b:.1f}  ratio {b / a:.2f}")
PY

#!/usr/bin/env bash
# Embedding throughput and peak RSS: loci's packed encoder in f32 and in 8-bit (AVX-512
# VNNI) against candle's BertModel (the path loci ran before: sorted, 16 per batch,
# padded to the batch's longest), on the same chunks, each engine in its own process
# (so each peak RSS is its own), alternated in the same run so all see the same machine.
# Prints each run's line and, per chunk mix, the median chunks/s, GFLOP per CPU second
# and peak RSS of each engine and their ratio to the first engine's.
#
# Usage: scripts/bench-embed.sh [corpus.jsonl] [runs] [chunks]
#   corpus.jsonl: the quality set's (scripts/quality_set.py OUT writes OUT/corpus.jsonl);
#   without it, loci's own docs. Needs the model installed (loci models install) and
#   cargo build --release -p loci-embed --example embed_bench.
#   BENCH_EMBED_MIXES (default "real full"), BENCH_EMBED_ENGINES (default "candle f32
#   int8"; f32 and int8 are the packed encoder's precisions) and BENCH_EMBED_ARGS (extra
#   flags) tune it. EMBED_BENCH_BASE=PATH (an embed_bench built from an older commit)
#   adds the engines base-f32 and base-int8, that binary's packed encoder, to put in
#   BENCH_EMBED_ENGINES for a before/after in one run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-}
runs=${2:-3}
chunks=${3:-256}
bin=${EMBED_BENCH:-$here/target/release/examples/embed_bench}
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p loci-embed --example embed_bench" >&2; exit 2; }
text=()
[ -n "$corpus" ] && text=(--text "$corpus")
python3 - "$bin" "$runs" "$chunks" "${BENCH_EMBED_MIXES:-real full}" "${BENCH_EMBED_ENGINES:-candle f32 int8}" "${BENCH_EMBED_ARGS:-}" "${EMBED_BENCH_BASE:-}" "${text[@]}" <<'PY'
import json, os, statistics, subprocess, sys
bin, runs, chunks, mixes, engines, extra, base_bin = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5].split(), sys.argv[6].split(), sys.argv[7]
text = sys.argv[8:]
flags = {"candle": ["--engine", "candle"], "packed": ["--engine", "packed"],
         "f32": ["--engine", "packed", "--precision", "f32"], "int8": ["--engine", "packed", "--precision", "int8"]}
flags.update({f"base-{p}": flags[p] for p in ("f32", "int8")})
binary = lambda e: base_bin if e.startswith("base-") else bin
if any(e.startswith("base-") for e in engines) and not os.access(base_bin, os.X_OK):
    sys.exit(f"engines {engines} name base-*: set EMBED_BENCH_BASE to an older embed_bench")
for mix in mixes:
    got = {e: [] for e in engines}
    for i in range(runs):
        for engine in engines if i % 2 == 0 else engines[::-1]:
            out = subprocess.run([binary(engine), *flags[engine], "--mix", mix, "--chunks", chunks, *text, *extra],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{engine} {mix}: {out.stderr}")
            line = json.loads(out.stdout.strip().splitlines()[-1])
            line["load_avg"] = os.getloadavg()[0]
            line["label"] = engine
            # What two idle cores would do at this process's rate per CPU second.
            line["chunks_per_cpu_s_x2"] = round(2 * line["chunks"] / max(line["cpu_s"], 0.01), 1)
            print(json.dumps(line))
            got[engine].append(line)
    med = lambda e, k: statistics.median(r[k] for r in got[e])
    c = got[engines[0]][0]
    print(f"# mix {mix}: {c['chunks']} chunks, mean {c['mean_tokens']} / p90 {c['p90_tokens']} / max {c['max_tokens']} tokens")
    for k in ("chunks_per_s", "chunks_per_cpu_s_x2", "gflop_per_cpu_s", "seconds", "cpu_s", "load_avg", "peak_rss_mb"):
        base = med(engines[0], k)
        cells = "  ".join(f"{e} {med(e, k):.1f} ({med(e, k) / base:.2f}x)" for e in engines)
        print(f"#   {k}: {cells}")
PY

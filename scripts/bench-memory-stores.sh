#!/usr/bin/env bash
# Remember and recall latency at scale, SQLite against PostgreSQL, in one run on this
# machine (crates/memory/examples/store_latency.rs): p50/p99 of each and the ratio to
# SQLite; on a PostgreSQL with pgvector, the vector k-NN by its HNSW index against the
# exact scan loci falls back to. Starts a throwaway PostgreSQL cluster in a temporary
# directory (as `nobody` when run as root) and removes it at the end.
#
# Usage: scripts/bench-memory-stores.sh [N [QUERIES]]   (default 100000 memories, 500 queries)
#   PG_BIN=/path/to/postgresql/bin   the server to run (default: $LOCI_TEST_PGVECTOR_BIN,
#                                    the pgvector build .ci/run unpacks, else Debian's newest)
set -euo pipefail

n=${1:-100000}
queries=${2:-500}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/pg_cluster.sh"
pg_cluster_start bench

mkdir -p "$PG_WORK/sqlite"
cargo build --release -q -p loci-memory --example store_latency --manifest-path "$here/Cargo.toml"
"${CARGO_TARGET_DIR:-$here/target}/release/examples/store_latency" "$n" "$PG_WORK/sqlite/memory.db" \
    "$PG_URL" "$queries"

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
bin=${PG_BIN:-${LOCI_TEST_PGVECTOR_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)}}
[ -x "$bin/postgres" ] || { echo "no PostgreSQL server in $bin" >&2; exit 1; }

work=$(mktemp -d)
as=()
if [ "$(id -u)" = 0 ]; then
    chown nobody:nogroup "$work"
    as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
stop() {
    [ -f "$work/data/postmaster.pid" ] && kill -QUIT "$(head -n 1 "$work/data/postmaster.pid")" 2>/dev/null
    for _ in $(seq 100); do [ -f "$work/data/postmaster.pid" ] || break; sleep 0.1; done
    rm -rf "$work"
}
trap stop EXIT
"${as[@]}" "$bin/initdb" -D "$work/data" -U loci --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
# Durable commits as a team's server would have them (fsync on), shared buffers for 100k.
"${as[@]}" "$bin/postgres" -D "$work/data" -k "$work" -p 5433 -c listen_addresses= \
    -c shared_buffers=512MB -c maintenance_work_mem=512MB >"$work/server.log" 2>&1 &
for _ in $(seq 300); do "$bin/pg_isready" -q -h "$work" -p 5433 && break; sleep 0.1; done
"$bin/psql" -q -h "$work" -p 5433 -U loci -d postgres -c "CREATE DATABASE bench"
"$bin/postgres" --version

mkdir -p "$work/sqlite"
cargo build --release -q -p loci-memory --example store_latency --manifest-path "$here/Cargo.toml"
"${CARGO_TARGET_DIR:-$here/target}/release/examples/store_latency" "$n" "$work/sqlite/memory.db" \
    "host=$work port=5433 user=loci dbname=bench" "$queries"

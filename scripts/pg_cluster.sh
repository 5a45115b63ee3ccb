# A throwaway PostgreSQL cluster for the measuring scripts, sourced by them:
# `pg_cluster_start DB` runs initdb and a server in a temporary directory (as `nobody`
# when run as root: PostgreSQL refuses root), on a Unix socket only, creates database DB
# and sets PG_URL to it; the cluster is stopped and removed when the script exits.
#   PG_BIN=/path/to/postgresql/bin   the server to run (default: $LOCI_TEST_PGVECTOR_BIN,
#                                    the pgvector build .ci/run unpacks, else Debian's newest)

pg_cluster_start() {
    local db=$1
    PG_BIN=${PG_BIN:-${LOCI_TEST_PGVECTOR_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)}}
    [ -x "$PG_BIN/postgres" ] || { echo "no PostgreSQL server in $PG_BIN" >&2; return 1; }
    PG_WORK=$(mktemp -d)
    local as=()
    if [ "$(id -u)" = 0 ]; then
        chown nobody:nogroup "$PG_WORK"
        as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
    fi
    trap pg_cluster_stop EXIT
    "${as[@]}" "$PG_BIN/initdb" -D "$PG_WORK/data" -U loci --auth=trust -E UTF8 \
        --locale=C.UTF-8 --no-sync >/dev/null
    # Durable commits as a team's server would have them (fsync on), shared buffers for 100k.
    "${as[@]}" "$PG_BIN/postgres" -D "$PG_WORK/data" -k "$PG_WORK" -p 5433 -c listen_addresses= \
        -c shared_buffers=512MB -c maintenance_work_mem=512MB >"$PG_WORK/server.log" 2>&1 &
    local _
    for _ in $(seq 300); do "$PG_BIN/pg_isready" -q -h "$PG_WORK" -p 5433 && break; sleep 0.1; done
    "$PG_BIN/psql" -q -h "$PG_WORK" -p 5433 -U loci -d postgres -c "CREATE DATABASE $db"
    "$PG_BIN/postgres" --version >&2
    PG_URL="host=$PG_WORK port=5433 user=loci dbname=$db"
}

pg_cluster_stop() {
    [ -f "$PG_WORK/data/postmaster.pid" ] && kill -QUIT "$(head -n 1 "$PG_WORK/data/postmaster.pid")" 2>/dev/null
    local _
    for _ in $(seq 100); do [ -f "$PG_WORK/data/postmaster.pid" ] || break; sleep 0.1; done
    rm -rf "$PG_WORK"
}

#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store's tests, from Debian's packages.
#
#   eval "$(bash .ci/postgres.sh start)"   # installs if needed, starts, prints the export line
#   bash .ci/postgres.sh stop              # stops it (the data folder is removed)
#
# The server runs as the unprivileged `postgres` user (made by the package) on 127.0.0.1 and
# a port of its own (PONTOON_PG_PORT, default 54329), with its data under PONTOON_PG_DIR
# (default /tmp/pontoon-pg). Only the export line goes to stdout; the rest goes to stderr.
set -euo pipefail
ACTION=${1:-start}
PORT=${PONTOON_PG_PORT:-54329}
DIR=${PONTOON_PG_DIR:-/tmp/pontoon-pg}
DB=pontoon_test

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

if [ "$ACTION" = stop ]; then
    BIN=$(bindir)
    if [ -n "$BIN" ] && [ -f "$DIR/data/postmaster.pid" ]; then
        as_pg "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >&2 || true
    fi
    rm -rf "$DIR"
    exit 0
fi

if [ -z "$(bindir)" ] || ! command -v psql >/dev/null; then
    echo "postgres.sh: installing Debian's postgresql" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
fi
BIN=$(bindir)

if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$DIR" postgres
    mkdir -p "$DIR"
    chown postgres "$DIR"
else
    mkdir -p "$DIR"
fi

if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_pg "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --no-locale >&2
fi
if ! as_pg "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
    as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
        -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c max_connections=200" \
        start >&2
fi
if ! as_pg psql -h 127.0.0.1 -p "$PORT" -U postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
    as_pg psql -h 127.0.0.1 -p "$PORT" -U postgres -qc "CREATE DATABASE $DB" >&2
fi
echo "export PONTOON_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$PORT/$DB"

#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benchmarks: its own data folder under /tmp and
# its own port, run as the postgres user when we are root (initdb and pg_ctl refuse root).
#   scripts/pg-cluster.sh start   -> a fresh cluster; prints the admin URL
#                                    (postgresql://postgres@127.0.0.1:PORT/postgres)
#   scripts/pg-cluster.sh stop    -> stops it (the data folder stays until the next start)
#   scripts/pg-cluster.sh resume  -> starts the existing cluster again (outage tests)
#   scripts/pg-cluster.sh crash   -> stops it in immediate mode, as a power cut would (chaos test)
# DLQ_PG_PORT (default 55432) and DLQ_PG_DIR (default /tmp/dlq-pg-$DLQ_PG_PORT) override.
set -euo pipefail

port="${DLQ_PG_PORT:-55432}"
dir="${DLQ_PG_DIR:-/tmp/dlq-pg-$port}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [ -z "$bin" ]; then
  echo "pg-cluster: PostgreSQL server binaries not found (install the postgresql package)" >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

stop() {
  if [ -f "$dir/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir" -m fast -w -t 30 stop >/dev/null 2>&1 || true
  fi
}

run_server() {
  # Tests: fsync off (their data is thrown away and they create many databases). Benchmarks set
  # DLQ_PG_DURABLE=1: a figure that claims durability must pay for it.
  local speed="-c fsync=off -c synchronous_commit=off"
  if [ "${DLQ_PG_DURABLE:-0}" = 1 ]; then speed=""; fi
  as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 30 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $speed -c max_connections=300" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

case "${1:-}" in
  start)
    stop  # a cluster left over from an earlier run
    rm -rf "$dir"
    mkdir -p "$dir"
    chmod 700 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; fi
    as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 -N >"$dir.initdb.log" 2>&1 \
      || { cat "$dir.initdb.log" >&2; exit 1; }
    run_server
    ;;
  resume)
    run_server
    ;;
  stop)
    stop
    ;;
  crash)
    as_owner "$bin/pg_ctl" -D "$dir" -m immediate -w -t 30 stop >/dev/null
    ;;
  *)
    echo "usage: $0 start|stop|resume|crash" >&2
    exit 2
    ;;
esac

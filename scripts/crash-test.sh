#!/usr/bin/env bash
# The crash test: mixed load from many clients against dlqd, kill -9 at a random moment, restart,
# and check every promise against the database itself:
#   - no acknowledged enqueue is missing (every id answered 201 is a row);
#   - no acknowledged success is undone, and no message succeeded twice (one `succeeded` entry in
#     its history at most);
#   - nothing stays `processing` past its lease once the reaper had its chance;
#   - every row has a known status.
#   scripts/crash-test.sh [--rounds N] [--seconds S] [--backend sqlite|postgresql|both]
# Defaults: 20 rounds of up to 5 s each, both backends. scripts/test.sh runs a short form.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=20; seconds=5; backend=both
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--seconds S] [--backend sqlite|postgresql|both]" >&2; exit 2 ;;
  esac
done

DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh
if [ ! -x build/release/app/dlqd ] || [ ! -x build/release/app/dlq-bench ] || [ "${DLQ_CRASH_BUILD:-1}" = 1 ]; then
  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/release -j"${JOBS:-2}" --target dlqd dlq-bench >/dev/null
fi
dlqd=build/release/app/dlqd
bench=build/release/app/dlq-bench
work="$(mktemp -d /tmp/dlq-crash-XXXXXX)"
pid=""
pg_started=0
cleanup() {
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi
  if [ "$pg_started" = 1 ]; then DLQ_PG_PORT=55435 scripts/pg-cluster.sh stop >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

start_dlqd() {  # start_dlqd DB_URL
  : > "$work/out"
  "$dlqd" --config "$work/config.json" --listen 127.0.0.1:0 --db "$1" > "$work/out" 2>> "$work/log" &
  pid=$!
  for _ in $(seq 1 1500); do grep -q "listening on" "$work/out" 2>/dev/null && break; sleep 0.02; done
  port="$(grep -o '[0-9]*$' "$work/out" | head -n 1)"
  [ -n "$port" ] || { echo "dlqd did not start" >&2; tail -20 "$work/log" >&2; exit 1; }
}

# sql DB_URL QUERY: one value, from the database itself.
sql() {
  if [[ "$1" == sqlite:* ]]; then
    sqlite3 -bail -cmd ".timeout 10000" "${1#sqlite:}" "$2"
  else
    PGOPTIONS='-c client_min_messages=warning' psql -qtA "$1" -c "$2"
  fi
}

# load_ids DB_URL TABLE FILE: the acknowledged ids into a table of their own.
load_ids() {
  sql "$1" "DROP TABLE IF EXISTS $2; CREATE TABLE $2 (id BIGINT)" >/dev/null
  if [[ "$1" == sqlite:* ]]; then
    # dlqd is running: wait for its writer rather than lose rows of the import.
    sqlite3 -bail -cmd ".timeout 10000" "${1#sqlite:}" ".import $3 $2"
  else
    psql -qtA "$1" -c "\\copy $2 FROM '$3'" >/dev/null
  fi
}

failures=0
check() {  # check DB_URL LABEL: the promises, after a restart
  local db="$1" label="$2"
  load_ids "$db" acked_enqueued "$work/enqueued"
  load_ids "$db" acked_succeeded "$work/succeeded"
  if [ "$(sql "$db" "SELECT COUNT(*) FROM acked_enqueued")" != "$(wc -l < "$work/enqueued")" ] ||
     [ "$(sql "$db" "SELECT COUNT(*) FROM acked_succeeded")" != "$(wc -l < "$work/succeeded")" ]; then
    echo "$label: the acknowledged ids did not all load" >&2
    failures=$((failures + 1))
  fi
  local missing undone twice unknown acked succeeded total
  acked="$(sql "$db" "SELECT COUNT(DISTINCT id) FROM acked_enqueued")"
  succeeded="$(sql "$db" "SELECT COUNT(DISTINCT id) FROM acked_succeeded")"
  missing="$(sql "$db" "SELECT COUNT(*) FROM acked_enqueued a WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = a.id)")"
  undone="$(sql "$db" "SELECT COUNT(*) FROM acked_succeeded a JOIN messages m ON m.id = a.id WHERE m.status <> 'succeeded'")"
  twice="$(sql "$db" "SELECT COUNT(*) FROM (SELECT message_id FROM attempts WHERE outcome = 'succeeded' GROUP BY message_id HAVING COUNT(*) > 1) t")"
  unknown="$(sql "$db" "SELECT COUNT(*) FROM messages WHERE status NOT IN ('pending','processing','succeeded','dead','dismissed')")"
  total="$(sql "$db" "SELECT COUNT(*) FROM messages")"
  printf '%-22s enqueued %6s  succeeded %6s  rows %6s | missing %s  success undone %s  succeeded twice %s  bad status %s\n' \
    "$label" "$acked" "$succeeded" "$total" "$missing" "$undone" "$twice" "$unknown"
  if [ "$missing" != 0 ] || [ "$undone" != 0 ] || [ "$twice" != 0 ] || [ "$unknown" != 0 ]; then
    failures=$((failures + 1))
  fi
}

run_backend() {  # run_backend NAME DB_URL
  local name="$1" db="$2"
  : > "$work/enqueued"; : > "$work/succeeded"
  echo "== crash test on $name: $rounds rounds, kill -9 within $seconds s each"
  for round in $(seq 1 "$rounds"); do
    start_dlqd "$db"
    "$bench" crash_load --port "$port" --queue crash --producers 8 --workers 8 \
      --seconds "$seconds" --out "$work" > /dev/null 2>&1 &
    local load=$!
    # A random moment: 0.3 s to the end of the load.
    sleep "$(awk -v s="$seconds" -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.3 + (s - 0.3) * r / 32768 }')"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    wait "$load" || true
    # DLQ_CRASH_SELFTEST=1 claims an enqueue the server never answered: the check must fail.
    if [ "${DLQ_CRASH_SELFTEST:-0}" = 1 ]; then echo 999999999 >> "$work/enqueued"; fi
    start_dlqd "$db"
    check "$db" "$name round $round"
    kill -TERM "$pid"; wait "$pid" || true; pid=""
  done
  # Leases run 2 s; the reaper looks every second: after 4 s nothing may still hold one.
  start_dlqd "$db"
  sleep 4
  local stuck
  stuck="$(sql "$db" "SELECT COUNT(*) FROM messages WHERE status = 'processing' AND lease_expires_at < $(( $(date +%s%3N) - 1000 ))")"
  echo "$name: processing past its lease after the restart: $stuck"
  [ "$stuck" = 0 ] || failures=$((failures + 1))
  kill -TERM "$pid"; wait "$pid" || true; pid=""
}

echo '{ "log": { "level": "warn" } }' > "$work/config.json"
if [ "$backend" = sqlite ] || [ "$backend" = both ]; then
  run_backend sqlite "sqlite:$work/crash.db"
fi
if [ "$backend" = postgresql ] || [ "$backend" = both ]; then
  admin="$(DLQ_PG_DURABLE=1 DLQ_PG_PORT=55435 scripts/pg-cluster.sh start)"
  pg_started=1
  psql -qtA "$admin" -c "CREATE DATABASE dlq_crash" >/dev/null
  run_backend postgresql "${admin%/*}/dlq_crash"
fi
if [ "$failures" != 0 ]; then
  echo "crash test: $failures check(s) failed" >&2
  exit 1
fi
echo "crash test: every promise held"

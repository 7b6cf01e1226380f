#!/usr/bin/env bash
# Benchmarks dlqd with its own load generator (dlq-bench), a fresh dlqd per configuration:
# SQLite FULL (the default), SQLite NORMAL and PostgreSQL. Prints one table and writes the same
# figures as JSON to bench-results/latest.json. Every workload's final counts are verified.
#   scripts/bench.sh            the default run (about 5 minutes)
#   scripts/bench.sh --quick    smaller numbers, for a smoke test
#   scripts/bench.sh --scale    1,000,000 pending messages: claim latency, restart, memory
#   scripts/bench.sh --auth     dlqd CPU per request with an access token against none
#   scripts/bench.sh --desk     the dead-letter desk with 1,000,000 dead messages: /dlq pages,
#                               a 100,000-message preview, W3 beside a 500/s replay run
#   scripts/bench.sh --ops      /metrics with 1,000,000 messages in 1,000 queues, enqueue p99
#                               during a retention sweep of 1,000,000 rows, W3 with and without
#                               the access log
#   scripts/bench.sh --throughput  the default run without its long-poll, idle, cross-node and
#                               thread rows: W1-W5 and healthz per configuration, for A/B rounds
#                               (DLQD=<other build> alternating with this one)
#   scripts/bench.sh --incidents  1,000,000 dead messages of 1,000 causes stored without
#                               fingerprints, SQLite FULL and PostgreSQL: the backfill's rate, the
#                               start-up wait, GET /dlq/incidents pages, one incident's preview
#   scripts/bench.sh --clients  many clients, PostgreSQL and two nodes (issue 40): W1-W3 at 16 and
#                               64 connections on SQLite FULL and PostgreSQL, W3 on two PostgreSQL
#                               nodes against one; three interleaved rounds, medians and ratios
#                               (with --quick: one short round, a smoke test)
#   scripts/bench.sh --threads  /healthz and W1 at threads = 1, 2, the default and 16, three
#                               interleaved rounds: rates, dlqd CPU per request, 16 against 2
# Every row carries cpu_us: dlqd's CPU time (user + system, /proc/PID/stat) per request, or per
# processed message for the workloads that count messages (W3: its enqueue, claim and ack).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
scale=0
auth=0
desk=0
ops=0
threads=0
throughput=0
incidents=0
clients=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --scale) scale=1 ;;
    --auth) auth=1 ;;
    --desk) desk=1 ;;
    --ops) ops=1 ;;
    --threads) threads=1 ;;
    --throughput) throughput=1 ;;
    --incidents) incidents=1 ;;
    --clients) clients=1 ;;
    *) echo "usage: $0 [--quick | --throughput | --scale | --auth | --desk | --ops | --incidents | --threads | --clients]" >&2; exit 2 ;;
  esac
done

DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"${JOBS:-2}" --target dlqd dlq-bench >/dev/null

dlqd="${DLQD:-build/release/app/dlqd}"  # DLQD=path measures another build (before/after)
bench=build/release/app/dlq-bench
work="$(mktemp -d /tmp/dlq-bench-XXXXXX)"
results="$work/results.jsonl"
: > "$results"
pid=""
port=""

W_MESSAGES=20000; W_SECONDS=20; W4_MESSAGES=1000; W5_MESSAGES=100000; HEALTH_SECONDS=5
WAKE_ROUNDS=1000; DUE_MESSAGES=200; POLLERS=1000; IDLE_SECONDS=10
if [ "$quick" = 1 ]; then
  W_MESSAGES=2000; W_SECONDS=3; W4_MESSAGES=100; W5_MESSAGES=5000; HEALTH_SECONDS=2
  WAKE_ROUNDS=100; DUE_MESSAGES=40; POLLERS=200; IDLE_SECONDS=2
fi

stop_dlqd() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || true
  fi
  pid=""
}
cleanup() {
  stop_dlqd
  DLQ_PG_PORT=55433 scripts/pg-cluster.sh stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# start_dlqd NAME DB_URL SYNCHRONOUS [AUTH_JSON] [THREADS]  (THREADS 0: the default, one per core)
start_dlqd() {
  local name="$1" db="$2" sync="$3" auth_json="${4:-}" io_threads="${5:-0}"
  cat > "$work/$name.json" <<JSON
{
  "threads": $io_threads,
  "database": { "url": "$db", "sqlite_synchronous": "$sync" },
  "log": { "level": "warn" },
  ${auth_json}
  "queues": { "w4": { "backoff": { "initial_seconds": 0.001, "max_seconds": 0.01 } } }
}
JSON
  "$dlqd" --config "$work/$name.json" --listen 127.0.0.1:0 > "$work/$name.out" 2> "$work/$name.log" &
  pid=$!
  for _ in $(seq 1 1500); do
    if grep -q "listening on" "$work/$name.out" 2>/dev/null; then break; fi
    sleep 0.02
  done
  port="$(grep -o '[0-9]*$' "$work/$name.out" | head -n 1)"
  if [ -z "$port" ]; then echo "dlqd ($name) did not start:" >&2; cat "$work/$name.log" >&2; exit 1; fi
}

# write_counters: from one scrape of dlqd's /metrics, on one line: commits, write operations, then
# the sum and count of each stage of a write (wait for the group, statements, commit, handback)
write_counters() {
  curl -s "http://127.0.0.1:$port/metrics" | awk '
    { v[$1] = $2 }
    END { printf "%s %s", v["dlq_store_commits_total"] + 0, v["dlq_store_operations_total"] + 0
          split("write_wait_seconds statements_duration_seconds commit_duration_seconds handback_seconds", n, " ")
          for (i = 1; i <= 4; i++) printf " %s %s", v["dlq_store_" n[i] "_sum"] + 0, v["dlq_store_" n[i] "_count"] + 0 }'
}
# ops_per_commit BEFORE AFTER: write operations per commit between two write_counters lines
ops_per_commit() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); c = y[1] - x[1]
    if (c > 0) printf "%.2f", (y[2] - x[2]) / c; else print 0 }'
}
# stage_means BEFORE AFTER: mean milliseconds per stage between two write_counters lines, as JSON
# fields
stage_means() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    split(a, x, " "); split(b, y, " "); split("wait_ms sql_ms commit_ms handback_ms", k, " ")
    for (i = 1; i <= 4; i++) { c = y[2 * i + 2] - x[2 * i + 2]
      printf ",\"%s\":%.3f", k[i], (c > 0 ? (y[2 * i + 1] - x[2 * i + 1]) * 1000 / c : 0) } }'
}

# writer_busy BEFORE AFTER SECONDS: the share of SECONDS the writer spent in a group's statements
# and its commit (with several writer threads, PostgreSQL's, their sum: it can pass 1). Near 1,
# the writer is the bottleneck and groups can only grow; well under 1, requests wait elsewhere.
writer_busy() {
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { split(a, x, " "); split(b, y, " ")
    busy = (y[5] - x[5]) + (y[7] - x[7])
    printf "%.2f", (t > 0 ? busy / t : 0) }'
}

# run CONFIG WORKLOAD [dlq-bench args...]; also records the write operations per commit, dlqd's
# CPU per request (or message) and the mean time of each stage of a write (wait for the group,
# the group's statements, the commit, the way back to the request)
run() {
  local config="$1" workload="$2"
  shift 2
  local line before after ticks0 ticks1 count cpu seconds
  before="$(write_counters)"
  ticks0="$(cpu_ticks "$pid")"
  line="$("$bench" "$workload" --port "$port" "$@")"
  ticks1="$(cpu_ticks "$pid")"
  after="$(write_counters)"
  count="$(echo "$line" | grep -o '"count":[0-9]*' | cut -d: -f2)"
  cpu="$([ "${count:-0}" -gt 0 ] && cpu_us_per "$ticks0" "$ticks1" "$count" || echo 0)"
  seconds="$(echo "$line" | grep -o '"seconds":[0-9.]*' | cut -d: -f2)"
  line="${line%\}},\"ops_per_commit\":$(ops_per_commit "$before" "$after"),\"cpu_us\":$cpu$(stage_means "$before" "$after"),\"writer_busy\":$(writer_busy "$before" "$after" "${seconds:-0}")}"
  echo "{\"config\":\"$config\",${line#\{}" >> "$results"
  echo "  $config $workload: $line" >&2
}

expect() {
  "$bench" expect --port "$port" --queue "$1" --expect "$2" >/dev/null
}

throughput_suite() {
  local config="$1"
  run "$config" enqueue --queue w1 --messages "$W_MESSAGES" --connections 16
  expect w1 "ready=$W_MESSAGES,succeeded=0"
  run "$config" drain --queue w1 --connections 16
  expect w1 "ready=0,processing=0,succeeded=$W_MESSAGES"
  run "$config" mixed --queue w3 --producers 8 --workers 8 --seconds "$W_SECONDS"
  local produced consumed
  produced="$(tail -n 1 "$results" | grep -o '"produced":[0-9.]*' | cut -d: -f2 | cut -d. -f1)"
  consumed="$(tail -n 1 "$results" | grep -o '"count":[0-9]*' | cut -d: -f2)"
  # Every produced message is succeeded or still waiting; nothing vanished.
  expect w3 "succeeded=$consumed,total=$produced"
  # The same two with each acknowledgement riding on the worker's next claim (http-api B6): one
  # durable commit per processed message instead of two.
  run "$config" enqueue --queue w2a --messages "$W_MESSAGES" --connections 16
  run "$config" drain --queue w2a --connections 16 --ack-in-claim
  expect w2a "ready=0,processing=0,succeeded=$W_MESSAGES"
  run "$config" mixed --queue w3a --producers 8 --workers 8 --seconds "$W_SECONDS" --ack-in-claim
  produced="$(tail -n 1 "$results" | grep -o '"produced":[0-9.]*' | cut -d: -f2 | cut -d. -f1)"
  consumed="$(tail -n 1 "$results" | grep -o '"count":[0-9]*' | cut -d: -f2)"
  expect w3a "succeeded=$consumed,total=$produced"
  run "$config" dead_letter --queue w4 --messages "$W4_MESSAGES" --connections 16
  expect w4 "dead=$W4_MESSAGES,ready=0,scheduled=0,processing=0"
  run "$config" batch_enqueue --queue w5 --messages "$W5_MESSAGES" --batch 100 --connections 16
  expect w5 "ready=$W5_MESSAGES"
  run "$config" healthz --connections 16 --seconds "$HEALTH_SECONDS"
}

rss_mb() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# cpu_ticks PID: user + system CPU time of a process, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# cpu_us_per TICKS0 TICKS1 REQUESTS: microseconds of CPU per request
cpu_us_per() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1000000 / hz / n }'; }
median3() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# seed_dead DB_FILE QUEUE_EXPR COUNT JOB_TYPE_EXPR [STATUS] [T0]: COUNT dead (or STATUS) rows
# straight into a migrated SQLite file (dlqd stopped), as if each had failed once; i runs
# 1..COUNT in the expressions; times start at T0 (ms; default 2100-01-01, so ages stay positive).
seed_dead() {
  local t0="${6:-4102444800000}" status="${5:-dead}"
  sqlite3 "$1" <<SQL
PRAGMA synchronous = OFF;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $3)
INSERT INTO messages (queue, payload, status, retry_count, max_retries, last_error, created_at,
  updated_at, job_type, error_class, dead_reason, attempts, first_attempt_at, last_attempt_at,
  dead_at, life_started_at, status_at)
SELECT $2, '{"n":' || i || ',"password":"hunter2","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}',
  '$status', 1, 1, 'smtp timeout', $t0 + i, $t0 + i, $4,
  CASE WHEN i % 100 = 0 THEN 'auth' ELSE 'transient' END, 'retries_exhausted', 1, $t0 + i,
  $t0 + i, $t0 + i, $t0 + i, $t0 + i FROM n;
INSERT OR IGNORE INTO queue_names (queue) SELECT DISTINCT queue FROM messages;
SQL
}

# thread_sweep ROUNDS (scripts/bench-threads.sh): /healthz and W1 at several `threads` settings
# shellcheck source=scripts/bench-threads.sh
. scripts/bench-threads.sh

# incidents_bench (scripts/bench-incidents.sh): the incidents of a million dead messages
# shellcheck source=scripts/bench-incidents.sh
. scripts/bench-incidents.sh

# shellcheck source=scripts/bench-scale.sh
. scripts/bench-scale.sh

if [ "$clients" = 1 ]; then
  if [ "$quick" = 1 ]; then DLQ_SCALE_SECONDS="${DLQ_SCALE_SECONDS:-2}"; fi
  SCALE_SECONDS="${DLQ_SCALE_SECONDS:-10}"
  scale_bench "$([ "$quick" = 1 ] && echo 1 || echo "${DLQ_SCALE_ROUNDS:-3}")"
  exit 0
fi

if [ "$incidents" = 1 ]; then
  incidents_bench
  exit 0
fi

if [ "$threads" = 1 ]; then
  echo "== threads: /healthz and W1 at 1, 2, the default and 16 I/O threads (SQLite FULL)" >&2
  thread_sweep "${DLQ_THREAD_ROUNDS:-3}"
  exit 0
fi

if [ "$ops" = 1 ]; then
  OPS_ROWS="${DLQ_OPS_ROWS:-1000000}"
  echo "== ops: /metrics and retention with $OPS_ROWS rows (SQLite FULL)" >&2
  db="$work/ops.db"
  start_dlqd ops "sqlite:$db" full
  stop_dlqd
  seed_dead "$db" "'q' || (i % 1000)" "$OPS_ROWS" "'job'"
  start_dlqd ops "sqlite:$db" full
  echo
  line="$("$bench" get --port "$port" --target /metrics --messages 20)"
  # metrics.cache_seconds is 1: requests a second apart each read the database.
  scrape_ms=""
  for _ in 1 2 3 4 5; do
    sleep 1.1
    scrape_ms+="$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port/metrics") "
  done
  echo "/metrics, $OPS_ROWS messages in 1000 queues: uncached scrapes (s): $scrape_ms;" \
       "cached p50 $(echo "$line" | grep -o '"p50_ms":[0-9.]*' | cut -d: -f2) ms"
  stop_dlqd

  # A retention sweep of OPS_ROWS succeeded rows (an hour old, window one minute) while
  # producers enqueue: the enqueue latency it costs.
  db="$work/sweep.db"
  start_dlqd sweep "sqlite:$db" full
  stop_dlqd
  now_ms="$(($(date +%s) * 1000))"
  seed_dead "$db" "'old' || (i % 10)" "$OPS_ROWS" "'job'" succeeded "$((now_ms - 3600000 - OPS_ROWS))"
  baseline="$(start_dlqd sweep0 "sqlite:$work/none.db" full; "$bench" enqueue --port "$port" --queue live --messages 20000 --connections 4; stop_dlqd)"
  cat > "$work/sweep.json" <<JSON
{ "database": { "url": "sqlite:$db" }, "log": { "level": "warn" },
  "retention": { "succeeded_seconds": 60, "sweep_interval_seconds": 1 } }
JSON
  "$dlqd" --config "$work/sweep.json" --listen 127.0.0.1:0 > "$work/sweep.out" 2> "$work/sweep.log" &
  pid=$!
  for _ in $(seq 1 500); do grep -q "listening on" "$work/sweep.out" 2>/dev/null && break; sleep 0.02; done
  port="$(grep -o '[0-9]*$' "$work/sweep.out" | head -n 1)"
  sweep_start="$(date +%s.%N)"
  during="$("$bench" enqueue --port "$port" --queue live --messages 20000 --connections 4)"
  until [ "$(curl -s "http://127.0.0.1:$port/queues/old0/stats" | grep -o '"succeeded":[0-9]*' | cut -d: -f2)" = 0 ]; do sleep 0.5; done
  sweep_s="$(echo "$(date +%s.%N) - $sweep_start" | bc)"
  stop_dlqd
  field() { echo "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2; }
  echo "enqueue (4 connections) alone: p50 $(field "$baseline" p50_ms) ms, p99 $(field "$baseline" p99_ms) ms;" \
       "during the sweep: p50 $(field "$during" p50_ms) ms, p99 $(field "$during" p99_ms) ms;" \
       "the sweep of $OPS_ROWS rows took ${sweep_s} s"

  # W3 with the access log on (log.level info) against off, interleaved.
  declare -a on=() off=()
  for round in 1 2 3; do
    for mode in off on; do
      cat > "$work/access_$mode.json" <<JSON
{ "database": { "url": "sqlite:$work/access_${mode}_$round.db" },
  "log": { "level": "info", "access": $([ "$mode" = on ] && echo true || echo false) } }
JSON
      "$dlqd" --config "$work/access_$mode.json" --listen 127.0.0.1:0 > "$work/a.out" 2> "$work/a_$mode$round.log" &
      pid=$!
      for _ in $(seq 1 500); do grep -q "listening on" "$work/a.out" 2>/dev/null && break; sleep 0.02; done
      port="$(grep -o '[0-9]*$' "$work/a.out" | head -n 1)"
      rate="$("$bench" mixed --port "$port" --queue w3 --producers 8 --workers 8 --seconds "$W_SECONDS" | grep -o '"rate":[0-9.]*' | cut -d: -f2)"
      echo "  round $round, access log $mode: W3 $rate msg/s" >&2
      if [ "$mode" = on ]; then on+=("$rate"); else off+=("$rate"); fi
      stop_dlqd
    done
  done
  a="$(median3 "${off[@]}")"; b="$(median3 "${on[@]}")"
  echo "W3 access log off (median) $a msg/s; on $b msg/s; on/off $(echo "scale=3; $b / $a" | bc)"
  exit 0
fi

if [ "$desk" = 1 ]; then
  DESK_DEAD="${DLQ_DESK_DEAD:-1000000}"
  echo "== desk: $DESK_DEAD dead messages in 10 queues (SQLite FULL)" >&2
  db="$work/desk.db"
  start_dlqd desk "sqlite:$db" full
  stop_dlqd
  seed_dead "$db" "'q' || (i % 10)" "$DESK_DEAD" "'job' || (i % 5)"
  seed_dead "$db" "'replayq'" 40000 "'replay_me'"
  last="$(sqlite3 "$db" "SELECT MAX(id) - 100 FROM messages WHERE queue LIKE 'q%'")"
  last_q3="$(sqlite3 "$db" "SELECT MAX(id) - 1000 FROM messages WHERE queue = 'q3'")"
  start_dlqd desk "sqlite:$db" full
  page() {  # page LABEL TARGET
    local line
    line="$("$bench" get --port "$port" --target "$2" --messages 200)"
    printf '%-44s p50 %8s ms   p99 %8s ms\n' "$1" \
      "$(echo "$line" | grep -o '"p50_ms":[0-9.]*' | cut -d: -f2)" \
      "$(echo "$line" | grep -o '"p99_ms":[0-9.]*' | cut -d: -f2)"
  }
  echo
  page "/dlq first page (100)" "/dlq?limit=100"
  page "/dlq last page (100)" "/dlq?limit=100&after_id=$last"
  page "/dlq?queue=q3 first page" "/dlq?limit=100&queue=q3"
  page "/dlq?queue=q3 last page" "/dlq?limit=100&queue=q3&after_id=$last_q3"
  page "/dlq?error_class=auth (1 %) first page" "/dlq?limit=100&error_class=auth"
  page "/dlq?error_class=auth last page" "/dlq?limit=100&error_class=auth&after_id=$last"
  page "/dlq?job_type=job3 (20 %) first page" "/dlq?limit=100&job_type=job3"
  page "/dlq?since=<the newest 1 %> first page" "/dlq?limit=100&since=$(date -u -d @$(( (4102444800000 + DESK_DEAD * 99 / 100) / 1000 )) +%Y-%m-%dT%H:%M:%SZ)"
  rss0="$(rss_mb "$pid")"
  preview_s="$(curl -s -o "$work/preview.json" -w '%{time_total}' -XPOST "http://127.0.0.1:$port/dlq/replay" \
    -d '{"filter": {"queue": "q1"}, "dry_run": true}')"
  echo "preview of $(grep -o '"matched":[0-9]*' "$work/preview.json" | cut -d: -f2) messages:" \
       "${preview_s} s, RSS $rss0 MB before, $(rss_mb "$pid") MB after"

  # W3 alone against W3 beside a 500/s replay run into a queue nobody consumes; interleaved.
  declare -a alone=() beside=()
  for round in 1 2 3; do
    for mode in alone beside; do
      run_id=""
      if [ "$mode" = beside ]; then
        token="$(curl -s -XPOST "http://127.0.0.1:$port/dlq/replay" -d '{"filter": {"queue": "replayq"}, "dry_run": true}' \
          | grep -o '"confirm_token":"[0-9a-f]*"' | cut -d'"' -f4)"
        run_id="$(curl -s -XPOST "http://127.0.0.1:$port/dlq/replay" -d '{"filter": {"queue": "replayq"},
          "confirm_token": "'"$token"'", "delay_seconds": 0, "rate_per_second": 500}' | grep -o '"replay_id":[0-9]*' | cut -d: -f2)"
      fi
      rate="$("$bench" mixed --port "$port" --queue "w3_$mode$round" --producers 8 --workers 8 --seconds "$W_SECONDS" \
        | grep -o '"rate":[0-9.]*' | cut -d: -f2)"
      if [ -n "$run_id" ]; then
        replayed="$(curl -s "http://127.0.0.1:$port/dlq/replays/$run_id" | grep -o '"replayed":[0-9]*' | cut -d: -f2)"
        curl -s -XPOST "http://127.0.0.1:$port/dlq/replays/$run_id/cancel" >/dev/null
        echo "  round $round beside a run: W3 $rate msg/s; the run replayed $replayed" >&2
        beside+=("$rate")
      else
        echo "  round $round alone: W3 $rate msg/s" >&2
        alone+=("$rate")
      fi
    done
  done
  a="$(median3 "${alone[@]}")"; b="$(median3 "${beside[@]}")"
  echo "W3 alone (median) $a msg/s; beside a 500/s replay run $b msg/s; ratio $(echo "scale=3; $b / $a" | bc)"
  stop_dlqd
  exit 0
fi

if [ "$auth" = 1 ]; then
  # The cost of access control: dlqd's CPU per request for enqueue (W1) and for the worker's
  # claim + succeed (W2), with a token configured and sent, against no tokens at all.
  # Interleaved runs (none, token, none, token, ...); medians.
  AUTH_MESSAGES="${DLQ_AUTH_MESSAGES:-40000}"; AUTH_ROUNDS="${DLQ_AUTH_ROUNDS:-3}"
  token="bench-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  hash="$(printf '%s' "$token" | "$dlqd" hash-token)"
  auth_json='"auth": { "tokens": [ { "name": "bench", "token_sha256": "'"$hash"'", "roles": ["producer", "worker"] } ], "public_metrics": true },'
  declare -A w1=() w2=()
  for round in $(seq 1 "$AUTH_ROUNDS"); do
    for mode in none token; do
      if [ "$mode" = token ]; then
        start_dlqd "auth_$round" "sqlite:$work/auth_${mode}_${round}.db" full "$auth_json"; args=(--token "$token")
      else
        start_dlqd "auth_$round" "sqlite:$work/auth_${mode}_${round}.db" full; args=()
      fi
      t0="$(cpu_ticks "$pid")"
      "$bench" enqueue --port "$port" --queue a --messages "$AUTH_MESSAGES" --connections 16 "${args[@]}" >/dev/null
      t1="$(cpu_ticks "$pid")"
      "$bench" drain --port "$port" --queue a --connections 16 "${args[@]}" >/dev/null
      t2="$(cpu_ticks "$pid")"
      w1[$mode]+="$(cpu_us_per "$t0" "$t1" "$AUTH_MESSAGES") "
      w2[$mode]+="$(cpu_us_per "$t1" "$t2" $((AUTH_MESSAGES * 2))) "
      echo "  round $round, $mode: enqueue $(cpu_us_per "$t0" "$t1" "$AUTH_MESSAGES") us/request," \
           "claim+succeed $(cpu_us_per "$t1" "$t2" $((AUTH_MESSAGES * 2))) us/request" >&2
      stop_dlqd
    done
  done
  report() {  # report LABEL NONE_RUNS TOKEN_RUNS
    local none with
    # shellcheck disable=SC2086
    none="$(median3 $2)"; with="$(median3 $3)"
    printf '%-22s no auth %6s us/request   token %6s us/request   token/none %s\n' "$1" \
      "$none" "$with" "$(echo "scale=3; $with / $none" | bc)"
  }
  echo
  report "enqueue (W1)" "${w1[none]}" "${w1[token]}"
  report "claim + succeed (W2)" "${w2[none]}" "${w2[token]}"
  exit 0
fi

if [ "$scale" = 1 ]; then
  SCALE_MESSAGES="${DLQ_SCALE_MESSAGES:-1000000}"
  echo "== scale: claim latency with $SCALE_MESSAGES pending messages (SQLite FULL)" >&2
  start_dlqd scale "sqlite:$work/scale.db" full
  "$bench" batch_enqueue --port "$port" --queue small --messages 2000 --connections 4 >/dev/null
  run scale claim_latency --queue small --messages 1000
  empty_p50="$(tail -n 1 "$results" | grep -o '"p50_ms":[0-9.]*' | cut -d: -f2)"
  run scale batch_enqueue --queue big --messages "$SCALE_MESSAGES" --batch 100 --connections 8
  expect big "ready=$SCALE_MESSAGES"
  run scale claim_latency --queue big --messages 1000
  full_p50="$(tail -n 1 "$results" | grep -o '"p50_ms":[0-9.]*' | cut -d: -f2)"
  rss="$(rss_mb "$pid")"
  stop_dlqd
  restart_start="$(date +%s.%N)"
  start_dlqd scale "sqlite:$work/scale.db" full
  until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do sleep 0.05; done
  restart_s="$(echo "$(date +%s.%N) - $restart_start" | bc)"
  rss_after="$(rss_mb "$pid")"
  stop_dlqd
  echo
  echo "pending messages:          $SCALE_MESSAGES"
  echo "claim p50, small queue:    $empty_p50 ms"
  echo "claim p50, full queue:     $full_p50 ms  (ratio $(echo "scale=2; $full_p50 / $empty_p50" | bc))"
  echo "RSS with the full queue:   $rss MB (after a restart: $rss_after MB)"
  echo "restart to ready:          $restart_s s"
  exit 0
fi

echo "== SQLite, synchronous=FULL (the default)" >&2
start_dlqd sqlite_full "sqlite:$work/full.db" full
throughput_suite sqlite_full
if [ "$throughput" = 0 ]; then
  echo "== long-poll latency and idle cost (SQLite FULL)" >&2
  run sqlite_full wakeup --queue wake --rounds "$WAKE_ROUNDS"
  run sqlite_full due_accuracy --queue due --messages "$DUE_MESSAGES" --connections 50
  run sqlite_full idle_pollers --queue idle --pollers "$POLLERS" --seconds "$IDLE_SECONDS" --pid "$pid"
  run sqlite_full idle_connections --pollers 10000 --seconds "$IDLE_SECONDS" --pid "$pid"
fi
stop_dlqd

echo "== SQLite, synchronous=NORMAL" >&2
start_dlqd sqlite_normal "sqlite:$work/normal.db" normal
throughput_suite sqlite_normal
stop_dlqd

echo "== PostgreSQL 15 (a local cluster of its own, fsync on)" >&2
pg_url="$(DLQ_PG_DURABLE=1 DLQ_PG_PORT=55433 scripts/pg-cluster.sh start)"
start_dlqd postgres "${pg_url}" full
throughput_suite postgres
if [ "$throughput" = 0 ]; then
  # A second node on the same database: a claimer parked on node 1, enqueues through node 2.
  first_pid="$pid"; first_port="$port"
  start_dlqd postgres_node2 "${pg_url}" full
  second_pid="$pid"; second_port="$port"
  pid="$first_pid"; port="$first_port"
  run postgres wakeup --queue cross --rounds "$WAKE_ROUNDS" --producer-port "$second_port"
  sed -i '$ s/"workload":"wakeup"/"workload":"wakeup_cross_node"/' "$results"
  stop_dlqd
  pid="$second_pid"
fi
stop_dlqd
DLQ_PG_PORT=55433 scripts/pg-cluster.sh stop

mkdir -p bench-results
{ echo "["; sed '$!s/$/,/' "$results"; echo "]"; } > bench-results/latest.json

printf '\n%-14s %-14s %12s %-8s %9s %9s  %s\n' config workload rate unit p50_ms p99_ms extra
while IFS= read -r line; do
  field() { echo "$line" | grep -o "\"$1\":[^,}]*" | head -n 1 | cut -d: -f2- | tr -d '"'; }
  extra="$(echo "$line" | sed -E 's/.*"p99_ms":[^,}]*,?//; s/[{}"]//g')"
  printf '%-14s %-14s %12s %-8s %9s %9s  %s\n' "$(field config)" "$(field workload)" "$(field rate)" \
    "$(field rate_unit)" "$(field p50_ms)" "$(field p99_ms)" "$extra"
done < "$results"
echo "(JSON: bench-results/latest.json)"

# The #6 targets, as ratios within this run.
value() {  # value CONFIG WORKLOAD FIELD
  grep "\"config\":\"$1\",\"workload\":\"$2\"" "$results" | grep -o "\"$3\":[0-9.]*" | head -n 1 | cut -d: -f2
}
ratio() { echo "scale=3; $1 / $2" | bc; }
full_w3="$(value sqlite_full mixed rate)"; normal_w3="$(value sqlite_normal mixed rate)"
full_w3_req="$(value sqlite_full mixed requests_per_s)"; full_hz="$(value sqlite_full healthz rate)"
normal_w3_req="$(value sqlite_normal mixed requests_per_s)"; normal_hz="$(value sqlite_normal healthz rate)"
full_w1="$(value sqlite_full enqueue rate)"; full_w5="$(value sqlite_full batch_enqueue rate)"
echo
echo "targets (SQLite):"
echo "  FULL W3 / NORMAL W3 (messages through):        $(ratio "$full_w3" "$normal_w3")   (target >= 0.80)"
echo "  FULL W3 messages x 3 / healthz:                $(ratio "$full_w3 * 3" "$full_hz")   (target >= 0.40)"
echo "  FULL W3 requests / healthz:                    $(ratio "$full_w3_req" "$full_hz")   (the same, counting every request)"
echo "  NORMAL W3 requests / healthz:                  $(ratio "$normal_w3_req" "$normal_hz")"
echo "  FULL W5 / W1:                                  $(ratio "$full_w5" "$full_w1")   (target >= 5)"
full_w2="$(value sqlite_full drain rate)"; full_w2a="$(value sqlite_full drain_ack rate)"
full_w3a="$(value sqlite_full mixed_ack rate)"
echo "  FULL W2 with ack in claim / W2:                $(ratio "$full_w2a" "$full_w2")"
echo "  FULL W3 with ack in claim / W3:                $(ratio "$full_w3a" "$full_w3")"

if [ "$throughput" = 0 ]; then
  echo "== threads: /healthz and W1 at 1, 2, the default and 16 I/O threads (SQLite FULL)" >&2
  thread_sweep 1
fi

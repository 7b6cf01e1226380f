# shellcheck shell=bash disable=SC2154  # sourced: bench.sh sets results, work, bench, pid, port
# Sourced by scripts/bench.sh (uses its run, expect, start_dlqd, stop_dlqd, median3, work, dlqd,
# bench, pid, port and results); not a script of its own.
#
# scale_bench ROUNDS: where users outgrow the defaults (issue #40). Round by round, interleaved,
# each row on a fresh dlqd and a fresh database:
#   - SQLite FULL and PostgreSQL (a local cluster with fsync and synchronous_commit on), at 16 and
#     at 64 connections: W1 enqueue, W2 drain with ack in claim, W3 mixed with ack in claim
#     (half the connections produce, half work); every row carries its writes per commit group;
#   - two dlqd nodes on one PostgreSQL database against one node: W3 with 64 connections, split
#     32 + 32 between the nodes (two dlq-bench processes at once) or all on one.
# Then the medians and the issue's ratios: 64 against 16 connections, PostgreSQL against SQLite,
# two nodes against one.

SCALE_SECONDS="${DLQ_SCALE_SECONDS:-10}"

# scale_workloads CONFIG CONNECTIONS: W1, W2 and W3 on the running dlqd, each checked by its counts.
scale_workloads() {
  local config="$1" conns="$2" half=$(($2 / 2)) produced consumed
  run "$config" enqueue --queue s1 --messages "$W_MESSAGES" --connections "$conns"
  expect s1 "ready=$W_MESSAGES"
  run "$config" drain --queue s1 --connections "$conns" --ack-in-claim
  expect s1 "ready=0,processing=0,succeeded=$W_MESSAGES"
  run "$config" mixed --queue s3 --producers "$half" --workers "$half" --seconds "$SCALE_SECONDS" --ack-in-claim
  produced="$(tail -n 1 "$results" | grep -o '"produced":[0-9.]*' | cut -d: -f2 | cut -d. -f1)"
  consumed="$(tail -n 1 "$results" | grep -o '"count":[0-9]*' | cut -d: -f2)"
  expect s3 "succeeded=$consumed,total=$produced"
}

# fresh_pg_db NAME: a new, empty database on the benchmark's cluster; prints its URL.
fresh_pg_db() {
  PGOPTIONS="-c client_min_messages=warning" psql -q "$scale_pg_url" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
  echo "${scale_pg_url%/*}/$1"
}

# two_nodes ROUND: W3 with 32 + 32 connections on two nodes of one database, both load generators
# at once; one row in the results (config postgres_2nodes) with the summed rates.
two_nodes() {
  local url a_pid a_port b_pid b_port out_a out_b count produced seconds ticks0a ticks0b
  url="$(fresh_pg_db "scale_two_$1")"
  start_dlqd "two_a_$1" "$url" full; a_pid="$pid"; a_port="$port"
  start_dlqd "two_b_$1" "$url" full; b_pid="$pid"; b_port="$port"
  out_a="$work/two_a_$1.json"; out_b="$work/two_b_$1.json"
  ticks0a="$(cpu_ticks "$a_pid")"; ticks0b="$(cpu_ticks "$b_pid")"
  "$bench" mixed --port "$a_port" --queue s3 --producers 16 --workers 16 --seconds "$SCALE_SECONDS" --ack-in-claim > "$out_a" &
  local gen_a=$!
  "$bench" mixed --port "$b_port" --queue s3 --producers 16 --workers 16 --seconds "$SCALE_SECONDS" --ack-in-claim > "$out_b"
  wait "$gen_a"
  local cpu_ticks_used=$(( $(cpu_ticks "$a_pid") - ticks0a + $(cpu_ticks "$b_pid") - ticks0b ))
  count="$(cat "$out_a" "$out_b" | grep -o '"count":[0-9]*' | cut -d: -f2 | paste -sd+ | bc)"
  produced="$(cat "$out_a" "$out_b" | grep -o '"produced":[0-9.]*' | cut -d: -f2 | cut -d. -f1 | paste -sd+ | bc)"
  seconds="$(cat "$out_a" "$out_b" | grep -o '"seconds":[0-9.]*' | cut -d: -f2 | sort -n | tail -n 1)"
  port="$a_port" expect s3 "succeeded=$count,total=$produced"
  echo "{\"config\":\"postgres_2nodes\",\"workload\":\"mixed_ack\",\"count\":$count,\"rate\":$(echo "scale=1; $count / $seconds" | bc),\"rate_unit\":\"msg/s\",\"produced\":$produced,\"cpu_us\":$(cpu_us_per 0 "$cpu_ticks_used" "$count")}" >> "$results"
  echo "  postgres_2nodes mixed_ack: $(tail -n 1 "$results")" >&2
  stop_dlqd; pid="$a_pid"; stop_dlqd
}

# scale_value CONFIG WORKLOAD FIELD: the median of FIELD over the rounds' rows.
scale_value() {
  # shellcheck disable=SC2046
  median3 $(grep "\"config\":\"$1\",\"workload\":\"$2\"" "$results" | grep -o "\"$3\":[0-9.]*" | cut -d: -f2)
}

scale_bench() {
  local rounds="$1" conns round url
  scale_pg_url="$(DLQ_PG_DURABLE=1 DLQ_PG_PORT=55433 scripts/pg-cluster.sh start)"
  for round in $(seq 1 "$rounds"); do
    echo "== scale round $round of $rounds" >&2
    for conns in 16 64; do
      start_dlqd "sqlite_c${conns}_$round" "sqlite:$work/scale_${conns}_$round.db" full
      scale_workloads "sqlite_c$conns" "$conns"
      stop_dlqd
      url="$(fresh_pg_db "scale_${conns}_$round")"
      start_dlqd "postgres_c${conns}_$round" "$url" full
      scale_workloads "postgres_c$conns" "$conns"
      stop_dlqd
    done
    url="$(fresh_pg_db "scale_one_$round")"
    start_dlqd "postgres_1node_$round" "$url" full
    run postgres_1node mixed --queue s3 --producers 32 --workers 32 --seconds "$SCALE_SECONDS" --ack-in-claim
    stop_dlqd
    two_nodes "$round"
  done
  DLQ_PG_PORT=55433 scripts/pg-cluster.sh stop

  echo
  printf '%-12s %-10s %10s %10s %8s %8s %8s\n' config workload "msg/s" "p50_ms" writes/group "cpu_us" ""
  local config workload
  for config in sqlite_c16 sqlite_c64 postgres_c16 postgres_c64; do
    for workload in enqueue drain_ack mixed_ack; do
      printf '%-12s %-10s %10s %10s %8s %8s\n' "$config" "$workload" "$(scale_value "$config" "$workload" rate)" \
        "$(scale_value "$config" "$workload" p50_ms)" "$(scale_value "$config" "$workload" ops_per_commit)" \
        "$(scale_value "$config" "$workload" cpu_us)"
    done
  done
  for config in postgres_1node postgres_2nodes; do
    printf '%-12s %-10s %10s %10s %8s %8s\n' "$config" mixed_ack "$(scale_value "$config" mixed_ack rate)" "" "" \
      "$(scale_value "$config" mixed_ack cpu_us)"
  done
  r() { echo "scale=2; $(scale_value "$1" "$3" rate) / $(scale_value "$2" "$3" rate)" | bc; }
  echo
  echo "medians of $rounds rounds; ratios of medians:"
  echo "  SQLite W1, 64 / 16 connections:        $(r sqlite_c64 sqlite_c16 enqueue)   (issue 40: >= 2)"
  for conns in 16 64; do
    echo "  PostgreSQL / SQLite, $conns connections: W1 $(r postgres_c$conns sqlite_c$conns enqueue)" \
         " W2 $(r postgres_c$conns sqlite_c$conns drain_ack)  W3 $(r postgres_c$conns sqlite_c$conns mixed_ack)   (>= 0.6 each)"
  done
  echo "  two nodes / one node on PostgreSQL, W3 at 64 connections: $(r postgres_2nodes postgres_1node mixed_ack)   (>= 1.3)"
}

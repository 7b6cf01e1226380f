#!/usr/bin/env bash
# The chaos test: `dlq-bench chaos_load` drives every write route of dlqd (enqueue, batch,
# claim with and without acknowledgements, succeed, ack, fail, release, extend, effects, replay,
# dismiss, batch replay and dismissal, purge) while a nemesis breaks what it runs on; then
# tests/chaos/check.py reads each call's history line, dlqd's logs and the database and counts
#   ok fail info ambiguous recovered | lost unexpected duplicated undone stale_accepted
#   replayed_twice audit_missing stuck
# Any count after `|` above 0 fails the run (docs/reliability.md says what each means).
#
# Faults. SQLite (one node): kill -9 and an immediate restart; SIGSTOP for up to 3.5 s, then
# SIGCONT. PostgreSQL (two nodes on one database, the cluster durable: DLQ_PG_DURABLE=1; node 2
# reaches it through a socat proxy): PostgreSQL stopped in immediate mode and started again;
# pg_terminate_backend on dlq's connections four times a second for 2 s; the proxy stalled, then
# killed (node 2's connections drop); the node that does not lead SIGSTOPped for 3.5 s while the
# leader reaps its leases (its requests, woken, get 409 lease-lost); the leader killed -9, batch
# replay runs under way, and restarted.
#
#   scripts/chaos.sh [--minutes M | --seconds S] [--backend sqlite|postgresql|both] [--seed N]
#                    [--build DIR] [--nemesis all|kill] [--every S] [--faulty]
# DLQ_CHAOS_PG_PORT (default 55435): the port of its PostgreSQL cluster; DLQ_CHAOS_KEEP=1 keeps
# the histories, logs and databases.
# Defaults: 5 minutes per backend, both, a random seed (printed; it fixes the nemesis' choices,
# not the timing), build/release (built if missing), every fault. `--nemesis kill` is the old
# crash test's: kill -9 only (scripts/crash-test.sh). The nemesis waits 0.5 to S s (--every,
# default 2.5) before each fault.
# `--faulty` tests the checker on a real bug: SQLite only, dlqd armed with the test faults
# answer_before_commit (it answers before its COMMIT), sqlite_power_loss and power_cut_at_sync (a
# power cut at a random Nth sync, N from 300 to 1,300, restarted each time). The run passes only
# when the checker finds acknowledged work lost.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=5; seconds=""; backend=both; seed=""; build=build/release; nemesis=all; every=2.5; faulty=0
usage() {
  echo "usage: $0 [--minutes M | --seconds S] [--backend sqlite|postgresql|both] [--seed N] [--build DIR] [--nemesis all|kill] [--every S] [--faulty]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --nemesis) nemesis="$2"; shift 2 ;;
    --every) every="$2"; shift 2 ;;
    --faulty) faulty=1; shift ;;
    *) usage ;;
  esac
done
case "$backend" in sqlite|postgresql|both) ;; *) usage ;; esac
case "$nemesis" in all|kill) ;; *) usage ;; esac
if [ "$faulty" = 1 ]; then backend=sqlite; nemesis=kill; fi
seed="${seed:-$(( (RANDOM << 15) | RANDOM ))}"
RANDOM="$seed"
duration="${seconds:-$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')}"
echo "chaos: seed $seed, $duration s per backend, nemesis $nemesis"

DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh
if [ ! -x "$build/app/dlqd" ] || [ ! -x "$build/app/dlq-bench" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"${JOBS:-2}" --target dlqd dlq-bench >/dev/null
fi
dlqd="$build/app/dlqd"
bench="$build/app/dlq-bench"
work="$(mktemp -d /tmp/dlq-chaos-XXXXXX)"
declare -a pid=("" "" "") port=("" "" "") db=("" "" "")
proxy=""; proxy_port=""; pg_port="${DLQ_CHAOS_PG_PORT:-55435}"; pg_started=0; load=""
cleanup() {
  for n in 1 2; do [ -z "${pid[$n]}" ] || kill -9 "${pid[$n]}" 2>/dev/null || true; done
  [ -z "$load" ] || kill -9 "$load" 2>/dev/null || true
  stop_proxy
  if [ "$pg_started" = 1 ]; then DLQ_PG_PORT=$pg_port scripts/pg-cluster.sh stop >/dev/null 2>&1 || true; fi
  if [ "${DLQ_CHAOS_KEEP:-0}" = 1 ]; then echo "chaos: files kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
# between A B: a random number of seconds from A to B (the seeded $RANDOM).
between() { awk -v a="$1" -v b="$2" -v r="$RANDOM" 'BEGIN { printf "%.2f", a + (b - a) * r / 32768 }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

restarts=()  # ms from a node's start to its first answer
start_node() {  # start_node N
  local n="$1" t0 attempt
  t0="$(now_ms)"
  for attempt in 1 2 3 4 5; do
    "$dlqd" --config "$work/config.json" "${fault_flag[@]}" --listen "127.0.0.1:${port[$n]}" --db "${db[$n]}" \
      >> "$work/node$n.out" 2>> "$work/node$n.log" &
    pid[$n]=$!
    for _ in $(seq 1 1000); do
      if curl -fs -o /dev/null "http://127.0.0.1:${port[$n]}/healthz"; then
        restarts+=("$(( $(now_ms) - t0 ))")
        return 0
      fi
      kill -0 "${pid[$n]}" 2>/dev/null || break
      sleep 0.01
    done
    # Not up: the database may still be recovering (PostgreSQL after an immediate stop).
    kill -9 "${pid[$n]}" 2>/dev/null || true; wait "${pid[$n]}" 2>/dev/null || true; pid[$n]=""
    sleep "$attempt"
  done
  echo "chaos: node $n did not start" >&2
  tail -20 "$work/node$n.log" >&2
  exit 1
}
kill_node() {  # kill_node N
  kill -9 "${pid[$1]}" 2>/dev/null || true
  wait "${pid[$1]}" 2>/dev/null || true
  pid[$1]=""
}
stop_node() {  # stop_node N: SIGTERM, as systemd stops it
  kill -TERM "${pid[$1]}" 2>/dev/null || true
  wait "${pid[$1]}" 2>/dev/null || true
  pid[$1]=""
}
leader() {  # the node whose /metrics says it leads (1 when none answers)
  for n in 1 2; do
    if [ -n "${pid[$n]}" ] && curl -fs "http://127.0.0.1:${port[$n]}/metrics" | grep -q '^dlq_leader 1'; then
      echo "$n"; return
    fi
  done
  echo 1
}
start_proxy() {
  socat "TCP-LISTEN:$proxy_port,bind=127.0.0.1,reuseaddr,fork" "TCP:127.0.0.1:$pg_port" 2>> "$work/proxy.log" &
  proxy=$!
  for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null && return 0; sleep 0.01; done
}
stop_proxy() {
  [ -n "$proxy" ] || return 0
  pkill -9 -P "$proxy" 2>/dev/null || true
  kill -9 "$proxy" 2>/dev/null || true
  wait "$proxy" 2>/dev/null || true
  proxy=""
}

# first_write N: ms from now until node N acknowledges an enqueue (into the queue `probe`, which
# the checker does not read): how long a fault keeps writes away once it is undone.
first_write() {
  local t0 i
  t0="$(now_ms)"
  for i in $(seq 1 3000); do
    if curl -fs -o /dev/null -m 2 -X POST -d '{"payload":"probe"}' \
         "http://127.0.0.1:${port[$1]}/queues/probe/messages"; then
      echo $(( $(now_ms) - t0 )); return
    fi
    sleep 0.01
  done
  echo "chaos: node $1 took no write for 30 s after a fault" >&2
  echo 30000
}

declare -A done_faults recovery
fault() {  # fault NAME: one fault, undone; then the time to the first write, kept per fault kind
  local name="$1" victim probe=1 t0
  done_faults[$name]=$(( ${done_faults[$name]:-0} + 1 ))
  t0="$(now_ms)"
  case "$name" in
    kill)  # any node, kill -9, restarted at once
      victim=$(( nodes == 1 ? 1 : 1 + RANDOM % 2 ))
      probe="$victim"; kill_node "$victim"; sleep "$(between 0 0.3)"; t0="$(now_ms)"; start_node "$victim" ;;
    pause)
      kill -STOP "${pid[1]}"; sleep "$(between 0.5 3.5)"; kill -CONT "${pid[1]}" ;;
    pg_restart)
      DLQ_PG_PORT=$pg_port scripts/pg-cluster.sh crash
      sleep "$(between 0.2 1)"
      t0="$(now_ms)"
      DLQ_PG_DURABLE=1 DLQ_PG_PORT=$pg_port scripts/pg-cluster.sh resume >/dev/null ;;
    terminate)
      for _ in 1 2 3 4 5 6 7 8; do
        psql -qtA "$admin" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = 'dlq_chaos' AND pid <> pg_backend_pid() ORDER BY random() LIMIT 3" >/dev/null || true
        sleep 0.25
      done ;;
    proxy)  # stall node 2's connections, then drop them
      pkill -STOP -P "$proxy" 2>/dev/null || true; kill -STOP "$proxy"
      sleep "$(between 1 3)"
      probe=2; t0="$(now_ms)"; stop_proxy; start_proxy ;;
    pause_follower)  # the leader reaps the stopped node's leases meanwhile
      victim=$(( $(leader) == 1 ? 2 : 1 ))
      probe="$victim"; kill -STOP "${pid[$victim]}"; sleep 3.5; t0="$(now_ms)"; kill -CONT "${pid[$victim]}" ;;
    kill_leader)  # batch replay runs are under way most of the time: the other node takes them
      victim="$(leader)"
      probe="$victim"; kill_node "$victim"; sleep "$(between 0.2 1)"; t0="$(now_ms)"; start_node "$victim" ;;
  esac
  case "$name" in
    pause) t0="$(now_ms)" ;;  # from the SIGCONT
    terminate) t0="$(now_ms)" ;;  # from the last termination
  esac
  first_write "$probe" > /dev/null
  recovery[$name]+="$(( $(now_ms) - t0 )) "
}

failures=0
run_backend() {  # run_backend NAME
  local name="$1" faults t_end checked_at status=0
  : > "$work/history.jsonl"; rm -f "$work"/node*.log; restarts=(); done_faults=(); recovery=()
  if [ "$name" = sqlite ]; then
    nodes=1; db[1]="sqlite:$work/chaos.db"
    faults=(kill pause)
  else
    nodes=2
    admin="$(DLQ_PG_DURABLE=1 DLQ_PG_PORT=$pg_port scripts/pg-cluster.sh start)"
    pg_started=1
    psql -qtA "$admin" -c "CREATE DATABASE dlq_chaos" >/dev/null
    proxy_port="$(free_port)"; start_proxy
    db[1]="${admin%/*}/dlq_chaos"; db[2]="postgresql://postgres@127.0.0.1:$proxy_port/dlq_chaos"
    faults=(kill pg_restart terminate proxy pause_follower kill_leader)
  fi
  [ "$nemesis" = kill ] && faults=(kill)
  for n in $(seq 1 "$nodes"); do port[$n]="$(free_port)"; start_node "$n"; done
  local second_port="${port[1]}"; [ "$nodes" = 2 ] && second_port="${port[2]}"
  "$bench" chaos_load --port "${port[1]}" --producer-port "$second_port" --queue chaos \
    --producers 4 --workers 8 --seconds "$duration" --seed "$seed" --tag "$name" \
    --out "$work/history.jsonl" > "$work/load.out" 2> "$work/load.err" &
  load=$!
  t_end=$(( $(date +%s) + duration ))
  while [ "$faulty" = 1 ] && [ "$(date +%s)" -lt "$t_end" ]; do
    sleep 0.05  # dlqd cuts its own power: restart it
    if ! kill -0 "${pid[1]}" 2>/dev/null; then
      done_faults[power_cut]=$(( ${done_faults[power_cut]:-0} + 1 ))
      wait "${pid[1]}" 2>/dev/null || true
      start_node 1
    fi
  done
  while [ "$faulty" = 0 ] && [ "$(date +%s)" -lt "$t_end" ]; do
    sleep "$(between 0.5 "$every")"
    [ "$(date +%s)" -lt "$t_end" ] || break
    fault "${faults[$(( RANDOM % ${#faults[@]} ))]}"
  done
  wait "$load" || { echo "chaos: the load failed" >&2; cat "$work/load.err" >&2; status=1; }
  load=""
  if [ "$faulty" = 1 ]; then  # the reaper's turn, without the faults
    kill_node 1; fault_flag=(); echo '{ "log": { "level": "warn" } }' > "$work/config.json"; start_node 1
  fi
  for n in $(seq 1 "$nodes"); do
    if [ -z "${pid[$n]}" ] || ! kill -0 "${pid[$n]}" 2>/dev/null; then start_node "$n"; fi
  done
  # Leases run 2 s; the leader's reaper looks every second, and on PostgreSQL a new leader may take
  # up to database.leader_takeover_seconds (5) after the last fault: then none may be left.
  if [ "$nodes" = 1 ]; then sleep 5; else sleep 8; fi
  checked_at="$(now_ms)"
  for n in $(seq 1 "$nodes"); do stop_node "$n"; done
  stop_proxy
  local logs=() counts
  for n in $(seq 1 "$nodes"); do logs+=(--log "$work/node$n.log"); done
  check() {  # check [--selftest]: this run's history, logs and database through the checker
    python3 tests/chaos/check.py --db "${db[1]}" --history "$work/history.jsonl" "${logs[@]}" \
      --checked-at "$checked_at" "$@"
  }
  local summary=""
  for f in "${!done_faults[@]}"; do summary+="$f ${done_faults[$f]}, "; done
  echo "$name: faults: ${summary%, }"
  # From the fault undone (the restart begun, SIGCONT sent, the last connection ended) to the
  # first acknowledged write.
  for f in "${!recovery[@]}"; do
    echo "$name: $f: first write after $(printf '%s\n' ${recovery[$f]} | sort -n | awk '{ a[NR] = $1 } END { printf "median %d ms, worst %d ms", a[int((NR + 1) / 2)], a[NR] }')"
  done
  echo "$name: restart to first answer: $(printf '%s\n' "${restarts[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "median %d ms, worst %d ms over %d starts", a[int((NR + 1) / 2)], a[NR], NR }')"
  if [ "$faulty" = 1 ]; then
    # The bug must be caught: the checker exits 1 for broken promises (2 for its own errors).
    local rc=0
    counts="$(check 2> "$work/check.err")" || rc=$?
    echo "$name (faulty): $counts"
    if [ "$rc" = 1 ]; then
      head -3 "$work/check.err"
    else
      cat "$work/check.err" >&2
      echo "chaos: answer_before_commit under power cuts went unnoticed (seed $seed)" >&2
      failures=$(( failures + 1 ))
    fi
    return
  fi
  if ! counts="$(check 2> "$work/check.err")"; then
    status=1
  fi
  echo "$name: $counts"
  if [ "$status" != 0 ]; then head -40 "$work/check.err" >&2; fi
  if [ "$name" = sqlite ] && [ "$status" = 0 ]; then
    # The checker itself: each doctored copy of this run's database must trip its count.
    check --selftest | tail -n 1 || status=1
  fi
  if [ "$name" = postgresql ]; then
    DLQ_PG_PORT=$pg_port scripts/pg-cluster.sh stop >/dev/null 2>&1 || true; pg_started=0
  fi
  failures=$(( failures + status ))
}

fault_flag=()
if [ "$faulty" = 1 ]; then
  fault_flag=(--allow-testing-faults)
  echo "{ \"log\": { \"level\": \"warn\" }, \"testing\": { \"faults\": { \"answer_before_commit\": true,
    \"sqlite_power_loss\": true, \"power_cut_at_sync\": $(( 300 + RANDOM % 1000 )) } } }" > "$work/config.json"
else
  echo '{ "log": { "level": "warn" } }' > "$work/config.json"
fi
if [ "$backend" = sqlite ] || [ "$backend" = both ]; then run_backend sqlite; fi
if [ "$backend" = postgresql ] || [ "$backend" = both ]; then run_backend postgresql; fi
if [ "$failures" != 0 ]; then
  echo "chaos: a promise broke (seed $seed)" >&2
  exit 1
fi
if [ "$faulty" = 1 ]; then echo "chaos: the checker caught answer_before_commit (seed $seed)"; exit 0; fi
echo "chaos: every promise held (seed $seed)"

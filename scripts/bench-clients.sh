#!/usr/bin/env bash
# Measures dlq's worker libraries beside dlq-bench (issue 35, "Measured"): each drains 20,000
# messages at concurrency 16 with a no-op handler from a fresh dlqd on a temp SQLite database
# (the default config: synchronous FULL), enqueued first through the batch API, 100 per request.
# dlq-bench runs W2 with the acks in the claims (drain --ack-in-claim, 16 connections); the
# libraries run their drain programs (clients/python/bench/drain.py; the Node one,
# clients/node/dist/bench/drain.js, only if it is built). Three interleaved rounds (dlq-bench,
# python, node, dlq-bench, ...); the table shows medians: msg/s, the worker's CPU per message
# (its own process: user + system), dlqd's CPU per message, and msg/s as a share of dlq-bench's.
# Builds nothing: DLQD (default build/release/app/dlqd) and DLQ_BENCH (default
# build/release/app/dlq-bench) must exist. MESSAGES and ROUNDS override 20,000 and 3.
set -euo pipefail
cd "$(dirname "$0")/.."

dlqd="${DLQD:-build/release/app/dlqd}"
bench="${DLQ_BENCH:-build/release/app/dlq-bench}"
python=/usr/bin/python3
node_drain=clients/node/dist/bench/drain.js
messages="${MESSAGES:-20000}"
rounds="${ROUNDS:-3}"
concurrency=16

fail() { echo "bench-clients: $*" >&2; exit 1; }
[ -x "$dlqd" ] || fail "no dlqd at $dlqd (build it, or set DLQD)"
[ -x "$bench" ] || fail "no dlq-bench at $bench (build the dlq-bench target, or set DLQ_BENCH)"
[ -x "$python" ] || fail "no $python"

libraries=(dlq-bench python)
if [ -f "$node_drain" ] && command -v node >/dev/null; then
  libraries+=(node)
else
  echo "bench-clients: $node_drain is not built (cd clients/node && npm ci --ignore-scripts && npm run build); measuring without Node" >&2
fi

work="$(mktemp -d /tmp/dlq-bench-clients-XXXXXX)"
pid=""
stop_dlqd() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || true
  fi
  pid=""
}
trap 'stop_dlqd; rm -rf "$work"' EXIT

# start_dlqd NAME: a fresh dlqd on its own SQLite file; sets pid and port
start_dlqd() {
  local name="$1"
  mkdir -p "$work/$name"
  echo '{ "log": { "level": "warn" } }' > "$work/$name/dlqd.json"
  "$dlqd" --config "$work/$name/dlqd.json" --listen 127.0.0.1:0 --db "sqlite:$work/$name/dlq.db" \
    > "$work/$name/out" 2> "$work/$name/log" &
  pid=$!
  port=""
  for _ in $(seq 1 500); do
    if grep -q "listening on" "$work/$name/out" 2>/dev/null; then break; fi
    sleep 0.02
  done
  port="$(grep -o '[0-9]*$' "$work/$name/out" | head -n 1)"
  [ -n "$port" ] || { cat "$work/$name/log" >&2; fail "dlqd ($name) did not start"; }
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
field() { echo "$1" | grep -o "\"$2\": *[0-9.]*" | head -n 1 | sed 's/.*: *//'; }
# with_cpu FILE CMD...: runs CMD; writes its user + system CPU seconds (getrusage) to FILE
with_cpu() {
  local file="$1"
  shift
  "$python" -c '
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{r.ru_utime + r.ru_stime:.3f}\n")
sys.exit(code)' "$file" "$@"
}

results="$work/results.txt"  # library rate worker_us dlqd_us, one line per run
: > "$results"
echo "bench-clients: $rounds rounds of $messages messages, concurrency $concurrency, SQLite FULL" >&2
for round in $(seq 1 "$rounds"); do
  for lib in "${libraries[@]}"; do
    name="$lib-$round"
    start_dlqd "$name"
    "$bench" batch_enqueue --port "$port" --queue drain --messages "$messages" --batch 100 \
      --connections 4 > /dev/null
    ticks0="$(cpu_ticks "$pid")"
    case "$lib" in
      dlq-bench)
        line="$(with_cpu "$work/$name/cpu" "$bench" drain --port "$port" --queue drain \
          --messages "$messages" --connections "$concurrency" --ack-in-claim)"
        processed="$(field "$line" count)"; seconds="$(field "$line" seconds)"
        cpu="$(cat "$work/$name/cpu")" ;;
      python)
        line="$(PYTHONPATH=clients/python/src "$python" clients/python/bench/drain.py \
          --url "http://127.0.0.1:$port" --queue drain --count "$messages" --concurrency "$concurrency")"
        processed="$(field "$line" processed)"; seconds="$(field "$line" seconds)"
        cpu="$(field "$line" cpu_seconds)" ;;
      node)
        line="$(node "$node_drain" --url "http://127.0.0.1:$port" --queue drain \
          --count "$messages" --concurrency "$concurrency")"
        processed="$(field "$line" processed)"; seconds="$(field "$line" seconds)"
        cpu="$(field "$line" cpu_seconds)" ;;
    esac
    ticks1="$(cpu_ticks "$pid")"
    "$bench" expect --port "$port" --queue drain \
      --expect "ready=0,processing=0,succeeded=$messages" > /dev/null ||
      fail "$lib round $round: not every message succeeded"
    [ "$processed" = "$messages" ] || fail "$lib round $round: processed $processed of $messages"
    awk -v lib="$lib" -v n="$messages" -v s="$seconds" -v cpu="$cpu" -v t0="$ticks0" -v t1="$ticks1" \
      -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%s %.1f %.1f %.1f\n", lib, n / s,
        cpu * 1000000 / n, (t1 - t0) * 1000000 / hz / n }' >> "$results"
    echo "  round $round $lib: $(tail -n 1 "$results" | cut -d' ' -f2) msg/s" >&2
    stop_dlqd
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
column_of() { awk -v lib="$1" -v col="$2" '$1 == lib { print $col }' "$results" | median; }
base="$(column_of dlq-bench 2)"
echo
echo "library         msg/s  worker CPU µs/msg  dlqd CPU µs/msg  % of dlq-bench"
for lib in "${libraries[@]}"; do
  rate="$(column_of "$lib" 2)"
  printf '%-10s %10s %18s %16s %14s%%\n' "$lib" "$rate" "$(column_of "$lib" 3)" "$(column_of "$lib" 4)" \
    "$(awk -v r="$rate" -v b="$base" 'BEGIN { printf "%.0f", r * 100 / b }')"
done
echo "(medians of $rounds interleaved rounds; every drain checked: ready=0, processing=0, succeeded=$messages)"

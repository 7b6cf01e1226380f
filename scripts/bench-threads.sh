# Sourced by scripts/bench.sh (uses its start_dlqd, stop_dlqd, expect, cpu_ticks, cpu_us_per,
# median3 and variables); not a script of its own.

# thread_sweep ROUNDS: /healthz (64 connections) and W1 at threads = 1, 2, the default (one per
# available CPU) and 16 (which dlqd caps at the CPUs available), interleaved round by round;
# prints medians and 16 against 2.
thread_sweep() {
  local rounds="$1" t name hz_line w1_line t0 t1 t2
  declare -A hz=() w1=() hz_cpu=() w1_cpu=()
  local settings=(1 2 0 16)
  for round in $(seq 1 "$rounds"); do
    for t in "${settings[@]}"; do
      name="threads_${t}_$round"
      start_dlqd "$name" "sqlite:$work/$name.db" full "" "$t"
      t0="$(cpu_ticks "$pid")"
      hz_line="$("$bench" healthz --port "$port" --connections 64 --seconds "$HEALTH_SECONDS")"
      t1="$(cpu_ticks "$pid")"
      w1_line="$("$bench" enqueue --port "$port" --queue w1 --messages "$W_MESSAGES" --connections 16)"
      t2="$(cpu_ticks "$pid")"
      expect w1 "ready=$W_MESSAGES"
      stop_dlqd
      hz[$t]+="$(echo "$hz_line" | grep -o '"rate":[0-9.]*' | cut -d: -f2) "
      w1[$t]+="$(echo "$w1_line" | grep -o '"rate":[0-9.]*' | cut -d: -f2) "
      hz_cpu[$t]+="$(cpu_us_per "$t0" "$t1" "$(echo "$hz_line" | grep -o '"count":[0-9]*' | cut -d: -f2)") "
      w1_cpu[$t]+="$(cpu_us_per "$t1" "$t2" "$W_MESSAGES") "
      echo "  round $round, threads $t: healthz $(echo "$hz_line" | grep -o '"rate":[0-9.]*' | cut -d: -f2) req/s," \
           "W1 $(echo "$w1_line" | grep -o '"rate":[0-9.]*' | cut -d: -f2) msg/s" >&2
    done
  done
  echo
  echo "threads (0 = the default, $(nproc) here; medians of $rounds interleaved rounds):"
  printf '%-8s %12s %14s %12s %14s\n' threads "healthz/s" "us CPU/req" "W1 msg/s" "us CPU/msg"
  for t in "${settings[@]}"; do
    # shellcheck disable=SC2086
    printf '%-8s %12s %14s %12s %14s\n' "$t" "$(median3 ${hz[$t]})" "$(median3 ${hz_cpu[$t]})" \
      "$(median3 ${w1[$t]})" "$(median3 ${w1_cpu[$t]})"
  done
  # shellcheck disable=SC2086
  echo "threads 16 / threads 2: healthz $(echo "scale=3; $(median3 ${hz[16]}) / $(median3 ${hz[2]})" | bc)," \
       "W1 $(echo "scale=3; $(median3 ${w1[16]}) / $(median3 ${w1[2]})" | bc)   (target >= 0.90)"
}

# Sourced by scripts/bench.sh (uses its start_dlqd, stop_dlqd, work, dlqd, bench, pid and port);
# not a script of its own.
#
# incidents_bench: INCIDENT_DEAD dead messages (1,000,000) of 1,000 causes in 10 queues, stored
# without fingerprints as a database from before migration 012 holds them, on SQLite FULL and on
# PostgreSQL. Per database: the seed, the start-up wait (launch to listening; start-up backfills
# for at most 5 s), the backfill's rows per second (launch to the task's `done=true` line), then
# p50/p99 of GET /dlq/incidents (both sorts, ?queue=q3), one incident, its dead messages, /metrics
# (with its incident gauges) and the incident's replay preview. Causes are skewed (cause c ~ 1000 x^2 for x uniform), so the sort by dead has
# no ties; each spreads over all ten queues; each message has one failed attempt with a stack.

INCIDENT_DEAD="${DLQ_INCIDENT_DEAD:-1000000}"

# incident_seed_sql NAME (sqlite_… or another: PostgreSQL): the INSERTs, i = 1..INCIDENT_DEAD, times an hour back from now.
incident_seed_sql() {
  local t0 series letters cause nl
  t0="$(( $(date +%s) * 1000 - 3600000 ))"
  if [ "${1%%_*}" = sqlite ]; then
    series="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $INCIDENT_DEAD),
      s(i, c) AS (SELECT i, ((i % 10007) * (i % 10007) * 1000) / (10007 * 10007) FROM n)"
    letters="char(97 + c % 26, 97 + (c / 26) % 26, 97 + c / 676)"
    nl="char(10)"
    echo "PRAGMA synchronous = OFF;"
  else
    series="WITH s(i, c) AS (SELECT i, ((i::bigint % 10007) * (i::bigint % 10007) * 1000) / (10007 * 10007)
      FROM generate_series(1, $INCIDENT_DEAD) AS g(i))"
    letters="chr(97 + (c % 26)::int) || chr(97 + ((c / 26) % 26)::int) || chr(97 + (c / 676)::int)"
    nl="chr(10)"
  fi
  cause="CASE c % 3 WHEN 0 THEN 'transient' WHEN 1 THEN 'timeout' ELSE 'unknown' END"
  cat <<SQL
$series
INSERT INTO messages (queue, payload, status, retry_count, max_retries, last_error, created_at,
  updated_at, job_type, error_class, dead_reason, attempts, first_attempt_at, last_attempt_at,
  dead_at, life_started_at, status_at)
SELECT 'q' || ((i / 1000) % 10), '{"n":' || i || ',"to":"user' || i || '@example.com"}', 'dead', 1, 1,
  'upstream ' || $letters || ' refused order ' || i || ' from 10.0.' || (i % 250) || '.7',
  $t0 + i, $t0 + i, 'job' || (c % 10), $cause, 'retries_exhausted', 1, $t0 + i, $t0 + i,
  $t0 + i, $t0 + i, $t0 + i FROM s;
$series
INSERT INTO attempts (message_id, attempt, outcome, claimed_at, finished_at, worker, error,
  error_class, stack)
SELECT i, 1, 'failed', $t0 + i, $t0 + i, 'w1', 'upstream refused', $cause,
  'Error: refused' || $nl || '    at call_' || $letters || ' (/srv/app/lib/' || $letters || '.js:' || (c + 10) || ':7)'
  FROM s;
INSERT INTO queue_names (queue) SELECT DISTINCT queue FROM messages WHERE true ON CONFLICT DO NOTHING;
SQL
}

# incident_page LABEL TARGET: p50 and p99 of 200 GETs, one at a time
incident_page() {
  local line
  line="$("$bench" get --port "$port" --target "$2" --messages 200)"
  printf '  %-40s p50 %7s ms   p99 %7s ms\n' "$1" \
    "$(echo "$line" | grep -o '"p50_ms":[0-9.]*' | cut -d: -f2)" \
    "$(echo "$line" | grep -o '"p99_ms":[0-9.]*' | cut -d: -f2)"
}

# incident_backfill_times LOG LAUNCHED (epoch seconds): from dlqd's JSON log, what start-up wrote in how long, when the
# leader's task began (a restarted node waits for the previous process's leadership record to go
# stale) and ended, and the rows per second of the time spent backfilling
incident_backfill_times() {
  python3 - "$1" "$2" <<'PY'
import datetime, json, sys
def at(line):
    return datetime.datetime.fromisoformat(line["ts"].replace("Z", "+00:00")).timestamp()
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
first = float(sys.argv[2])
boot = next(l for l in lines if l["event"] == "incident backfill at start-up")
rows = int(boot["written"])
busy = at(boot) - first
print(f"  start-up backfill:                      {rows} rows by {busy:.2f} s after launch"
      + (" (all)" if boot.get("done") == "true" else ""))
if boot.get("done") != "true":
    lead = next(l for l in lines if l["event"].startswith("leadership gained"))
    task = [l for l in lines if l["event"] == "incident backfill"]
    rows += sum(int(l["written"]) for l in task)
    print(f"  leader task: began {at(lead) - first:.1f} s after launch, done "
          f"{at(task[-1]) - first:.1f} s after launch")
    busy += at(task[-1]) - at(lead)
print(f"  backfill: {rows} rows, {rows / busy:.0f} rows/s while backfilling")
PY
}

# incident_round NAME DB_URL SEED_COMMAND...: seeds through SEED_COMMAND (the SQL on stdin), then
# measures
incident_round() {
  local name="$1" db="$2" t_seed t_launch t_listen fp fp_big preview
  shift 2
  start_dlqd "$name" "$db" full  # migrates
  stop_dlqd
  t_seed="$(date +%s.%N)"
  incident_seed_sql "$name" | "$@" >/dev/null
  t_seed="$(echo "$(date +%s.%N) - $t_seed" | bc)"
  cat > "$work/$name.json" <<JSON
{ "database": { "url": "$db" }, "log": { "level": "info" } }
JSON
  t_launch="$(date +%s.%N)"
  "$dlqd" --config "$work/$name.json" --listen 127.0.0.1:0 > "$work/$name.out" 2> "$work/$name.log" &
  pid=$!
  until grep -q "listening on" "$work/$name.out" 2>/dev/null; do sleep 0.01; done
  t_listen="$(date +%s.%N)"
  port="$(grep -o '[0-9]*$' "$work/$name.out" | head -n 1)"
  until grep -q '"event":"incident backfill[^}]*"done":"true"' "$work/$name.log"; do
    kill -0 "$pid" || { cat "$work/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo
  echo "$name: $INCIDENT_DEAD dead messages of 1,000 causes seeded in $(printf '%.1f' "$t_seed") s"
  echo "  start-up wait (launch to listening):    $(printf '%.2f' "$(echo "$t_listen - $t_launch" | bc)") s"
  incident_backfill_times "$work/$name.log" "$t_launch"
  curl -s "http://127.0.0.1:$port/dlq/incidents?limit=1" > "$work/first.json"
  fp="$(grep -o '"fingerprint":"[0-9a-f]*"' "$work/first.json" | head -n 1 | cut -d'"' -f4)"
  fp_big="$(grep -o '"dead":[0-9]*' "$work/first.json" | head -n 1 | cut -d: -f2)"
  incident_page "/dlq/incidents (sort=dead)" "/dlq/incidents"
  incident_page "/dlq/incidents?sort=last_dead_at" "/dlq/incidents?sort=last_dead_at"
  incident_page "/dlq/incidents?queue=q3" "/dlq/incidents?queue=q3"
  incident_page "/dlq/incidents?limit=100" "/dlq/incidents?limit=100"
  incident_page "/dlq/incidents/{fp} (dead $fp_big)" "/dlq/incidents/$fp"
  incident_page "/dlq?fingerprint={fp}&limit=100" "/dlq?fingerprint=$fp&limit=100"
  incident_page "/metrics (its incident gauges; cache 1 s)" "/metrics"
  local times=""
  for _ in 1 2 3 4 5; do
    times+="$(curl -s -o "$work/preview.json" -w '%{time_total}' -XPOST "http://127.0.0.1:$port/dlq/replay" \
      -d '{"filter": {"fingerprint": "'"$fp"'"}, "dry_run": true}') "
  done
  preview="$(grep -o '"matched":[0-9]*' "$work/preview.json" | cut -d: -f2)"
  echo "  replay preview of the largest incident ($preview messages), 5 runs (s): $times"
  stop_dlqd
}

incidents_bench() {
  echo "== incidents: $INCIDENT_DEAD dead messages of 1,000 causes without fingerprints" >&2
  incident_round sqlite_full "sqlite:$work/incidents.db" sqlite3 "$work/incidents.db"
  local pg_url
  pg_url="$(DLQ_PG_DURABLE=1 DLQ_PG_PORT=55433 scripts/pg-cluster.sh start)"
  incident_round postgres "$pg_url" psql -q -v ON_ERROR_STOP=1 "$pg_url"
  DLQ_PG_PORT=55433 scripts/pg-cluster.sh stop
}

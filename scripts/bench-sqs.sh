#!/usr/bin/env bash
# dlqd's SQS front against dlq's own HTTP API, side by side, in the shared benchmark harness
# (../shared/bench, read-only; issue 39 "Benchmark"):
#   scripts/bench-sqs.sh                       REPS=3, W1-W3, DLQD=build/release/app/dlqd
#   REPS=1 DLQD=/path/to/dlqd scripts/bench-sqs.sh
# What it does:
#   1. copies the harness to a temp folder (mktemp -d, removed at exit) and the dlqd binary into it
#      (so a rebuild during the run changes nothing: every rep runs the same build);
#   2. adds scripts/bench-sqs/adapter.js as driver/adapters/sqs.js and registers the system `dlq-sqs`
#      the way the harness registers systems (driver.js ADAPTERS, run.sh's system list, report.js's
#      order): it starts a fresh dlqd exactly as `dlq` does (run.sh start_dlqd: listen 127.0.0.1:0,
#      a fresh SQLite file, backoff 0 s; no auth, so the SQS front is anonymous) and drives it through
#      @aws-sdk/client-sqs 3.930.0 (ReceiveMessage of 1 message, then DeleteMessage; SendMessage);
#   3. installs the copy's node deps (`npm ci`, from the npm cache when it can) and the SDK from
#      scripts/bench-sqs/package-lock.json (into the temp folder; found through NODE_PATH);
#   4. runs `run.sh dlq dlq-sqs` REPS times interleaved, a fresh dlqd per run, workloads W1-W3 only
#      (W4 needs a redrive policy on the SQS side), `dlq` with DLQ_WORKER=plain (claim, then succeed:
#      the same two round trips per message as ReceiveMessage + DeleteMessage);
#   5. prints the harness's report, then the medians of msgs/s and of dlqd's CPU per message
#      (server CPU % of the workload ÷ 100 ÷ msgs/s, per rep, then the median) for both systems, and
#      the last line `dlq-sqs/dlq W3 CPU per message: X.XX (target <= 1.50: met|NOT met)`.
# Env: REPS (3), DLQD (build/release/app/dlqd), DLQ_WORKER (plain), BENCH_SRC (../shared/bench),
#      BENCH_WORKLOADS (w1,w2,w3), BENCH_SQS_KEEP=<dir> (copy the raw run folder and the report there),
#      DLQD_WAIT_S (60: how long to wait for a DLQD that is missing, e.g. being rebuilt), and run.sh's
#      knobs (N, W3_SECONDS, HTTP_SOCKETS, ...; see the harness README) and the adapter's (SQS_*; see
#      scripts/bench-sqs/adapter.js).
# Talks to 127.0.0.1 only; stops every dlqd it started (by pid); leaves no temp folder.
# Exit: 0 when every run ran (the target is reported, not enforced); 1 when something failed to run
#       (a dlqd did not start or died, a driver failed, a result or a W1-W3 number is missing);
#       2 bad usage; 3 missing prerequisite (node, npm, the harness, DLQD).
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/scripts/bench-sqs
BENCH_SRC=${BENCH_SRC:-$ROOT/../shared/bench}
DLQD=${DLQD:-$ROOT/build/release/app/dlqd}
[[ $DLQD == /* ]] || DLQD=$PWD/$DLQD
REPS=${REPS:-3}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-w1,w2,w3}
export DLQ_WORKER=${DLQ_WORKER:-plain}

die() { echo "bench-sqs: $2" >&2; exit "$1"; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die 2 "REPS must be a positive integer (got '$REPS')"
[[ $BENCH_WORKLOADS =~ ^w[1-4](,w[1-4])*$ ]] || die 2 "BENCH_WORKLOADS must look like w1,w2,w3 (got '$BENCH_WORKLOADS')"
command -v node >/dev/null || die 3 "node is missing (the harness needs Node.js 20)"
command -v npm >/dev/null || die 3 "npm is missing"
command -v python3 >/dev/null || die 3 "python3 is missing (run.sh and this script use it)"
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
[[ $NODE_MAJOR -ge 20 ]] || die 3 "Node $(node --version): the harness needs Node.js 20"
[[ $NODE_MAJOR -eq 20 ]] || echo "bench-sqs: WARN: Node $(node --version); the harness is written for Node 20" >&2
[[ -f $BENCH_SRC/run.sh && -f $BENCH_SRC/driver/driver.js ]] || die 3 "no harness at $BENCH_SRC"
for f in adapter.js package.json package-lock.json; do [[ -f $HERE/$f ]] || die 3 "missing $HERE/$f"; done
for ((i = 0; i < ${DLQD_WAIT_S:-60}; i++)); do # it may be being rebuilt right now
  [[ -f $DLQD && -x $DLQD ]] && break
  ((i == 0)) && echo "bench-sqs: waiting for $DLQD ..." >&2
  sleep 1
done
[[ -f $DLQD && -x $DLQD ]] || die 3 "DLQD=$DLQD is not an executable file"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-sqs.XXXXXX") || die 3 "mktemp failed"
PIDS_FILE=$TMP/dlqd.pids # run.sh's start_dlqd (patched below) appends every dlqd pid it starts
: >"$PIDS_FILE"
RUN_PID=
cleanup() {
  local pid i
  if [[ -n $RUN_PID ]] && kill -0 "$RUN_PID" 2>/dev/null; then stop_run; fi
  # run.sh stops its dlqd itself; this only catches one that survived an interrupted run.sh
  while read -r pid; do
    [[ -n $pid ]] || continue
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$TMP/"; then
      echo "bench-sqs: stopping leftover dlqd pid $pid" >&2
      kill -TERM "$pid" 2>/dev/null
      for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
  done <"$PIDS_FILE"
  chmod -R u+w "$TMP" 2>/dev/null
  rm -rf "$TMP"
}
stop_run() { # TERM to run.sh and its direct children (the driver's `timeout`), then wait for it
  local c
  for c in $(ps -o pid= --ppid "$RUN_PID" 2>/dev/null); do kill -TERM "$c" 2>/dev/null; done
  kill -TERM "$RUN_PID" 2>/dev/null
  wait "$RUN_PID" 2>/dev/null
}
trap cleanup EXIT
trap 'echo "bench-sqs: interrupted" >&2; exit 130' INT TERM

# --- 1. the copy, and the binary
B=$TMP/bench
cp -r "$BENCH_SRC" "$B" || die 3 "could not copy $BENCH_SRC"
chmod -R u+w "$B"
rm -rf "$B/runs" "$B"/results-*.md
cp "$DLQD" "$TMP/dlqd" || die 3 "could not copy $DLQD"
DLQD_DESC="$DLQD ($(stat -c '%s bytes, modified %y' "$DLQD" | cut -d. -f1), sha256 $(sha256sum "$TMP/dlqd" | cut -c1-12))"

# --- 2. the adapter and the dlq-sqs system
cp "$HERE/adapter.js" "$B/driver/adapters/sqs.js"
python3 - "$B" <<'EOF' || die 3 "could not patch the harness copy (has the harness changed?)"
import sys
b = sys.argv[1]
def patch(rel, edits):
    p = f"{b}/{rel}"
    s = open(p).read()
    for old, new, n in edits:
        c = s.count(old)
        if c != n:
            sys.exit(f"bench-sqs: {rel}: expected {n} x {old!r}, found {c}")
        s = s.replace(old, new)
    open(p, "w").write(s)
# run.sh: dlq-sqs is a system, starts and stops like dlq (${sys%-sqs} is 'dlq' for both); the
# driver gets --workloads; each system keeps its own dlqd stderr log
patch("run.sh", [
    ("| dlq | dlq-selftest) echo", "| dlq | dlq-sqs | dlq-selftest) echo", 1),
    ("    dlq) if [[ -n ${DLQD:-}", "    dlq | dlq-sqs) if [[ -n ${DLQD:-}", 1),
    ("    dlq)\n      if [[ -n ${DLQD:-} ]]; then", "    dlq | dlq-sqs)\n      if [[ -n ${DLQD:-} ]]; then", 1),
    ("$sys == dlq && ", "${sys%-sqs} == dlq && ", 4),
    ("if [[ $sys == dlq ]]; then", "if [[ ${sys%-sqs} == dlq ]]; then", 1),
    ("dlqd.r$rep.stderr.log", "$sys.r$rep.dlqd-stderr.log", 2),
    ('--system "$dsys" --rep', '--system "$dsys" --workloads "${BENCH_WORKLOADS:-w1,w2,w3,w4}" --rep', 1),
])
# servers.sh: server dirs inside our temp folder; every dlqd pid recorded for the exit check
patch("lib/servers.sh", [
    ('SERVER_DIR=$(mktemp -d "/tmp/bench-$1-XXXXXX")', 'SERVER_DIR=$(mktemp -d "${BENCH_TMP:-/tmp}/bench-$1-XXXXXX")', 1),
    ('  SERVER_PID=$!\n  SERVER_DESC="${cmd[*]}', '  SERVER_PID=$!\n  [[ -n ${BENCH_PIDS_FILE:-} ]] && echo "$SERVER_PID" >>"$BENCH_PIDS_FILE"\n  SERVER_DESC="${cmd[*]}', 1),
])
# driver.js: the adapter, registered next to dlq's
line = "  'dlq': ['http', { mode: 'dlq',"
patch("driver/driver.js", [(line, "  'dlq-sqs': ['sqs', { url: env.DLQ_URL || 'http://127.0.0.1:8080' }],\n" + line, 1)])
patch("lib/report.js", [("'dlq', 'dlq-selftest']", "'dlq', 'dlq-sqs', 'dlq-selftest']", 1),
                         ("(!w ? 'missing'", "(!w ? 'not run'", 1)])
EOF

# --- 3. node deps: the harness's (run.sh would run the same `npm ci` itself) and the SDK
echo "bench-sqs: npm ci (harness copy, then @aws-sdk/client-sqs) ..." >&2
(cd "$B" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2) || die 3 "npm ci failed in the harness copy"
mkdir -p "$TMP/sqs"
cp "$HERE/package.json" "$HERE/package-lock.json" "$TMP/sqs/"
(cd "$TMP/sqs" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2) || die 3 "npm ci failed for scripts/bench-sqs"
export NODE_PATH=$TMP/sqs/node_modules${NODE_PATH:+:$NODE_PATH}
SDK_VERSION=$(node -p "require('$TMP/sqs/node_modules/@aws-sdk/client-sqs/package.json').version")

# --- 4. the runs
STAMP=$(date +%Y-%m-%d-%H%M%S)-bench-sqs
echo "bench-sqs: dlqd $DLQD_DESC; @aws-sdk/client-sqs $SDK_VERSION; node $(node --version); REPS=$REPS; workloads $BENCH_WORKLOADS; DLQ_WORKER=$DLQ_WORKER; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
DLQD=$TMP/dlqd REPS=$REPS BENCH_STAMP=$STAMP BENCH_WORKLOADS=$BENCH_WORKLOADS BENCH_TMP=$TMP BENCH_PIDS_FILE=$PIDS_FILE \
  "$B/run.sh" dlq dlq-sqs </dev/null &
RUN_PID=$!
wait "$RUN_PID"
rc=$?
RUN_PID=
[[ $rc -ne 0 ]] && echo "bench-sqs: run.sh exited $rc" >&2

if [[ -n ${BENCH_SQS_KEEP:-} ]]; then
  mkdir -p "$BENCH_SQS_KEEP" && cp -r "$B/runs/$STAMP" "$B/results-$STAMP.md" "$BENCH_SQS_KEEP/" 2>/dev/null &&
    echo "bench-sqs: kept $BENCH_SQS_KEEP/$STAMP/ and $BENCH_SQS_KEEP/results-$STAMP.md" >&2
else
  echo "bench-sqs: (the temp copy, with its runs/ and results file, goes at exit; BENCH_SQS_KEEP=<dir> keeps them)" >&2
fi

# --- 5. the medians
node - "$B/runs/$STAMP" "$REPS" "$BENCH_WORKLOADS" "$rc" <<'EOF'
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const [dir, repsArg, wlArg, rcArg] = process.argv.slice(2);
const REPS = Number(repsArg), WL = wlArg.split(',').filter((w) => w !== 'w4'), SYSTEMS = ['dlq', 'dlq-sqs'];
const failed = [], warn = [];
if (Number(rcArg) !== 0) failed.push(`run.sh exited ${rcArg}`);
const median = (a) => { const s = [...a].sort((x, y) => x - y), n = s.length; return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : null; };
try { for (const l of fs.readFileSync(path.join(dir, 'skipped.txt'), 'utf8').split('\n')) if (l.trim()) failed.push(l.trim()); } catch { /* none */ }
// per system and workload: msgs/s and dlqd CPU µs per message, one value per rep
const v = {};
const loads = [];
for (const sys of SYSTEMS) {
  v[sys] = {};
  for (const w of WL) v[sys][w] = { rate: [], cpu: [], enq: [] };
  for (let rep = 1; rep <= REPS; rep++) {
    let r;
    try { r = JSON.parse(fs.readFileSync(path.join(dir, `${sys}.r${rep}.json`), 'utf8')); } catch (e) { failed.push(`${sys} rep ${rep}: no result (${e.code || e.message})`); continue; }
    if (r.load_start) loads.push(Number(r.load_start.split(' ')[0]));
    for (const e of r.errors || []) failed.push(`${sys} rep ${rep}: driver: ${String(e).split('\n')[0]}`);
    for (const w of WL) {
      const x = (r.workloads || {})[w];
      if (!x) { failed.push(`${sys} rep ${rep} ${w}: missing`); continue; }
      if (x.error) { failed.push(`${sys} rep ${rep} ${w}: ${String(x.error).split('\n')[0]}`); continue; }
      if (x.errors) warn.push(`${sys} rep ${rep} ${w}: ${x.errors} op errors (first: ${x.first_error})`);
      if (x.timed_out) warn.push(`${sys} rep ${rep} ${w}: timed out`);
      if (w === 'w2' && x.remaining_after) warn.push(`${sys} rep ${rep} w2: ${x.remaining_after} messages left after the drain`);
      if (!(x.msgs_per_s > 0)) { failed.push(`${sys} rep ${rep} ${w}: no msgs/s`); continue; }
      v[sys][w].rate.push(x.msgs_per_s);
      if (w === 'w3') v[sys][w].enq.push(x.enq_per_s);
      const pct = x.cpu && x.cpu.server_pct;
      if (typeof pct === 'number') v[sys][w].cpu.push((pct / 100 / x.msgs_per_s) * 1e6);
      else failed.push(`${sys} rep ${rep} ${w}: no server CPU`);
    }
  }
}
const f = (x, d = 0) => (x == null ? 'n/a' : x.toFixed(d));
const out = [];
out.push('');
out.push(`## dlq-sqs (SQS front) vs dlq (own API, DLQ_WORKER=${process.env.DLQ_WORKER}): medians over ${REPS} rep(s)`);
out.push('');
out.push(`dlqd CPU per message = dlqd's CPU % during the workload ÷ 100 ÷ msgs/s, in µs of CPU (W3: per processed message; the CPU also covers that window's enqueues), computed per rep, then the median. 1-min load at run starts: ${loads.length ? `min ${Math.min(...loads).toFixed(2)}, median ${median(loads).toFixed(2)}, max ${Math.max(...loads).toFixed(2)}` : 'n/a'}.`);
out.push('');
out.push(`| system | ${WL.map((w) => `${w.toUpperCase()} msg/s`).join(' | ')}${WL.includes('w3') ? ' | W3 enqueued msg/s' : ''} | ${WL.map((w) => `${w.toUpperCase()} dlqd CPU µs/msg`).join(' | ')} |`);
out.push(`|---|${WL.map(() => '---|').join('')}${WL.includes('w3') ? '---|' : ''}${WL.map(() => '---|').join('')}`);
for (const sys of SYSTEMS) {
  out.push(`| ${sys} | ${WL.map((w) => f(median(v[sys][w].rate))).join(' | ')}${WL.includes('w3') ? ` | ${f(median(v[sys].w3.enq))}` : ''} | ${WL.map((w) => f(median(v[sys][w].cpu), 1)).join(' | ')} |`);
}
out.push(`| dlq-sqs/dlq | ${WL.map((w) => { const a = median(v['dlq-sqs'][w].rate), b = median(v.dlq[w].rate); return a && b ? (a / b).toFixed(2) : 'n/a'; }).join(' | ')}${WL.includes('w3') ? ` | ${(() => { const a = median(v['dlq-sqs'].w3.enq), b = median(v.dlq.w3.enq); return a && b ? (a / b).toFixed(2) : 'n/a'; })()}` : ''} | ${WL.map((w) => { const a = median(v['dlq-sqs'][w].cpu), b = median(v.dlq[w].cpu); return a && b ? (a / b).toFixed(2) : 'n/a'; }).join(' | ')} |`);
out.push('');
for (const l of warn) console.error(`bench-sqs: WARN: ${l}`);
for (const l of failed) console.error(`bench-sqs: FAILED: ${l}`);
if (WL.includes('w3')) {
  const a = median(v['dlq-sqs'].w3.cpu), b = median(v.dlq.w3.cpu);
  out.push(a && b ? `dlq-sqs/dlq W3 CPU per message: ${(a / b).toFixed(2)} (target <= 1.50: ${a / b <= 1.5 ? 'met' : 'NOT met'})` : 'dlq-sqs/dlq W3 CPU per message: n/a');
}
console.log(out.join('\n'));
process.exit(failed.length ? 1 : 0);
EOF

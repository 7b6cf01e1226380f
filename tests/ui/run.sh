#!/usr/bin/env bash
# The admin UI in a real browser: tests/ui/run.sh <dlqd-binary> <artefact-dir>
#
# Starts a real dlqd (its embedded /ui/ files, a temporary SQLite database, an admin and a reader
# token) on a free loopback port, and a second one without tokens; seeds queues and dead letters
# over HTTP (tests/ui/seed.mjs), then drives headless Chromium through the UI
# (tests/ui/ui.test.mjs). Screenshots and the dlqd logs go to <artefact-dir>. Both dlqd are
# always stopped at the end; every step has a timeout.
# Needs: node (18 or 20), tests/ui/node_modules (npm ci), /usr/bin/chromium (or $CHROMIUM).
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 <dlqd-binary> <artefact-dir>" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
dlqd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
mkdir -p "$2"
artefacts="$(cd "$2" && pwd)"
[[ -x "$dlqd" ]] || { echo "ui test: $dlqd is not an executable" >&2; exit 2; }
[[ -d "$here/node_modules/puppeteer-core" ]] || {
  echo "ui test: run (cd tests/ui && npm ci --ignore-scripts --no-audit --no-fund) first" >&2; exit 2; }

work="$(mktemp -d /tmp/dlq-ui-test.XXXXXX)"
pid=""
open_pid=""
stop() {
  local p="$1"
  if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  fi
}
cleanup() {
  local rc=$?
  stop "$pid"
  stop "$open_pid"
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Tokens: random per run; only their SHA-256 goes into the config.
admin_token="ui-admin-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
reader_token="ui-reader-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
admin_hash="$(printf '%s\n' "$admin_token" | timeout 10 "$dlqd" hash-token 2>/dev/null)"
reader_hash="$(printf '%s\n' "$reader_token" | timeout 10 "$dlqd" hash-token 2>/dev/null)"

cat >"$work/dlqd.json" <<JSON
{
  "listen": "127.0.0.1:0",
  "database": {"url": "sqlite:$work/dlq.db"},
  "auth": {"tokens": [
    {"name": "ui-admin", "token_sha256": "$admin_hash", "roles": ["admin"]},
    {"name": "ui-reader", "token_sha256": "$reader_hash", "roles": ["reader"]}
  ]},
  "queues": {
    "webhooks": {"max_lease_expiries": 1, "visibility_timeout": 1},
    "reports": {"retry_window_seconds": 1}
  },
  "job_types": {
    "charge_card": {"idempotent": false},
    "export_csv": {"replay_rate_per_second": 1}
  },
  "trials": {"timeout_seconds": 60},
  "testing": {"allow_clock_override": true},
  "log": {"level": "info", "format": "text", "access": false}
}
JSON

"$dlqd" --config "$work/dlqd.json" >"$work/stdout" 2>"$artefacts/dlqd.log" &
pid=$!
base=""
for _ in $(seq 100); do
  base="$(sed -n 's/^dlqd listening on \(http:[^ ]*\).*/\1/p' "$work/stdout" | head -n1)"
  [[ -n "$base" ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "ui test: dlqd exited at start" >&2; cat "$artefacts/dlqd.log" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$base" ]] || { echo "ui test: dlqd did not say where it listens" >&2; exit 1; }
for _ in $(seq 100); do
  if node -e "fetch(process.argv[1]).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "$base/readyz"; then
    break
  fi
  sleep 0.1
done
echo "ui test: dlqd at $base (log: $artefacts/dlqd.log)"

# A second dlqd without tokens, for the Host and Origin checks (another site's page, a rebound
# name) and for the UI on a server that needs no token.
cat >"$work/open.json" <<JSON
{"listen": "127.0.0.1:0", "database": {"url": "sqlite:$work/open.db"},
 "log": {"level": "info", "format": "text", "access": false}}
JSON
"$dlqd" --config "$work/open.json" >"$work/open.stdout" 2>"$artefacts/dlqd-open.log" &
open_pid=$!
open_base=""
for _ in $(seq 100); do
  open_base="$(sed -n 's/^dlqd listening on \(http:[^ ]*\).*/\1/p' "$work/open.stdout" | head -n1)"
  [[ -n "$open_base" ]] && break
  kill -0 "$open_pid" 2>/dev/null || { echo "ui test: the open dlqd exited at start" >&2; cat "$artefacts/dlqd-open.log" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$open_base" ]] || { echo "ui test: the open dlqd did not say where it listens" >&2; exit 1; }

export DLQ_UI_BASE="$base" DLQ_UI_ADMIN_TOKEN="$admin_token" DLQ_UI_READER_TOKEN="$reader_token"
export DLQ_UI_ARTEFACTS="$artefacts" DLQ_UI_SEED="$work/seed.json" DLQ_UI_DIR="$here/../../ui"
export DLQ_UI_OPEN_BASE="$open_base"
timeout 60 node "$here/seed.mjs"
TMPDIR="$work" timeout 150 node "$here/ui.test.mjs"   # the Chromium profile lives in $work too
echo "ui test: passed (screenshots in $artefacts)"

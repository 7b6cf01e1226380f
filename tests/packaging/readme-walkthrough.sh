#!/usr/bin/env bash
# Runs the README's "Try it" walkthrough as written: every ```sh block of that section, in order,
# in one shell, against a fresh dlqd of its own (config/dlqd.json, a temp SQLite database, a free
# 127.0.0.1 port), with curl failing on any error status and dlqctl taken from beside DLQD. Then
# checks where the walkthrough ends: message 1 succeeded, replay run 1 matched one message and
# the trial run of message 2 succeeded.
# Usage: readme-walkthrough.sh DLQD
set -euo pipefail
[ $# = 1 ] || { echo "usage: readme-walkthrough.sh DLQD" >&2; exit 2; }
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$source_dir/README.md"
dlqd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
app_dir="$(dirname "$dlqd")"

fail() { echo "readme-walkthrough: $*" >&2; exit 1; }
[ -x "$dlqd" ] || fail "$dlqd is not an executable"
[ -x "$app_dir/dlqctl" ] || fail "no dlqctl beside $dlqd (build the dlqctl target)"
for tool in curl jq timeout; do
  command -v "$tool" >/dev/null ||
    fail "$tool is missing (install-deps.sh installs it with DLQ_INSTALL_TEST_TOOLS=1)"
done

work="$(mktemp -d)"
dlqd_pid=""
cleanup() {
  if [ -n "$dlqd_pid" ]; then
    kill "$dlqd_pid" 2>/dev/null || true
    wait "$dlqd_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The walkthrough talks to this dlqd only: no proxy, no token, no other URL for dlqctl.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY DLQ_TOKEN DLQ_CA_FILE

# The shipped config (what scripts/run.sh starts), with this test's port and database as flags.
cp "$source_dir/config/dlqd.json" "$work/dlqd.json"
"$dlqd" --config "$work/dlqd.json" --listen 127.0.0.1:0 --db "sqlite:$work/dlq.db" \
  >"$work/dlqd.out" 2>"$work/dlqd.err" &
dlqd_pid=$!
address=""
for _ in $(seq 200); do  # at most 20 s
  address="$(sed -n 's#^dlqd listening on http://\(127\.0\.0\.1:[0-9]*\)$#\1#p' "$work/dlqd.out")"
  [ -n "$address" ] && break
  kill -0 "$dlqd_pid" 2>/dev/null || { cat "$work/dlqd.err" >&2; fail "dlqd exited before it was ready"; }
  sleep 0.1
done
[ -n "$address" ] || { cat "$work/dlqd.err" >&2; fail "dlqd printed no readiness line in 20 s"; }

# The section's ```sh blocks, each line kept with its README line number (for the message when a
# line fails), with the README's address replaced by this dlqd's and `curl -s` made to fail on an
# error status (and to give up after 30 s).
awk '
  /^## / { in_section = ($0 ~ /^## Try it/); next }
  in_section && /^```sh$/ { in_block = 1; blocks++; next }
  in_block && /^```$/ { in_block = 0; next }
  in_block { print NR "\t" $0 }
  END { if (blocks == 0) exit 1 }
' "$readme" >"$work/lines" || fail "README.md has no \`\`\`sh block under \"## Try it\""
sed -i -e "s#localhost:8080#$address#g" -e "s#127\.0\.0\.1:8080#$address#g" \
  -e 's#curl -s #curl -sS --fail-with-body --max-time 30 #g' "$work/lines"
if grep -nE 'localhost|:8080|https?://' "$work/lines" | grep -v "$address" >&2; then
  fail "these README lines name an address the walkthrough does not rewrite"
fi

{
  echo "trap 'echo >&2; echo \"readme-walkthrough: README.md line \$(sed -n \"\$((LINENO - 1))p\" \"$work/numbers\") failed: \$BASH_COMMAND\" >&2' ERR"
  cut -f2- "$work/lines"
} >"$work/walkthrough.sh"
cut -f1 "$work/lines" >"$work/numbers"

echo "readme-walkthrough: $(cut -f1 "$work/lines" | wc -l) README lines against dlqd at $address"
status=0
(cd "$work" && PATH="$app_dir:$PATH" DLQ_URL="http://$address" \
  timeout 180 bash -euo pipefail "$work/walkthrough.sh") || status=$?
echo
if [ "$status" = 124 ]; then fail "the walkthrough did not end within 180 s"; fi
if [ "$status" != 0 ]; then
  echo "--- dlqd's log" >&2
  tail -n 30 "$work/dlqd.err" >&2
  fail "the walkthrough failed (exit $status)"
fi

# Where the walkthrough says it ends.
get() { curl -sS --fail-with-body --max-time 30 "http://$address$1"; }
message="$(get /queues/emails/messages/1)" || fail "GET /queues/emails/messages/1: $message"
[ "$(jq -r .status <<<"$message")" = succeeded ] ||
  fail "message 1 should have succeeded; it is: $message"
run="$(get /dlq/replays/1)" || fail "GET /dlq/replays/1: $run"
[ "$(jq -r .matched <<<"$run")" = 1 ] || fail "replay run 1 should have matched 1 message; it is: $run"
trial="$(get /queues/emails/messages/2/trials/1)" || fail "GET /queues/emails/messages/2/trials/1: $trial"
[ "$(jq -r .status <<<"$trial")" = succeeded ] || fail "trial 1 should have succeeded; it is: $trial"
echo "readme-walkthrough: OK (message 1 succeeded; replay run 1 matched 1; trial 1 succeeded)"

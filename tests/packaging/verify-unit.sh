#!/usr/bin/env bash
# Checks config/dlqd.service: `systemd-analyze verify` must print nothing (it exits 0 on
# unknown keys and bad values, and only warns, so any output fails the check), the offline
# security exposure must stay at or below 3.0 (--threshold counts tenths), and the keys operators rely on must be present.
# systemd-analyze verify needs ExecStart's binary to exist, so a copy of the unit points at the
# dlqd that was just built. Runs without a running systemd (as root or not).
# Usage: verify-unit.sh UNIT_FILE DLQD_BINARY
set -euo pipefail
unit="$1"
dlqd="$2"

if ! command -v systemd-analyze >/dev/null; then
  echo "verify-unit: systemd-analyze is missing (install-deps.sh installs systemd with DLQ_INSTALL_TEST_TOOLS=1)" >&2
  exit 1
fi
[ -x "$dlqd" ] || { echo "verify-unit: $dlqd is not an executable" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
grep -q '^ExecStart=/usr/local/bin/dlqd ' "$unit" ||
  { echo "verify-unit: ExecStart must run /usr/local/bin/dlqd" >&2; exit 1; }
sed "s#^ExecStart=/usr/local/bin/dlqd #ExecStart=$dlqd #" "$unit" > "$work/dlqd.service"

status=0
out="$(systemd-analyze verify "$work/dlqd.service" 2>&1)" || status=$?
if [ "$status" != 0 ] || [ -n "$out" ]; then
  echo "verify-unit: systemd-analyze verify (exit $status) says:" >&2
  echo "$out" >&2
  exit 1
fi

status=0
out="$(systemd-analyze security --offline=yes --threshold=30 "$work/dlqd.service" 2>&1)" || status=$?
if [ "$status" != 0 ]; then
  echo "verify-unit: exposure above 3.0 (systemd-analyze security):" >&2
  echo "$out" | tail -n 20 >&2
  exit 1
fi

for key in 'Restart=on-failure' 'ExecReload=/bin/kill -HUP $MAINPID' 'KillSignal=SIGTERM' \
           'TimeoutStopSec=' 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'PrivateTmp=yes' \
           'ReadWritePaths=/var/lib/dlq'; do
  grep -qF -- "$key" "$unit" || { echo "verify-unit: $unit lacks $key" >&2; exit 1; }
done
echo "verify-unit: $unit OK ($(echo "$out" | tail -n 1 | sed 's/^→ //'))"

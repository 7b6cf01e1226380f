#!/usr/bin/env bash
# The crash test: kill -9 under mixed load, as rounds of the chaos test (scripts/chaos.sh) with
# kill -9 as its only fault, so every call is checked by its history checker
# (tests/chaos/check.py): nothing acknowledged lost or undone, nothing made twice or from nowhere,
# every acknowledged admin action audited once, nothing `processing` past its lease.
#   scripts/crash-test.sh [--rounds N] [--seconds S] [--backend sqlite|postgresql|both]
# Defaults: 20 rounds of up to 5 s each (a kill every 0.5 to S s, N × S s of load), both backends.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=20; seconds=5; backend=both
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--seconds S] [--backend sqlite|postgresql|both]" >&2; exit 2 ;;
  esac
done
exec scripts/chaos.sh --nemesis kill --backend "$backend" --every "$seconds" \
  --seconds "$(awk -v r="$rounds" -v s="$seconds" 'BEGIN { printf "%d", r * s }')"

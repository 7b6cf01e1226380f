#!/usr/bin/env bash
# dlqd's SQS front against the pinned AWS SDK and sqs-consumer: tests/sqs/run.sh <dlqd-binary>
#
# Installs tests/sqs's pinned dependencies (npm ci, no install scripts) and runs the node:test
# suites, which start their own dlqd processes on loopback port 0, each suite once on a temporary
# SQLite database and once on a fresh database of the PostgreSQL at DLQ_TEST_PG_URL (required: no
# URL is a failure, never a skip). Prints its time; exits non-zero when anything fails. Needs:
# node 18 or newer, npm, psql, the npm registry (or a warm npm cache) for npm ci.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 <dlqd-binary>" >&2
  exit 2
fi
dlqd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[[ -x "$dlqd" ]] || { echo "SQS tests: $dlqd is not an executable" >&2; exit 2; }
if [[ -z "${DLQ_TEST_PG_URL:-}" ]]; then
  echo "SQS tests: set DLQ_TEST_PG_URL (scripts/pg-cluster.sh start prints one); the PostgreSQL pass is not optional" >&2
  exit 2
fi
start=$SECONDS
trap 'echo "   (SQS front: $((SECONDS - start)) s)"' EXIT
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
# The suites end by themselves; the timeout only turns a hang into a failure.
DLQD="$dlqd" timeout 150 node --test sdk.test.js sqs.test.js

#!/usr/bin/env bash
# The TypeScript worker library against a real dlqd: tests/clients/node.sh <dlqd-binary>
#
# Installs clients/node's pinned dev dependencies (npm ci, no install scripts), compiles src/,
# test/, examples/ and bench/ with tsc, and runs the node:test suites (clients/node/test), which
# start their own dlqd processes on loopback port 0 with temporary SQLite databases, and one
# smoke on a fresh database of the PostgreSQL at DLQ_TEST_PG_URL (it fails without one). Prints
# its time; exits non-zero when anything fails. Needs: node 18 or newer, npm, psql, the npm
# registry (or a warm npm cache) for npm ci.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 <dlqd-binary>" >&2
  exit 2
fi
dlqd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[[ -x "$dlqd" ]] || { echo "node client tests: $dlqd is not an executable" >&2; exit 2; }
start=$SECONDS
trap 'echo "   (TypeScript client: $((SECONDS - start)) s)"' EXIT
cd "$(dirname "$0")/../../clients/node"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
npm run --silent build
# The suites end by themselves; the timeout only turns a hang into a failure.
DLQD="$dlqd" timeout 150 npm test --silent

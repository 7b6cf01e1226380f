#!/usr/bin/env bash
# The worker libraries' phase of scripts/test.sh: each library's suite against the real dlqd
# given, on SQLite, with one smoke on a fresh PostgreSQL database (DLQ_TEST_PG_URL must be set:
# the smoke fails without it).
set -euo pipefail
dlqd="$(realpath "$1")"
cd "$(dirname "$0")/../.."
tests/clients/python.sh "$dlqd"
tests/clients/node.sh "$dlqd"

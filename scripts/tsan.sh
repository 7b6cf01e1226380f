#!/usr/bin/env bash
# ThreadSanitizer over the concurrency-heavy suites: the store's group commit and threads (store
# tests), long-poll, leases and batches (integration tests on SQLite), and several nodes and
# leadership on PostgreSQL. dlqd itself is built with TSan too, and every process writes its
# reports under one folder: the run fails when any report appears, or when a suite fails.
#   scripts/tsan.sh
# Not part of scripts/test.sh: its build and runs take about 25 minutes on 2 cores, which CI's
# 90 minutes cannot hold beside everything else (README, "Tests").
set -euo pipefail
cd "$(dirname "$0")/.."

DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLQ_TSAN=ON -DDLQ_BUILD_TESTS=ON >/dev/null
cmake --build build/tsan -j"${JOBS:-2}" --target dlqd dlq_unit_tests dlq_store_tests dlq_integration_tests

reports="$(mktemp -d /tmp/dlq-tsan-XXXXXX)"
export TSAN_OPTIONS="log_path=$reports/report suppressions=$PWD/tests/tsan.supp second_deadlock_stack=1 history_size=4"
export DLQ_PG_PORT="${DLQ_PG_PORT:-55436}"
trap 'scripts/pg-cluster.sh stop' EXIT
DLQ_TEST_PG_URL="$(scripts/pg-cluster.sh start)"
export DLQ_TEST_PG_URL

status=0
run() {  # run BACKEND BINARY [boost test filter]
  echo "== $2 on $1 ${3:-}"
  DLQ_TEST_BACKEND="$1" "build/tsan/tests/$2" ${3:+--run_test=$3} || status=1
}
run sqlite dlq_unit_tests
run sqlite dlq_store_tests
run postgresql dlq_store_tests
run sqlite dlq_integration_tests 'long_poll,leases,claims,batches,lifecycle,process'
run postgresql dlq_integration_tests 'multi_node,leadership,long_poll,dead_letter_desk'

if compgen -G "$reports/report*" > /dev/null; then
  echo "ThreadSanitizer reported:" >&2
  cat "$reports"/report* >&2
  status=1
fi
[ "$status" = 0 ] && echo "tsan: no report, every suite passed"
exit "$status"

#!/usr/bin/env bash
# Everything CI runs, on a fresh Debian 12 machine: installs what is missing, builds Release with
# -Werror and runs every suite on SQLite and on a throwaway PostgreSQL, then builds with
# ASan+UBSan and runs the unit, integration and dlqctl suites and the I/O fault loop on SQLite. A
# minute of the chaos test per backend (faults under load, every call checked against the
# database by the history checker), the admin UI's test in headless Chromium
# and the worker libraries' suites (tests/clients) run between the two, and a minute of fuzzing
# (libFuzzer) at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="${JOBS:-2}"
DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh

echo "== Release build (-Werror)"
phase=$SECONDS
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DDLQ_WERROR=ON -DDLQ_BUILD_TESTS=ON >/dev/null
cmake --build build/release -j"$jobs"
echo "   (Release build: $((SECONDS - phase)) s)"

echo "== OpenAPI document: lint (Redocly, recommended-strict)"
phase=$SECONDS
# Pinned in tests/openapi/package-lock.json; no telemetry, no update check.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
# --ignore-scripts: none of these packages needs an install script to work.
(cd tests/openapi && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
tests/openapi/node_modules/.bin/redocly lint --config tests/openapi/redocly.yaml docs/openapi.json
echo "   (OpenAPI lint: $((SECONDS - phase)) s)"

echo "== PostgreSQL for the tests"
trap 'scripts/pg-cluster.sh stop' EXIT
DLQ_TEST_PG_URL="$(scripts/pg-cluster.sh start)"
export DLQ_TEST_PG_URL

echo "== Release suites (SQLite and PostgreSQL)"
# The integration tests' HTTP client records every answer it reads, for the check below.
responses="$PWD/build/release/recorded-responses.jsonl"
rm -f "$responses"
phase=$SECONDS
# The fault tests' short sizes (the full ones are their defaults: docs/reliability.md).
export DLQ_POWER_CUTS=5 DLQ_POWER_CUTS_NORMAL=3 DLQ_POWER_CUTS_ABC=3 DLQ_FAULTS_STRIDE=4 \
  DLQ_FAULTS_CUT_STRIDE=40 DLQ_DAMAGED_RUNS=5
# Two suites at a time: they share no port (dlqd listens on port 0), no file (each its own temp
# folders) and no database (each PostgreSQL test creates its own), and spend most of their time
# waiting on the servers they start.
DLQ_RECORD_RESPONSES="$responses" ctest --test-dir build/release --output-on-failure --timeout 900 \
  -j"$jobs"
echo "   (Release suites: $((SECONDS - phase)) s)"

echo "== Recorded answers against docs/openapi.json (JSON Schema 2020-12, ajv)"
phase=$SECONDS
node tests/openapi/check-responses.js docs/openapi.json "$responses"
echo "   (Answers against the schemas: $((SECONDS - phase)) s)"

echo "== Admin UI in headless Chromium (puppeteer-core; screenshots in build/ui-artefacts)"
phase=$SECONDS
(cd tests/ui && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
tests/ui/run.sh build/release/app/dlqd build/ui-artefacts
echo "   (UI in the browser: $((SECONDS - phase)) s)"

echo "== Worker libraries: Python and TypeScript against dlqd (tests/clients)"
phase=$SECONDS
tests/clients/run.sh build/release/app/dlqd
echo "   (worker libraries: $((SECONDS - phase)) s)"

echo "== SQS front: @aws-sdk/client-sqs and sqs-consumer against dlqd (tests/sqs; SQLite and PostgreSQL)"
tests/sqs/run.sh build/release/app/dlqd
echo "== SQS query protocol: Debian's boto3 1.26 and aws CLI 2.9 against dlqd (tests/sqs/query_test.py; SQLite and PostgreSQL)"
tests/sqs/query.sh build/release/app/dlqd

echo "== Chaos test, a minute per backend (longer: scripts/chaos.sh --minutes M)"
phase=$SECONDS
scripts/chaos.sh --minutes 1 --backend both
# And the checker against a real bug: dlqd answering before its COMMIT, power cut at a sync.
scripts/chaos.sh --seconds 10 --faulty
echo "   (chaos test: $((SECONDS - phase)) s)"

echo "== Benchmark shapes of issue 40, a smoke run: every workload's counts checked, the figures not"
phase=$SECONDS
scripts/bench.sh --clients --quick
echo "   (bench shapes smoke: $((SECONDS - phase)) s)"

# -g1: line tables and function names, which is all ASan's reports read; the rest of the debug
# information only costs compile time.
echo "== ASan+UBSan build"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DDLQ_SANITIZE=ON -DDLQ_WERROR=ON \
  -DDLQ_BUILD_TESTS=ON -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" >/dev/null
phase=$SECONDS
cmake --build build/asan -j"$jobs" --target dlqd dlq_unit_tests dlq_integration_tests dlqctl dlq_dlqctl_tests
echo "   (ASan+UBSan build: $((SECONDS - phase)) s)"

echo "== Sanitized suites (SQLite)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
phase=$SECONDS
ctest --test-dir build/asan --output-on-failure --timeout 1800 -j"$jobs" \
  -R '^(unit|integration_sqlite|dlqctl_sqlite)$'
echo "   (sanitized suites: $((SECONDS - phase)) s)"

echo "== Sanitized I/O fault loop (SQLite, every 8th call failing once)"
phase=$SECONDS
# What is sanitized is dlqd, the process the faults hit: the Release test binary drives it.
DLQ_TEST_DLQD="$PWD/build/asan/app/dlqd" DLQ_TEST_BACKEND=sqlite DLQ_FAULTS_STRIDE=8 \
  build/release/tests/dlq_fault_tests -t io_faults
echo "   (sanitized I/O fault loop: $((SECONDS - phase)) s)"

echo "== Fuzzing the request path for 60 s (clang, ASan+UBSan; a longer run: scripts/fuzz.sh 1800)"
phase=$SECONDS
JOBS="$jobs" scripts/fuzz.sh 60
echo "   (fuzz build and run: $((SECONDS - phase)) s)"

echo "== All tests passed (${SECONDS} s in all)"

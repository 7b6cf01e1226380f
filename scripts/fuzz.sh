#!/usr/bin/env bash
# Fuzzes dlqd's request path (tests/fuzz/request_fuzzer.cpp) with libFuzzer: built with Debian's
# clang, ASan and UBSan, started from the seed corpus in tests/fuzz/corpus.
#   scripts/fuzz.sh [SECONDS]   default 60 (what test.sh runs); a longer run: scripts/fuzz.sh 1800
# What it finds lands in build/fuzz/findings/ (a crash- or leak- file per finding, to replay with
# build/fuzz/tests/fuzz/dlq_request_fuzzer FILE); the corpus it grows stays in build/fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh
# -gline-tables-only: a finding's stack trace needs lines, not variables; the rest of the debug
# information only costs compile time.
CC=clang-14 CXX=clang++-14 cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLQ_FUZZ=ON \
  -DDLQ_BUILD_TESTS=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" >/dev/null
cmake --build build/fuzz -j"${JOBS:-2}" --target dlq_request_fuzzer
mkdir -p build/fuzz/corpus build/fuzz/findings
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The first folder receives what the run learns; the seeds are read, never written.
build/fuzz/tests/fuzz/dlq_request_fuzzer -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build/fuzz/findings/ \
  build/fuzz/corpus tests/fuzz/corpus

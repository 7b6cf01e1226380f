#!/usr/bin/env bash
# Fuzzes one of dlqd's untrusted inputs with libFuzzer: built with Debian's clang, ASan and UBSan,
# started from the target's seed corpus.
#   scripts/fuzz.sh [SECONDS] [TARGET]   SECONDS default 60 (what test.sh runs); a longer run:
#                                         scripts/fuzz.sh 1800
#   TARGET   request (default): one HTTP request through dlqd's parser, router and decoders
#                                (tests/fuzz/request_fuzzer.cpp, seeds tests/fuzz/corpus)
#            config: a config file through parse_config (config_fuzzer.cpp, corpus_config)
#            redact: a payload or error text through the redactor and the incident title
#                    (redact_fuzzer.cpp, corpus_redact)
# What it finds lands in build/fuzz/findings/ (a crash-, leak- or timeout- file per finding; for
# config and redact the name starts with the target: config-crash-…), to replay with
# build/fuzz/tests/fuzz/dlq_TARGET_fuzzer FILE; the corpus it grows stays in build/fuzz/corpus
# (request) or build/fuzz/corpus_TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
target="${2:-request}"
case "$target" in
  request) seeds=tests/fuzz/corpus grown=build/fuzz/corpus prefix=build/fuzz/findings/ ;;
  config | redact)
    seeds="tests/fuzz/corpus_$target" grown="build/fuzz/corpus_$target"
    prefix="build/fuzz/findings/$target-"
    ;;
  *)
    echo "fuzz.sh: unknown target \"$target\" (request, config or redact)" >&2
    exit 2
    ;;
esac
DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh
# -gline-tables-only: a finding's stack trace needs lines, not variables; the rest of the debug
# information only costs compile time.
CC=clang-14 CXX=clang++-14 cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLQ_FUZZ=ON \
  -DDLQ_BUILD_TESTS=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" >/dev/null
cmake --build build/fuzz -j"${JOBS:-2}" --target "dlq_${target}_fuzzer"
mkdir -p "$grown" build/fuzz/findings
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The first folder receives what the run learns; the seeds are read, never written.
"build/fuzz/tests/fuzz/dlq_${target}_fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$prefix" \
  "$grown" "$seeds"

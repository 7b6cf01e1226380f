#!/usr/bin/env bash
# Installs what is missing, builds dlqd and dlqctl (Release; the README's dlqctl lines run
# build/release/app/dlqctl) and starts dlqd on config/dlqd.json: SQLite at data/dlq.db, listening
# on 127.0.0.1:8080. Extra arguments go to dlqd.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"${JOBS:-2}" --target dlqd dlqctl >&2  # stdout: only dlqd's readiness line
exec build/release/app/dlqd --config config/dlqd.json "$@"

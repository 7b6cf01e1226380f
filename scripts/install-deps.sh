#!/usr/bin/env bash
# Installs every Debian 12 package dlq needs to build, test and run. run.sh, test.sh, bench.sh
# and the Dockerfile all call this one script so that their package lists cannot drift apart.
set -euo pipefail

# DLQ_RUNTIME_ONLY=1: only the shared libraries dlqd links (the Docker runtime image).
# DLQ_INSTALL_TEST_TOOLS=1: also what the tests and benchmarks use (PostgreSQL server, curl, jq,
# bc, promtool, Node and npm, clang for the fuzzer, systemd-analyze, Chromium for the UI test).
if [ "${DLQ_RUNTIME_ONLY:-0}" = 1 ]; then
  packages=(
    libboost-json1.81.0 libboost-program-options1.81.0 libboost-url1.81.0 libsoci-core4.0 libsoci-sqlite3-4.0
    libsoci-postgresql4.0 libspdlog1.10 libfmt9 libpq5 libsqlite3-0 libssl3 libtcmalloc-minimal4
  )
else
  packages=(
    g++ cmake make ca-certificates
    libboost1.81-dev libboost-json1.81-dev libboost-test1.81-dev libboost-program-options1.81-dev
    libboost-url1.81-dev
    libsoci-dev libsqlite3-dev libpq-dev libspdlog-dev libfmt-dev libssl-dev libgoogle-perftools-dev
  )
fi
if [ "${DLQ_INSTALL_TEST_TOOLS:-0}" = 1 ]; then
  # curl and jq run the README's walkthrough (tests/packaging/readme-walkthrough.sh).
  packages+=(postgresql sqlite3 curl jq bc openssl clang-14 libclang-rt-14-dev)
  # Python 3 runs the layer check (tests/layers/check_layers.py), a plain script without packages,
  # and the Python worker library's suite (tests/clients/python.sh). That script also installs
  # clients/python offline into a throwaway venv: python3-venv makes the venv, and pip builds the
  # wheel with Debian's python3-setuptools and python3-wheel (--no-build-isolation, nothing fetched).
  packages+=(python3 python3-venv python3-setuptools python3-wheel)
  # The SQS query protocol's suite (tests/sqs/query.sh) drives dlqd with Debian's boto3 1.26 and
  # aws CLI 2.9, which speak that protocol (newer ones speak JSON).
  packages+=(python3-boto3 awscli)
  # The chaos test (scripts/chaos.sh): socat is the proxy between a dlqd node and PostgreSQL that
  # it stalls and drops; its checker (tests/chaos/check.py) is plain Python 3.
  packages+=(socat)
  # systemd-analyze checks config/dlqd.service (tests/packaging/verify-unit.sh); script(1),
  # from the essential bsdutils, gives dlqctl a terminal in its progress-bar test.
  packages+=(systemd)
  # promtool checks /metrics; it comes with Debian's prometheus package, whose daemon we keep
  # from starting (see below).
  packages+=(prometheus)
  # Node and npm run the OpenAPI checks (tests/openapi: Redocly's linter, ajv). Debian 12 has
  # Node 18; a machine that already has node or npm (e.g. from NodeSource) keeps its own, as
  # Debian's npm package conflicts with NodeSource's nodejs.
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
  # The admin UI's test drives Debian's headless Chromium (tests/ui); one font family so that its
  # screenshots show text.
  packages+=(chromium fonts-dejavu-core)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# No service a package brings may start here (the prometheus daemon above): a policy-rc.d that
# refuses, for the length of the install, unless the system already has one.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi
$sudo apt-get install -y -q --no-install-recommends --no-upgrade "${missing[@]}"
if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
  $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi

#!/usr/bin/env bash
# The Python worker library's phase (issue 35): installs clients/python offline into a throwaway
# venv the way Debian 12 allows (its pip refuses system installs; build isolation would fetch
# setuptools), then runs clients/python/tests (unittest, Debian's interpreter, the library from
# the tree) against DLQD, which the tests start on 127.0.0.1:0 with temp SQLite databases.
# DLQ_TEST_PG_URL is passed through for the one PostgreSQL smoke (unset: that test fails).
# Usage: tests/clients/python.sh DLQD
set -euo pipefail
[ $# = 1 ] || { echo "usage: tests/clients/python.sh DLQD" >&2; exit 2; }
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
dlqd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
python=/usr/bin/python3

fail() { echo "clients/python: $*" >&2; exit 1; }
[ -x "$dlqd" ] || fail "$dlqd is not an executable"
[ -x "$python" ] || fail "no $python (install-deps.sh installs python3 with DLQ_INSTALL_TEST_TOOLS=1)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "Python 3.11 or newer needed"

start=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. The offline install, as the README gives it. From a copy: pip builds in the source folder
#    (build/, *.egg-info), which must not litter the tree.
tar -C "$source_dir/clients" --exclude=__pycache__ --exclude='*.egg-info' --exclude=build \
  -cf - python | tar -C "$work" -xf -
"$python" -m venv --system-site-packages "$work/venv" ||
  fail "venv failed (python3-venv missing?)"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$work/venv/bin/pip" install --quiet --no-index \
  --no-build-isolation "$work/python" ||
  fail "offline install failed (python3-setuptools and python3-wheel missing?)"
(cd "$work" && venv/bin/python - "$work/venv" <<'PY') || fail "the installed package does not import"
import sys
import dlq
assert dlq.__file__.startswith(sys.argv[1]), dlq.__file__
assert dlq.Worker and dlq.Client and dlq.Fail
PY
echo "   offline install into a venv: ok ($((SECONDS - start)) s)"

# 2. The suite, from the tree.
suite=$SECONDS
(cd "$source_dir" &&
  DLQD="$dlqd" PYTHONPATH=clients/python/src PYTHONDONTWRITEBYTECODE=1 \
    "$python" -m unittest discover -s clients/python/tests) || fail "the suite failed"
echo "   (suite: $((SECONDS - suite)) s; Python worker library phase: $((SECONDS - start)) s)"

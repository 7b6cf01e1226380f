#!/usr/bin/env bash
# dlqd's SQS front over the query protocol (Debian's boto3 1.26 and aws CLI 2.9) and its dead-letter
# queues: tests/sqs/query.sh <dlqd-binary> [unittest arguments, e.g. QueryProtocolSqlite]
#
# Runs tests/sqs/query_test.py (Python unittest), whose scenario classes start their own dlqd
# processes on loopback port 0, each once on a temporary SQLite database and once on a fresh
# database of the PostgreSQL at DLQ_TEST_PG_URL (required: no URL is a failure, never a skip).
# Prints its time; exits non-zero when anything fails. Needs: Debian's python3-boto3 and awscli
# (DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh), psql. Always /usr/bin/python3 and /usr/bin/aws:
# a pyenv python3 or aws earlier on PATH may be a newer one that speaks SQS's JSON protocol.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 <dlqd-binary> [unittest arguments]" >&2
  exit 2
fi
dlqd="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
[[ -x "$dlqd" ]] || { echo "SQS query tests: $dlqd is not an executable" >&2; exit 2; }
if [[ -z "${DLQ_TEST_PG_URL:-}" ]]; then
  echo "SQS query tests: set DLQ_TEST_PG_URL (scripts/pg-cluster.sh start prints one); the PostgreSQL pass is not optional" >&2
  exit 2
fi
command -v psql >/dev/null || { echo "SQS query tests: psql not found (install postgresql-client)" >&2; exit 2; }
[[ -x /usr/bin/aws ]] || { echo "SQS query tests: /usr/bin/aws not found (Debian's awscli: DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh)" >&2; exit 2; }
# A PYTHONPATH or PYTHONHOME could put another botocore (one that speaks JSON) in front of Debian's.
unset PYTHONPATH PYTHONHOME
/usr/bin/python3 -c "import boto3" 2>/dev/null \
  || { echo "SQS query tests: /usr/bin/python3 cannot import boto3 (Debian's python3-boto3: DLQ_INSTALL_TEST_TOOLS=1 scripts/install-deps.sh)" >&2; exit 2; }
start=$SECONDS
trap 'echo "   (SQS query protocol: $((SECONDS - start)) s)"' EXIT
cd "$(dirname "$0")"
# The suite ends by itself; the timeout only turns a hang into a failure (on SIGTERM the suite
# still kills its dlqd processes, removes its folders and drops its databases).
DLQD="$dlqd" PYTHONDONTWRITEBYTECODE=1 timeout -k 10 150 /usr/bin/python3 query_test.py "$@"

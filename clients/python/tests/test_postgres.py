"""One smoke on PostgreSQL: a fresh database on $DLQ_TEST_PG_URL, dlqd on it, 50 jobs through a
Worker, each succeeded once; the database is dropped after. No URL, or none that answers, is a
failure, never a skip."""

from __future__ import annotations

import os
import subprocess
import threading
import unittest
import urllib.parse
import uuid

import support
from support import dlq


def psql(url: str, sql: str) -> None:
    done = subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise AssertionError(f"psql {sql!r}: {done.stderr.strip()}")


class PostgresSmoke(unittest.TestCase):
    def test_50_jobs_through_a_worker_on_a_fresh_database(self) -> None:
        url = os.environ.get("DLQ_TEST_PG_URL")
        if not url:
            self.fail("set DLQ_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:55441/postgres)")
        name = "dlq_py_" + uuid.uuid4().hex[:12]
        psql(url, f"CREATE DATABASE {name}")
        self.addCleanup(psql, url, f"DROP DATABASE IF EXISTS {name}")
        parts = urllib.parse.urlsplit(url)
        server = support.Dlqd(db=urllib.parse.urlunsplit(parts._replace(path="/" + name))).start()
        self.addCleanup(server.cleanup)  # runs before the DROP (cleanups run last-in first-out)
        c = dlq.Client(server.url)
        self.addCleanup(c.close)
        ids = [m["id"] for m in c.enqueue_batch("pg", [{"payload": {"n": i}, "job_type": "t"}
                                                      for i in range(50)])]
        seen: list[int] = []
        lock = threading.Lock()
        w = support.worker("pg", c, concurrency=8, wait_seconds=1)

        @w.handler("t")
        def handle(job: dlq.Job) -> None:
            with lock:
                seen.append(job.id)

        running = support.RunningWorker(w)
        support.wait_for(lambda: c.stats("pg")["succeeded"] == 50, 20, "50 successes", every=0.1)
        running.stop()
        self.assertEqual(sorted(seen), sorted(ids))
        for m in ids:
            self.assertEqual(support.outcomes(c, "pg", m), ["succeeded"])


if __name__ == "__main__":
    unittest.main()

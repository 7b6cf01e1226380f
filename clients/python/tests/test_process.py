"""Workers in processes of their own: SIGTERM with 8 running, a second signal, kill -9, and the
example (examples/email_worker.py) run once."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import unittest
import uuid

import support
from support import dlq

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "email_worker.py")


class Process:
    """A child Python process whose stdout lines we read with a deadline."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        child_env = dict(os.environ, PYTHONPATH=support.SRC, PYTHONUNBUFFERED="1", **(env or {}))
        self.proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=child_env, cwd=HERE)
        self.lines: list[str] = []
        self.partial = b""

    def wait_lines(self, prefix: str, count: int, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while len([x for x in self.lines if x.startswith(prefix)]) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{count} {prefix!r} lines not seen: {self.lines}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)  # unbuffered: select must see what is left
                if not chunk:
                    raise AssertionError(f"child ended: {self.lines} {self.finish()!r}")
                self.partial += chunk
                *whole, self.partial = self.partial.split(b"\n")
                self.lines += [x.decode().strip() for x in whole]
        return [x for x in self.lines if x.startswith(prefix)]

    def finish(self, timeout: float = 10) -> bytes:
        """Waits for the exit; returns stderr (the library's log)."""
        out, err = self.proc.communicate(timeout=timeout)
        self.lines += (self.partial + out).decode().splitlines()
        self.partial = b""
        return err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


class ProcessTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.dlqd = support.Dlqd({"queues": {"k9": {"backoff": {"initial_seconds": 0.1}}}}).start()
        cls.client = dlq.Client(cls.dlqd.url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.dlqd.cleanup()

    def worker(self, queue: str, concurrency: int, shutdown_timeout: float, lease: int) -> Process:
        p = Process(["worker_proc.py", self.dlqd.url, queue, str(concurrency),
                     str(shutdown_timeout), str(lease)])
        self.addCleanup(p.kill)
        return p

    def enqueue(self, queue: str, kind: str, seconds: float, n: int) -> list[int]:
        return [m["id"] for m in self.client.enqueue_batch(
            queue, [{"payload": {"kind": kind, "seconds": seconds}} for _ in range(n)])]

    def test_sigterm_with_8_running_leaves_each_succeeded_or_released(self) -> None:
        q = "term"
        quick = self.enqueue(q, "quick", 0.8, 4)
        slow = self.enqueue(q, "cooperative", 60, 4)
        untouched = self.enqueue(q, "quick", 0, 4)
        p = self.worker(q, 8, 1.5, 30)
        p.wait_lines("started", 8, 10)
        t0 = time.monotonic()
        p.proc.send_signal(signal.SIGTERM)
        err = p.finish()
        self.assertEqual(p.proc.returncode, 0, err[-2000:])
        self.assertLess(time.monotonic() - t0, 4)
        self.assertIn("run returned", p.lines)
        c = self.client
        for m in quick:
            self.assertEqual(c.get(q, m)["status"], "succeeded")
        for m in slow:
            self.assertEqual(c.get(q, m)["status"], "pending")
            self.assertEqual(support.outcomes(c, q, m), ["released"])
        for m in untouched:
            self.assertEqual(c.get(q, m)["attempts"], 0, (support.outcomes(c, q, m), err.decode()))
        self.assertEqual(c.stats(q)["processing"], 0)

    def test_a_second_signal_exits_at_once(self) -> None:
        q = "twice"
        self.enqueue(q, "stuck", 30, 2)
        p = self.worker(q, 2, 25, 30)
        p.wait_lines("started", 2, 10)
        p.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        t0 = time.monotonic()
        p.proc.send_signal(signal.SIGINT)
        p.finish(timeout=5)
        self.assertLess(time.monotonic() - t0, 2)
        self.assertEqual(p.proc.returncode, 128 + signal.SIGINT)
        self.assertNotIn("run returned", p.lines)

    def test_kill_9_gives_the_jobs_back_after_their_2_s_lease(self) -> None:
        q = "k9"
        ids = self.enqueue(q, "stuck", 30, 3)
        p = self.worker(q, 3, 25, 2)
        p.wait_lines("started", 3, 10)
        p.proc.kill()
        p.proc.wait()
        t0 = time.monotonic()
        c = self.client
        self.assertEqual(c.stats(q)["processing"], 3)  # until the lease runs out
        support.wait_for(lambda: c.stats(q)["ready"] == 3, 5, "the leases to expire")
        back = time.monotonic() - t0
        self.assertLess(back, 4.5)
        w = support.worker(q, c, concurrency=3, wait_seconds=1)
        w.default_handler(lambda job: None)
        running = support.RunningWorker(w)
        support.wait_for(lambda: c.stats(q)["succeeded"] == 3, 5, "the second worker")
        running.stop()
        for m in ids:
            self.assertEqual(support.outcomes(c, q, m), ["lease_expired", "succeeded"])

    def test_the_example_once(self) -> None:
        q = "ex_" + uuid.uuid4().hex[:8]
        c = self.client
        sent = [c.enqueue(q, {"to": to, "subject": "hi"}, job_type="send_email")["id"]
                for to in ("alice@example.com", "bob@example.com")]
        no_to = c.enqueue(q, {"subject": "to nobody"}, job_type="send_email")["id"]
        p = Process([EXAMPLE], env={"DLQ_URL": self.dlqd.url, "DLQ_QUEUE": q})
        self.addCleanup(p.kill)
        support.wait_for(lambda: c.stats(q)["succeeded"] == 2 and c.stats(q)["dead"] == 1, 10,
                         "the example's three jobs", every=0.1)
        p.proc.send_signal(signal.SIGTERM)
        err = p.finish().decode()
        self.assertEqual(p.proc.returncode, 0, err)
        self.assertIn("sent to alice@example.com", err)
        self.assertIn("sent to bob@example.com", err)
        for m in sent:
            self.assertEqual(c.get(q, m)["status"], "succeeded")
        dead = c.get(q, no_to)
        self.assertEqual((dead["status"], dead["error_class"], dead["dead_reason"], dead["last_error"]),
                         ("dead", "invalid_input", "non_retryable", "InvalidInput: no to"))


if __name__ == "__main__":
    unittest.main()

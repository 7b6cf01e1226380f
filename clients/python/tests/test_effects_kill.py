"""job.effect across a kill -9 (issue 36), against a real dlqd on SQLite: a worker process killed
between an effect's `started` and `done` leaves the key uncertain; the next attempt (a fresh
worker process) fails the job `uncertain_effect` without calling fn again; the batch replay
preview lists the message; a single replay resolving the key `done` skips fn, `forget` runs it
again."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from typing import Any

import support
from support import dlq

# A failed attempt (the lease expiry included) comes back after 0.1 s instead of 2 s.
CONFIG = {"defaults": {"backoff": {"initial_seconds": 0.1, "max_seconds": 0.2}}}
LEASE = 2  # the workers' visibility_timeout, seconds

# The worker process: python3 charge_worker.py URL QUEUE COUNTER MODE. The `charge` handler's
# effect appends the job's id to COUNTER, then (MODE "slow") sleeps 30 s: long enough to be
# killed in the middle. Prints "attempt ID N" when a handler starts and "value ID JSON" after
# the effect returned.
WORKER = r'''
import json
import logging
import os
import sys
import time

import dlq

logging.basicConfig(level=logging.INFO, format="%(relativeCreated)d %(threadName)s %(message)s")
logging.getLogger("dlq").setLevel(logging.INFO)
url, queue, counter, mode = sys.argv[1:5]
worker = dlq.Worker(queue, 1, url=url, visibility_timeout=int(sys.argv[5]), wait_seconds=1,
                    startup_delay=0, shutdown_timeout=2)


@worker.handler("charge")
def charge(job):
    os.write(1, f"attempt {job.id} {job.attempt}\n".encode())

    def fn():
        with open(counter, "a", encoding="utf-8") as f:
            f.write(f"{job.id}\n")
        if mode == "slow":
            time.sleep(30)
        return {"charged": job.id, "eur": 10}

    value = job.effect(f"charge:{job.id}", fn, "charge 10 EUR")
    os.write(1, f"value {job.id} {json.dumps(value)}\n".encode())


worker.run()
print("run returned", flush=True)
'''


class KillMidEffectTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.dlqd = support.Dlqd(CONFIG).start()
        cls.client = dlq.Client(cls.dlqd.url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.dlqd.cleanup()

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="dlq-py-k9fx-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.script = os.path.join(self.dir, "charge_worker.py")
        with open(self.script, "w", encoding="utf-8") as f:
            f.write(WORKER)
        self.counter = os.path.join(self.dir, "counter")
        open(self.counter, "w").close()
        self.queue = "k9fx_" + uuid.uuid4().hex[:8]
        self.procs = 0

    # -- worker processes ----------------------------------------------------------------

    def start_worker(self, mode: str) -> subprocess.Popen[bytes]:
        """A worker process; its stdout and stderr go to files (read by out() and err())."""
        self.procs += 1
        base = os.path.join(self.dir, f"worker{self.procs}")
        out, err = open(base + ".out", "wb"), open(base + ".err", "wb")
        env = dict(os.environ, PYTHONPATH=support.SRC, PYTHONUNBUFFERED="1",
                   PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.Popen([sys.executable, self.script, self.dlqd.url, self.queue,
                              self.counter, mode, str(LEASE)],
                             stdout=out, stderr=err, env=env, cwd=self.dir)
        out.close()
        err.close()
        p.base = base  # type: ignore[attr-defined]

        def kill() -> None:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.addCleanup(kill)
        return p

    @staticmethod
    def out(p: subprocess.Popen[bytes]) -> list[str]:
        with open(p.base + ".out", encoding="utf-8") as f:  # type: ignore[attr-defined]
            return f.read().splitlines()

    @staticmethod
    def err(p: subprocess.Popen[bytes]) -> str:
        with open(p.base + ".err", encoding="utf-8", errors="replace") as f:  # type: ignore[attr-defined]
            return f.read()[-3000:]

    def wait(self, p: subprocess.Popen[bytes], check: Any, timeout: float, what: str) -> Any:
        """support.wait_for, with the worker's output in the message when it times out."""
        try:
            return support.wait_for(check, timeout, what, every=0.05)
        except AssertionError as e:
            raise AssertionError(f"{e}\nstdout: {self.out(p)}\nstderr: {self.err(p)}") from None

    def terminate(self, p: subprocess.Popen[bytes]) -> None:
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the worker did not stop on SIGTERM: {self.err(p)}") from None
        self.assertEqual(p.returncode, 0, self.err(p))
        self.assertIn("run returned", self.out(p))
        self.assertLess(time.monotonic() - t0, 5)

    # -- the server's view ---------------------------------------------------------------

    def calls(self, message_id: int) -> int:
        """How many times fn began for the message (lines of the counter file)."""
        with open(self.counter, encoding="utf-8") as f:
            return f.read().splitlines().count(str(message_id))

    def effects(self, message_id: int) -> list[dict[str, Any]]:
        return self.client.request(
            "GET", f"/queues/{self.queue}/messages/{message_id}/attempts", safe=True)["effects"]

    def effect_states(self, message_id: int) -> list[tuple[str, str]]:
        return [(e["key"], e["state"]) for e in self.effects(message_id)]

    def status(self, message_id: int) -> str:
        return self.client.get(self.queue, message_id)["status"]

    def preview(self) -> dict[str, Any]:
        return self.client.request("POST", "/dlq/replay",
                                   {"filter": {"queue": self.queue}, "dry_run": True}, safe=True)

    # -- the scenario ----------------------------------------------------------------------

    def killed_then_uncertain(self) -> int:
        """Steps 1-4: enqueue; a worker killed -9 while fn is in flight; a fresh worker fails the
        job uncertain_effect without calling fn; the batch preview lists it. Returns the id."""
        c, q = self.client, self.queue
        message_id = c.enqueue(q, {"order": 42, "eur": 10}, job_type="charge", max_retries=3)["id"]
        key = f"charge:{message_id}"

        # 2. The key is recorded `started` and fn is in flight: kill -9.
        slow = self.start_worker("slow")
        self.wait(slow, lambda: self.calls(message_id) == 1, 10, "fn to begin")
        self.wait(slow, lambda: self.effect_states(message_id) == [(key, "started")], 5,
                  "the effect recorded started")
        self.assertEqual(self.status(message_id), "processing")
        slow.kill()
        slow.wait()
        killed_at = time.monotonic()

        # 3. Once the lease runs out, a fresh worker finds the key started: uncertain, no check.
        fast = self.start_worker("fast")
        self.wait(fast, lambda: self.status(message_id) == "dead", LEASE + 8, "the job dead")
        self.assertGreaterEqual(time.monotonic() - killed_at, LEASE - 0.5)
        self.terminate(fast)
        self.assertEqual(self.calls(message_id), 1)  # fn not called again
        self.assertEqual(self.out(fast), [f"attempt {message_id} 2", "run returned"])
        message = c.get(q, message_id)
        self.assertEqual((message["status"], message["dead_reason"], message["error_class"]),
                         ("dead", "non_retryable", "uncertain_effect"))
        entries = c.attempts(q, message_id)
        self.assertEqual([e["outcome"] for e in entries], ["lease_expired", "failed"])
        self.assertEqual(entries[1]["error_class"], "uncertain_effect")
        self.assertEqual(entries[1]["error"],
                         f'UncertainEffect: uncertain effect "{key}": it was started by an '
                         'earlier attempt (1) and may have happened; check the side effect, then '
                         'replay with resolve_effects')
        (effect,) = self.effects(message_id)
        self.assertEqual({k: effect[k] for k in ("key", "state", "description", "result",
                                                  "attempt", "resolved_by")},
                         {"key": key, "state": "started", "description": "charge 10 EUR",
                          "result": None, "attempt": 1, "resolved_by": None})

        # 4. The batch replay preview lists it among the uncertain.
        preview = self.preview()
        self.assertEqual(preview["matched"], 1)
        self.assertEqual(preview["uncertain_effects"], {"count": 1, "ids": [message_id]})
        return message_id

    def test_kill_9_mid_effect_then_replay_resolving_done_skips_fn(self) -> None:
        c, q = self.client, self.queue
        message_id = self.killed_then_uncertain()
        key = f"charge:{message_id}"

        # 5. The operator found the charge: replay with the key done.
        c.replay(q, message_id, reason="the charge is in the provider's dashboard",
                 resolve_effects={key: "done"})
        (effect,) = self.effects(message_id)
        self.assertEqual((effect["state"], effect["result"], effect["attempt"],
                          effect["resolved_by"]), ("done", None, 1, "anonymous"))
        self.assertEqual(self.preview()["matched"], 0)
        w = self.start_worker("fast")
        self.wait(w, lambda: self.status(message_id) == "succeeded", 8, "the job succeeded")
        self.terminate(w)
        self.assertEqual(self.calls(message_id), 1)  # the effect returned without calling fn
        self.assertEqual(self.out(w), [f"attempt {message_id} 3", f"value {message_id} null",
                                       "run returned"])
        self.assertEqual(support.outcomes(c, q, message_id),
                         ["lease_expired", "failed", "replayed", "succeeded"])
        self.assertEqual(self.effect_states(message_id), [(key, "done")])

    def test_kill_9_mid_effect_then_replay_forgetting_runs_fn_again(self) -> None:
        c, q = self.client, self.queue
        message_id = self.killed_then_uncertain()
        key = f"charge:{message_id}"

        # 6. The operator found no charge: replay forgetting the key.
        c.replay(q, message_id, reason="no charge at the provider", resolve_effects={key: "forget"})
        self.assertEqual(self.effects(message_id), [])
        w = self.start_worker("fast")
        self.wait(w, lambda: self.status(message_id) == "succeeded", 8, "the job succeeded")
        self.terminate(w)
        self.assertEqual(self.calls(message_id), 2)  # fn ran again
        self.assertEqual(self.out(w), [f"attempt {message_id} 3",
                                       f'value {message_id} {{"charged": {message_id}, "eur": 10}}',
                                       "run returned"])
        self.assertEqual(support.outcomes(c, q, message_id),
                         ["lease_expired", "failed", "replayed", "succeeded"])
        (effect,) = self.effects(message_id)
        self.assertEqual((effect["key"], effect["state"], effect["result"], effect["attempt"],
                          effect["resolved_by"]),
                         (key, "done", f'{{"charged":{message_id},"eur":10}}', 3, None))


if __name__ == "__main__":
    unittest.main()

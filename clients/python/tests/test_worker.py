"""dlq.Worker in this process against a real dlqd: throughput with exactly-once success, the
long-poll wake-up, acks riding on claims or going at once, heartbeats, a lost lease, dlqd
restarted under a running job, the 422 fallback, size cuts, and the Job object."""

from __future__ import annotations

import collections
import threading
import time
import unittest

import support
from support import dlq

QUEUES = {
    "beats": {"visibility_timeout": 2},
    # A lease that expires comes back almost at once (the default waits 2 s after the expiry).
    "stuck": {"backoff": {"initial_seconds": 0.1}},
}


class Error(Exception):
    pass


class WorkerTests(support.DlqdTests):
    CONFIG = {"queues": QUEUES}

    def run_worker(self, w: dlq.Worker) -> support.RunningWorker:
        running = support.RunningWorker(w)
        self.addCleanup(lambda: running.thread.is_alive() and running.stop())
        return running

    def test_2000_jobs_at_concurrency_8_each_succeed_once(self) -> None:
        c = self.client()
        n = 2000
        ids = []
        for start in range(0, n, 100):
            ids += [m["id"] for m in c.enqueue_batch("many", [{"payload": {"n": i}, "job_type": "t"}
                                                              for i in range(start, start + 100)])]
        seen: collections.Counter[int] = collections.Counter()
        lock = threading.Lock()
        w = support.worker("many", c, concurrency=8)

        @w.handler("t")
        def handle(job: dlq.Job) -> None:
            with lock:
                seen[job.id] += 1

        running = self.run_worker(w)
        support.wait_for(lambda: c.stats("many")["succeeded"] == n, 30, "2,000 successes", every=0.1)
        running.stop()
        self.assertEqual(set(seen), set(ids))
        self.assertEqual(set(seen.values()), {1})
        claims = c.bodies("/claim")
        self.assertTrue(all(1 <= b["max"] <= 8 for _, b in claims))
        self.assertEqual(claims[0][1]["max"], 8)
        self.assertEqual(claims[0][1]["job_types"], ["t"])
        for message_id in ids:
            self.assertEqual(support.outcomes(c, "many", message_id), ["succeeded"], message_id)

    def test_a_job_enqueued_while_the_claim_is_parked_runs_at_once(self) -> None:
        c = self.client()
        done = threading.Event()
        w = support.worker("parked", c, concurrency=2, wait_seconds=30)
        w.default_handler(lambda job: done.set())
        running = self.run_worker(w)
        support.wait_for(lambda: c.bodies("/claim"), 5, "the first claim")
        time.sleep(0.3)  # parked now
        t0 = time.monotonic()
        message_id = c.enqueue("parked", "wake up", job_type="anything")["id"]
        self.assertTrue(done.wait(5))
        support.wait_for(lambda: c.get("parked", message_id)["status"] == "succeeded", 5, "success")
        self.assertLess(time.monotonic() - t0, 3)
        self.assertNotIn("job_types", c.bodies("/claim")[0][1])  # a default handler takes all
        # stop() ends the parked claim (its connection is closed) instead of waiting 30 s.
        self.assertLess(running.stop(), 2)

    def test_an_ack_goes_at_once_while_a_claim_is_parked_and_rides_when_one_is_due(self) -> None:
        c = self.client()
        w = support.worker("ride", c, concurrency=2, wait_seconds=30)
        w.default_handler(lambda job: time.sleep(0.3))
        running = self.run_worker(w)
        first = c.enqueue("ride", "a")["id"]
        # One slot busy, the other's claim parked: the ack cannot wait for it.
        support.wait_for(lambda: c.get("ride", first)["status"] == "succeeded", 3, "the first ack")
        (body, answer), = c.calls("/ack")
        self.assertEqual([i["id"] for i in body["items"]], [first])
        self.assertEqual(answer["results"][0]["status"], 200)
        running.stop()

        c = self.client()
        w = support.worker("ride", c, concurrency=1, wait_seconds=1)
        w.default_handler(lambda job: None)
        second = c.enqueue("ride", "b")["id"]
        running = self.run_worker(w)
        # The only slot freed with no claim out: the ack rides on the next one.
        def answered() -> list:
            return [(b, a) for b, a in c.calls("/claim") if b.get("ack") and isinstance(a, dict)]
        riding = support.wait_for(answered, 5, "the claim that carried the ack")
        self.assertEqual(c.bodies("/ack"), [])
        running.stop()
        self.assertEqual([i["id"] for i in riding[0][0]["ack"]], [second])
        self.assertEqual(riding[0][1]["acked"][0]["status"], 200)

    def test_a_claim_answer_without_acked_is_resent_by_ack(self) -> None:
        c = self.client()

        def older_server(answer: dict) -> dict:
            answer.pop("acked", None)  # a dlqd before claim-with-ack applied nothing
            return answer
        c.rewrites["/claim"] = older_server
        w = support.worker("older", c, concurrency=1, wait_seconds=1)
        w.default_handler(lambda job: None)
        message_id = c.enqueue("older", "x")["id"]
        running = self.run_worker(w)
        support.wait_for(lambda: c.bodies("/ack"), 5, "the resend by /ack")
        second = c.enqueue("older", "y")["id"]
        support.wait_for(lambda: c.get("older", second)["status"] == "succeeded", 5, "the second")
        running.stop()
        # Once a claim answer lacked "acked", acks no longer ride on claims.
        riding = [b for _, b in c.bodies("/claim") if b.get("ack")]
        self.assertEqual([[i["id"] for i in b["ack"]] for b in riding], [[message_id]])
        self.assertIn(second, [i["id"] for _, b in c.bodies("/ack") for i in b["items"]])
        self.assertEqual(c.get("older", message_id)["status"], "succeeded")
        self.assertEqual(support.outcomes(c, "older", message_id), ["succeeded"])

    def test_heartbeats_hold_a_job_for_three_leases(self) -> None:
        c = self.client()
        w = support.worker("beats", c, concurrency=1, visibility_timeout=2)
        cancelled = []

        @w.handler("long")
        def long(job: dlq.Job) -> None:
            cancelled.append(job.cancelled.wait(6.5))

        message_id = c.enqueue("beats", "x", job_type="long")["id"]
        running = self.run_worker(w)
        support.wait_for(lambda: c.get("beats", message_id)["status"] == "succeeded", 12, "success")
        running.stop()
        self.assertEqual(cancelled, [False])
        message = c.get("beats", message_id)
        self.assertEqual((message["lease_expiries"], message["attempts"]), (0, 1))
        self.assertEqual(support.outcomes(c, "beats", message_id), ["succeeded"])
        extends = c.calls(f"/messages/{message_id}/extend")
        self.assertGreaterEqual(len(extends), 6)  # every third of 2 s, for 6.5 s
        self.assertTrue(all(b["seconds"] == 2 for b, _ in extends))

    def test_a_handler_stuck_past_its_lease_is_refused_and_told(self) -> None:
        a_client = self.client()
        b_client = self.client()
        heartbeats = threading.Event()  # A's heartbeats cannot get through until this is set

        def held(method: str, path: str, body: object) -> None:
            if not heartbeats.wait(20):
                raise AssertionError("heartbeats never let through")
        a_client.hooks["/extend"] = held
        started = {}
        finish_first = threading.Event()
        told = {}
        a = support.worker("stuck", a_client, concurrency=2, visibility_timeout=2, wait_seconds=1)

        @a.handler("slow")
        def stuck(job: dlq.Job) -> None:
            started[job.payload] = job
            if job.payload == "returns":
                finish_first.wait(20)  # returns after B succeeded: its ack must be refused
            else:
                told[job.id] = job.cancelled.wait(20)  # told by the refused heartbeat

        first = a_client.enqueue("stuck", "returns", job_type="slow")["id"]
        second = a_client.enqueue("stuck", "waits", job_type="slow")["id"]
        running_a = self.run_worker(a)
        support.wait_for(lambda: len(started) == 2, 5, "A's two jobs")
        b = support.worker("stuck", b_client, concurrency=2, wait_seconds=1)
        b.handler("slow")(lambda job: None)
        running_b = self.run_worker(b)
        support.wait_for(lambda: all(b_client.get("stuck", m)["status"] == "succeeded"
                                     for m in (first, second)), 10, "B's successes")
        finish_first.set()
        support.wait_for(lambda: started["returns"].cancelled.is_set(), 5, "the refused ack")
        heartbeats.set()
        support.wait_for(lambda: second in told, 5, "the refused heartbeat")
        running_a.stop()
        running_b.stop()
        self.assertTrue(told[second])
        # A's ack of the first went out and was refused: 409 lease-lost.
        refused = [r for b, a in a_client.calls("/claim") if b.get("ack")
                   for r in a.get("acked", [])] + \
                  [r for b, a in a_client.calls("/ack") for r in a["results"]]
        self.assertEqual([(r["id"], r["status"]) for r in refused], [(first, 409)])
        # The second was never acked or failed by A.
        self.assertFalse(a_client.bodies(f"/messages/{second}/fail"))
        for m in (first, second):
            self.assertEqual(support.outcomes(a_client, "stuck", m), ["lease_expired", "succeeded"])

    def test_dlqd_restarted_under_a_running_job(self) -> None:
        server = support.Dlqd().start()
        self.addCleanup(server.cleanup)
        c = support.RecordingClient(server.url)
        self.addCleanup(c.close)
        release = threading.Event()
        w = support.worker("restart", c, concurrency=2, wait_seconds=2)

        @w.default_handler
        def handle(job: dlq.Job) -> None:
            if job.payload == "during":
                release.wait(20)

        during = c.enqueue("restart", "during")["id"]
        running = self.run_worker(w)
        support.wait_for(lambda: c.get("restart", during)["status"] == "processing", 5, "the claim")
        server.stop()
        release.set()  # finishes while dlqd is down: its ack is kept, not lost
        time.sleep(1.0)
        claims_while_down = len(c.bodies("/claim"))
        server.start()  # same port, same database
        after = c.enqueue("restart", "after")["id"]
        support.wait_for(lambda: all(c.get("restart", m)["status"] == "succeeded"
                                     for m in (during, after)), 15, "both succeeded")
        running.stop()
        self.assertGreater(len(c.bodies("/claim")), claims_while_down)
        self.assertEqual(support.outcomes(c, "restart", during), ["succeeded"])
        self.assertEqual(support.outcomes(c, "restart", after), ["succeeded"])

    def test_a_fail_refused_422_is_resent_with_error_and_class_only(self) -> None:
        c = self.client()
        refused = []

        def refuse_once(method: str, path: str, body: dict) -> None:
            if not refused:
                refused.append(body)
                raise dlq.ValidationError(422, "validation-failed", "stack is too long",
                                          {"errors": [{"field": "stack", "code": "too_long"}]})
        c.hooks["/fail"] = refuse_once
        w = support.worker("refused", c, concurrency=1, wait_seconds=1)

        @w.default_handler
        def handle(job: dlq.Job) -> None:
            raise dlq.Fail("nope", "transient", fingerprint="f.1") from Error("root")

        message_id = c.enqueue("refused", "x")["id"]
        running = self.run_worker(w)
        support.wait_for(lambda: len(c.bodies("/fail")) == 2, 5, "the resend")
        running.stop()
        (_, full), (_, minimal) = c.bodies("/fail")
        self.assertTrue({"stack", "cause", "fingerprint"} <= set(full))
        self.assertEqual(minimal, {"lease_id": full["lease_id"], "error": "Fail: nope",
                                   "error_class": "transient"})
        message = c.get("refused", message_id)
        self.assertEqual((message["status"], message["error_class"]), ("pending", "transient"))

    def test_stack_and_cause_are_cut_on_utf8_boundaries(self) -> None:
        c = self.client()
        w = support.worker("cuts", c, concurrency=1, wait_seconds=1)

        @w.default_handler
        def handle(job: dlq.Job) -> None:
            raise Error("é" * 10000) from Error("€" * 3000)

        message_id = c.enqueue("cuts", "x")["id"]
        running = self.run_worker(w)
        support.wait_for(lambda: c.get("cuts", message_id)["status"] == "pending"
                         and c.get("cuts", message_id)["retry_count"] == 1, 5, "the failure")
        running.stop()
        (_, body), = c.bodies("/fail")
        stack, cause = body["stack"].encode(), body["cause"].encode()
        self.assertTrue(16384 - 4 < len(stack) <= 16384, len(stack))
        self.assertTrue(4096 - 4 < len(cause) <= 4096, len(cause))
        self.assertTrue(body["cause"].startswith("Error: €"))
        self.assertLessEqual(len(body["error"].encode()), 1000)
        entry = c.attempts("cuts", message_id)[-1]
        self.assertEqual((entry["stack"], entry["cause"]), (body["stack"], body["cause"]))

    def test_the_job_object_checkpoints_and_extend(self) -> None:
        c = self.client()
        seen = {}
        w = support.worker("jobs", c, concurrency=1, wait_seconds=1)

        @w.handler("inspect")
        def inspect(job: dlq.Job) -> None:
            seen[job.raw_payload] = dict(id=job.id, queue=job.queue, job_type=job.job_type,
                                         payload=job.payload, attempt=job.attempt,
                                         key=job.idempotency_key, checkpoint=job.checkpoint,
                                         cancelled=job.cancelled.is_set())
            with self.assertRaises(ValueError):
                job.save_checkpoint("é" * 2049)  # 4,098 bytes: refused before sending
            job.save_checkpoint("step 1")
            job.extend(45)

        json_id = c.enqueue("jobs", {"to": "a@example.com"}, job_type="inspect",
                            idempotency_key="j-1")["id"]
        text_id = c.enqueue("jobs", "not json {", job_type="inspect")["id"]
        running = self.run_worker(w)
        support.wait_for(lambda: len(seen) == 2 and c.stats("jobs")["succeeded"] == 2, 5, "both")
        running.stop()
        self.assertEqual(seen['{"to":"a@example.com"}'],
                         dict(id=json_id, queue="jobs", job_type="inspect",
                              payload={"to": "a@example.com"}, attempt=1, key="j-1",
                              checkpoint=None, cancelled=False))
        self.assertEqual(seen["not json {"]["payload"], "not json {")
        self.assertEqual(c.get("jobs", text_id)["checkpoint"], "step 1")
        extends = [b for _, b in c.bodies(f"/messages/{json_id}/extend")]
        self.assertEqual([b.get("checkpoint") for b in extends], ["step 1", None])
        self.assertEqual(extends[1]["seconds"], 45)

    def test_worker_version_goes_with_each_claim_into_the_history(self) -> None:
        c = self.client()
        message_id = c.enqueue("versions", {"n": 1}, job_type="t")["id"]
        w = support.worker("versions", c, worker_version="2.4.1")

        @w.handler("t")
        def handle(job: dlq.Job) -> None:
            pass

        running = self.run_worker(w)
        support.wait_for(lambda: c.stats("versions")["succeeded"] == 1, 10, "the success")
        running.stop()
        self.assertTrue(all(b["worker_version"] == "2.4.1" for _, b in c.bodies("/claim")))
        [entry] = c.attempts("versions", message_id)
        self.assertEqual(entry["worker_version"], "2.4.1")
        with self.assertRaises(ValueError):
            support.worker("versions", c, worker_version="v" * 65)

    def test_checks_before_sending(self) -> None:
        for bad in ("has space", "", "x" * 129, "é"):
            with self.assertRaises(ValueError):
                dlq.Fail("x", fingerprint=bad)
        self.assertEqual(dlq.Fail("x", fingerprint="A-z_0.9:" + "x" * 120).fingerprint[:8], "A-z_0.9:")
        with self.assertRaises(ValueError):
            dlq.Fail("x", error_class="flaky")
        with self.assertRaises(ValueError):
            dlq.Snooze(-1)
        self.assertEqual(dlq.Throttled(12).retry_in, 12)
        self.assertEqual(dlq.Snooze(1.2).seconds, 2)

    def test_no_dlqd_means_back_off_not_a_crash(self) -> None:
        server = support.Dlqd().start()
        url = server.url
        server.cleanup()  # nothing listens there now
        c = support.RecordingClient(url)
        self.addCleanup(c.close)
        w = support.worker("down", c, concurrency=1, wait_seconds=1)
        w.default_handler(lambda job: None)
        running = self.run_worker(w)
        time.sleep(1.5)
        self.assertTrue(running.thread.is_alive())
        tries = len(c.bodies("/claim"))
        self.assertTrue(2 <= tries < 20, tries)  # backing off, not spinning
        self.assertLess(running.stop(), 2)


if __name__ == "__main__":
    unittest.main()

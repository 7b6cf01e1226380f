"""Trial runs against a real dlqd (issue 36): only a handler that opted in (trials=True) gets
them, from a second claim loop; job.effect causes nothing and reports would-effects; the answer
goes to the trial's routes only (never an ack, never the message's routes); a raise or a Snooze
fails the trial; heartbeats extend the trial's lease; shutdown gives nothing back; ordinary jobs
keep flowing and the two loops together respect `concurrency`."""

from __future__ import annotations

import threading
import time
import unittest
from typing import Any, Callable

import support
from support import dlq


class Declined(Exception):
    pass


class TrialTests(support.DlqdTests):
    def dead(self, c: dlq.Client, queue: str, job_type: str = "charge", payload: Any = None,
             effects: dict[str, str] | None = None) -> dict[str, Any]:
        """A dead message of `job_type` (its one attempt failed), its `effects` ({key: result
        JSON}) recorded done by that attempt."""
        m = c.enqueue(queue, payload if payload is not None else {"order": 42},
                      job_type=job_type, max_retries=1)
        claimed = c.claim(queue, max=1, job_types=[job_type])["messages"][0]
        self.assertEqual(claimed["id"], m["id"])
        for key, result in (effects or {}).items():
            c.record_effect(queue, m["id"], claimed["lease_id"], key, "done", f"did {key}", result)
        c.fail(queue, m["id"], lease_id=claimed["lease_id"], error="boom", retryable=True)
        dead = c.get(queue, m["id"])
        self.assertEqual(dead["status"], "dead")
        return dead

    def start(self, w: dlq.Worker) -> support.RunningWorker:
        running = support.RunningWorker(w)
        self.addCleanup(lambda: running.thread.is_alive() and running.stop())
        return running

    def ended(self, c: dlq.Client, queue: str, message_id: int, trial_id: int,
              timeout: float = 5) -> dict[str, Any]:
        return support.wait_for(
            lambda: (t := c.trial(queue, message_id, trial_id))["status"] not in
            ("pending", "running") and t, timeout, f"trial {trial_id} to end")

    def assert_trial_leases_stay_on_trial_routes(self, c: support.RecordingClient) -> None:
        """A trial's lease (…-t<id>) is never sent to a message route, /effects, /ack or a
        claim's ack."""
        with c._record_lock:
            sent = list(c.sent)
        for method, path, body, _ in sent:
            if not isinstance(body, dict):
                continue
            leases = [body.get("lease_id")] + [i.get("lease_id") for i in
                                               body.get("items") or body.get("ack") or []]
            if any(isinstance(x, str) and "-t" in x for x in leases):
                self.assertIn("/trials/", path, f"a trial's lease sent to {method} {path}")

    def test_a_trial_never_reaches_a_handler_that_did_not_opt_in(self) -> None:
        c = self.client()
        m = self.dead(c, "plain")
        trial = c.start_trial("plain", m["id"], reason="would it work now?")
        self.assertEqual(trial["status"], "pending")
        calls: list[dlq.Job] = []
        w = support.worker("plain", c, concurrency=2, wait_seconds=1)
        w.handler("charge")(calls.append)  # no trials=True
        running = self.start(w)
        time.sleep(1.5)
        running.stop()
        self.assertEqual(calls, [])
        self.assertEqual(c.trial("plain", m["id"], trial["trial_id"])["status"], "pending")
        claims = [b for b, _ in c.calls("/claim")]
        self.assertTrue(claims)
        self.assertFalse([b for b in claims if "trials" in b])

    def test_an_opted_in_handler_runs_the_trial_and_reports_would_effects(self) -> None:
        c = self.client()
        m = self.dead(c, "tried", effects={"receipt:42": '{"receipt":"r_1"}'})
        other = c.enqueue("tried", "pending meanwhile", job_type="mail")  # not a trial type
        trial = c.start_trial("tried", m["id"], payload={"order": 42, "cents": 100})
        self.assertTrue(trial["payload_edited"])
        calls: list[str] = []
        seen: list[Any] = []
        gate = threading.Event()

        def charge(job: dlq.Job) -> None:
            seen.append((job.trial, job.payload, job.attempt, job.message["status"]))
            seen.append(job.effect("receipt:42", lambda: calls.append("receipt")))  # done
            seen.append(job.effect("charge:42", lambda: calls.append("charge"), "charge 1.00",
                                   check=lambda: calls.append("check")))
            seen.append(job.effect("charge:42", lambda: calls.append("charge")))  # once
            seen.append(job.effect("mail:42", lambda: calls.append("mail")))
            job.save_checkpoint("charged")  # in memory only
            seen.append(job.checkpoint)
            gate.wait(1.2)  # past a 1 s lease: heartbeats must renew the trial's

        w = support.worker("tried", c, concurrency=2, wait_seconds=1, visibility_timeout=1)
        w.handler("charge", trials=True)(charge)
        w.handler("mail")(lambda job: calls.append(f"mail job {job.id}"))
        running = self.start(w)
        done = self.ended(c, "tried", m["id"], trial["trial_id"])
        support.wait_for(lambda: c.get("tried", other["id"])["status"] == "succeeded", 5, "mail")
        running.stop()
        self.assertEqual(done["status"], "succeeded", done)
        self.assertEqual(done["would_effects"], [{"key": "charge:42", "description": "charge 1.00"},
                                                 {"key": "mail:42", "description": None}])
        self.assertIsNone(done["error"])
        self.assertEqual(seen, [(trial["trial_id"], {"order": 42, "cents": 100}, 1, "dead"),
                                {"receipt": "r_1"}, None, None, None, "charged"])
        self.assertEqual(calls, [f"mail job {other['id']}"])
        # The message is as it was; its history gained one `trial` entry.
        after = c.get("tried", m["id"])
        for key in ("status", "attempts", "retry_count", "checkpoint", "last_error",
                    "updated_at", "payload"):
            self.assertEqual(after[key], m[key], key)
        last = c.attempts("tried", m["id"])[-1]
        self.assertEqual((last["outcome"], last["attempt"], last["trial"]["trial_id"],
                          last["trial"]["status"]), ("trial", 1, trial["trial_id"], "succeeded"))
        # What went where: a trials claim for the opted-in type only; heartbeats on the trial's
        # extend; no effects, checkpoint, ack or message route under the trial's lease.
        trial_claims = [b for b, _ in c.calls("/claim") if b.get("trials")]
        self.assertTrue(trial_claims)
        self.assertTrue(all(b["job_types"] == ["charge"] and "ack" not in b
                            for b in trial_claims))
        base = f"/messages/{m['id']}"
        self.assertEqual(c.bodies(f"{base}/effects")[1:], [])  # the one from dead()
        self.assertEqual(c.bodies(f"{base}/extend"), [])
        beats = c.bodies(f"{base}/trials/{trial['trial_id']}/extend")
        self.assertTrue(beats)
        self.assertTrue(all("checkpoint" not in b for _, b in beats))
        self.assertEqual(len(c.bodies(f"{base}/trials/{trial['trial_id']}/succeed")), 1)
        self.assert_trial_leases_stay_on_trial_routes(c)

    def test_a_raising_handler_fails_the_trial_with_its_error_and_class(self) -> None:
        c = self.client()
        m = self.dead(c, "raising")
        trial = c.start_trial("raising", m["id"])

        def charge(job: dlq.Job) -> None:
            job.effect("charge:7", lambda: None, "charge 7.00")
            try:
                raise Declined("card expired")
            except Declined as e:
                raise dlq.InvalidInput("the card cannot be charged") from e

        w = support.worker("raising", c, concurrency=2, wait_seconds=1)
        w.handler("charge", trials=True)(charge)
        running = self.start(w)
        done = self.ended(c, "raising", m["id"], trial["trial_id"])
        running.stop()
        self.assertEqual((done["status"], done["error"], done["error_class"]),
                         ("failed", "InvalidInput: the card cannot be charged", "invalid_input"))
        self.assertEqual(done["cause"], "Declined: card expired")
        self.assertIn("raise dlq.InvalidInput", done["stack"])
        self.assertEqual(done["would_effects"], [{"key": "charge:7", "description": "charge 7.00"}])
        self.assertEqual(c.get("raising", m["id"])["status"], "dead")
        self.assertEqual(support.outcomes(c, "raising", m["id"]), ["failed", "trial"])
        self.assertEqual(c.bodies(f"/messages/{m['id']}/fail")[1:], [])  # only dead()'s
        self.assert_trial_leases_stay_on_trial_routes(c)

    def test_snooze_fails_the_trial(self) -> None:
        c = self.client()
        m = self.dead(c, "snoozing")
        trial = c.start_trial("snoozing", m["id"])

        def charge(job: dlq.Job) -> None:
            raise dlq.Snooze(30)

        w = support.worker("snoozing", c, concurrency=2, wait_seconds=1)
        w.handler("charge", trials=True)(charge)
        running = self.start(w)
        done = self.ended(c, "snoozing", m["id"], trial["trial_id"])
        running.stop()
        self.assertEqual(done["status"], "failed")
        self.assertIn("snoozed during a trial", done["error"])
        self.assertEqual(c.bodies("/release"), [])
        self.assertEqual(c.get("snoozing", m["id"])["status"], "dead")

    def test_shutdown_gives_a_running_trial_nothing_back(self) -> None:
        c = self.client()
        m = self.dead(c, "shutdown")
        trial = c.start_trial("shutdown", m["id"])
        started = threading.Event()
        cancelled: list[bool] = []

        def charge(job: dlq.Job) -> None:
            started.set()
            cancelled.append(job.cancelled.wait(5))

        w = support.worker("shutdown", c, concurrency=2, wait_seconds=1, shutdown_timeout=0.3)
        w.handler("charge", trials=True)(charge)
        running = self.start(w)
        self.assertTrue(started.wait(5))
        running.stop()
        support.wait_for(lambda: cancelled, 5, "the handler to see cancelled")
        time.sleep(0.1)
        self.assertEqual(cancelled, [True])
        self.assertEqual(c.trial("shutdown", m["id"], trial["trial_id"])["status"], "running")
        self.assertEqual([p for p, _ in c.bodies("/succeed") + c.bodies("/fail")
                          + c.bodies("/release") if "/trials/" in p], [])
        self.assert_trial_leases_stay_on_trial_routes(c)

    def test_a_batch_of_trials_runs_side_by_side_and_an_idle_trials_claim_holds_one_slot(
            self) -> None:
        c = self.client()
        ids = [self.dead(c, "batch")["id"] for _ in range(3)]
        lock = threading.Lock()
        now, most = [0], [0]

        def charge(job: dlq.Job) -> None:
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            time.sleep(0.3)
            with lock:
                now[0] -= 1

        w = support.worker("batch", c, concurrency=4, wait_seconds=1)
        w.handler("charge", trials=True)(charge)
        running = self.start(w)
        time.sleep(0.2)  # both loops parked
        trials = c.start_trials(ids, reason="try the sample")
        self.assertEqual([t["message_id"] for t in trials], ids)
        done = [self.ended(c, "batch", i, t["trial_id"]) for i, t in zip(ids, trials)]
        running.stop()
        self.assertEqual([t["status"] for t in done], ["succeeded"] * 3)
        self.assertGreaterEqual(most[0], 2)  # not one after the other
        trial_claims = [b for b, _ in c.calls("/claim") if b.get("trials")]
        self.assertTrue(all(b["max"] == 1 for b in trial_claims if b["wait_seconds"] > 0))
        self.assertTrue([b for b in trial_claims if b["wait_seconds"] == 0 and b["max"] > 1])

    def run_mixed(self, queue: str, concurrency: int, mails: int, charges: int) -> None:
        """Ordinary jobs of both types and a trial through one worker: everything ends, and no
        more than `concurrency` handlers ever run at once."""
        lock = threading.Lock()
        now, most, ran = [0], [0], []
        held = [0, 0]  # slots asked for by claims in flight; the most ever held with handlers

        class Counting(support.RecordingClient):
            def claim(self, queue: str, **kw: Any) -> dict[str, Any]:
                with lock:
                    held[0] += kw.get("max") or 1
                    held[1] = max(held[1], held[0] + now[0])
                try:
                    return super().claim(queue, **kw)
                finally:
                    with lock:
                        held[0] -= kw.get("max") or 1

        c = Counting(self.dlqd.url)
        self.addCleanup(c.close)
        m = self.dead(c, queue)
        held[1] = 0
        ids = [x["id"] for x in c.enqueue_batch(
            queue, [{"payload": str(i), "job_type": "mail"} for i in range(mails)]
            + [{"payload": str(i), "job_type": "charge"} for i in range(charges)])]
        trial = c.start_trial(queue, m["id"])

        def busy(job: dlq.Job) -> None:
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
                ran.append((job.job_type, job.trial))
            time.sleep(0.05)
            with lock:
                now[0] -= 1

        w = support.worker(queue, c, concurrency=concurrency, wait_seconds=1)
        w.handler("charge", trials=True)(busy)
        w.handler("mail")(busy)
        running = self.start(w)
        support.wait_for(lambda: c.stats(queue)["succeeded"] == len(ids), 8, "every job")
        done = self.ended(c, queue, m["id"], trial["trial_id"])
        running.stop()
        self.assertEqual(done["status"], "succeeded")
        self.assertLessEqual(most[0], concurrency)
        self.assertEqual(sorted(ran, key=str), sorted(
            [("mail", None)] * mails + [("charge", None)] * charges
            + [("charge", trial["trial_id"])], key=str))
        # Claims in flight and running handlers never held more than `concurrency` slots.
        self.assertLessEqual(held[1], concurrency)
        self.assertTrue([b for b, _ in c.calls("/claim") if b.get("trials")])
        self.assert_trial_leases_stay_on_trial_routes(c)

    def test_ordinary_jobs_still_run_beside_trials_within_concurrency(self) -> None:
        self.run_mixed("mixed", concurrency=3, mails=12, charges=8)

    def test_with_concurrency_1_the_two_loops_take_turns(self) -> None:
        self.run_mixed("single", concurrency=1, mails=3, charges=2)


if __name__ == "__main__":
    unittest.main()

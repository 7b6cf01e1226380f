"""job.effect against a real dlqd (issue 36): a side effect runs once across a failure after it,
EffectNotDone clears its key, a key left `started` is uncertain (check decides, or the job dies
`uncertain_effect`), limits are checked before sending, a lost lease while recording, and
Client.record_effect's answers."""

from __future__ import annotations

import json
import threading
import time
import unittest
from typing import Any, Callable

import support
from support import dlq

# A failed attempt comes back after 0.1 s instead of 2 s.
CONFIG = {"defaults": {"backoff": {"initial_seconds": 0.1, "max_seconds": 0.2}}}
CHARGE = {"charge": "ch_1", "cents": 4200}


class Error(Exception):
    pass


class EffectTests(support.DlqdTests):
    CONFIG = CONFIG

    def work(self, c: dlq.Client, queue: str, handle: Callable[[dlq.Job], Any], message_id: int,
             status: str) -> dict[str, Any]:
        """Runs a worker with `handle` until the message reaches `status`; returns it."""
        w = support.worker(queue, c, concurrency=1, wait_seconds=1)
        w.default_handler(handle)
        running = support.RunningWorker(w)
        self.addCleanup(lambda: running.thread.is_alive() and running.stop())
        support.wait_for(lambda: c.get(queue, message_id)["status"] == status, 5, status)
        running.stop()
        return c.get(queue, message_id)

    def hand_job(self, c: dlq.Client, queue: str, payload: Any = "x",
                 lease: int = 30) -> dlq.Job:
        """A Job made from a claim of our own (no worker running), for effect() called directly."""
        c.enqueue(queue, payload)
        message = c.claim(queue, max=1, visibility_timeout=lease)["messages"][0]
        return dlq.Job(support.worker(queue, c), message, time.monotonic())

    def effect_bodies(self, c: support.RecordingClient, message_id: int) -> list[tuple[str, Any]]:
        return [(b["state"], b.get("result")) for _, b in c.bodies(f"/{message_id}/effects")]

    def test_a_side_effect_runs_once_across_a_failure_after_it(self) -> None:
        c = self.client()
        calls: list[Any] = []
        seen: list[tuple[int, Any, Any, list[dict[str, Any]]]] = []

        def charge() -> dict[str, Any]:
            calls.append("charge")
            return dict(CHARGE)

        def handle(job: dlq.Job) -> None:
            value = job.effect("charge:42", charge, "charge the card 42.00")
            again = job.effect("charge:42", lambda: calls.append("again"))  # same run: stored
            seen.append((job.attempt, value, again, job.effects))
            if job.attempt == 1:
                raise Error("the receipt e-mail failed after the charge")

        message_id = c.enqueue("once", "order 42")["id"]
        self.work(c, "once", handle, message_id, "succeeded")
        self.assertEqual(calls, ["charge"])
        self.assertEqual([(a, v, g) for a, v, g, _ in seen],
                         [(1, CHARGE, CHARGE), (2, CHARGE, CHARGE)])
        (effect,) = seen[1][3]
        self.assertEqual({k: effect[k] for k in ("key", "state", "description", "result",
                                                  "attempt", "resolved_by")},
                         {"key": "charge:42", "state": "done",
                          "description": "charge the card 42.00",
                          "result": json.dumps(CHARGE, separators=(",", ":")), "attempt": 1,
                          "resolved_by": None})
        self.assertIsInstance(effect["recorded_at"], str)
        # Two records in all, under the first attempt's lease; the second attempt sent none.
        self.assertEqual(self.effect_bodies(c, message_id),
                         [("started", None), ("done", '{"charge":"ch_1","cents":4200}')])
        self.assertEqual(support.outcomes(c, "once", message_id), ["failed", "succeeded"])

    def test_effect_not_done_clears_the_key_and_the_next_attempt_calls_fn_again(self) -> None:
        c = self.client()
        calls: list[int] = []

        def handle(job: dlq.Job) -> None:
            def send() -> str:
                calls.append(job.attempt)
                if job.attempt == 1:
                    raise dlq.EffectNotDone("the provider refused the request: nothing sent")
                return "sent"
            self.assertEqual(job.effect("mail:welcome", send), "sent")
            self.assertEqual([e["key"] for e in job.effects], ["mail:welcome"])

        message_id = c.enqueue("notdone", "x")["id"]
        self.work(c, "notdone", handle, message_id, "succeeded")
        self.assertEqual(calls, [1, 2])
        self.assertEqual(self.effect_bodies(c, message_id),
                         [("started", None), ("cleared", None), ("started", None),
                          ("done", '"sent"')])
        first = c.attempts("notdone", message_id)[0]
        self.assertEqual((first["outcome"], first["error_class"]), ("failed", "unknown"))
        self.assertTrue(first["error"].startswith("EffectNotDone: the provider refused"))

    def test_a_key_left_started_fails_uncertain_effect_without_check(self) -> None:
        c = self.client()
        calls: list[int] = []

        def handle(job: dlq.Job) -> None:
            def charge() -> None:
                calls.append(job.attempt)
                raise Error("the connection broke: charged or not, nobody knows")
            job.effect("charge:7", charge, "charge the card")

        message_id = c.enqueue("uncertain", "x")["id"]
        message = self.work(c, "uncertain", handle, message_id, "dead")
        self.assertEqual(calls, [1])
        self.assertEqual((message["error_class"], message["dead_reason"]),
                         ("uncertain_effect", "non_retryable"))
        entries = c.attempts("uncertain", message_id)
        self.assertEqual([e["outcome"] for e in entries], ["failed", "failed"])
        self.assertEqual(entries[0]["error_class"], "unknown")
        self.assertEqual(entries[1]["error"],
                         'UncertainEffect: uncertain effect "charge:7": it was started by an '
                         'earlier attempt (1) and may have happened; check the side effect, then '
                         'replay with resolve_effects')
        (_, fail_body), = c.bodies(f"/{message_id}/fail")[-1:]
        self.assertIs(fail_body["retryable"], False)
        self.assertEqual(self.effect_bodies(c, message_id), [("started", None)])

    def started_by_hand(self, c: dlq.Client, queue: str) -> int:
        """A message whose first attempt recorded `started` by raw calls, then failed."""
        message_id = c.enqueue(queue, "x")["id"]
        claimed = c.claim(queue, max=1)["messages"][0]
        self.assertEqual(claimed["effects"], [])
        answer = c.record_effect(queue, message_id, claimed["lease_id"], "charge:9", "started",
                                 "charge the card")
        self.assertEqual((answer["key"], answer["state"], answer["result"], answer["attempt"]),
                         ("charge:9", "started", None, 1))
        c.fail(queue, message_id, lease_id=claimed["lease_id"], error="worker crashed",
               retryable=True)
        return message_id

    def test_check_returning_a_value_records_done_and_fn_is_not_called(self) -> None:
        c = self.client()
        message_id = self.started_by_hand(c, "checked")
        calls: list[str] = []
        seen = []

        def handle(job: dlq.Job) -> None:
            self.assertEqual([e["state"] for e in job.effects], ["started"])
            seen.append(job.effect("charge:9", lambda: calls.append("fn"), "charge the card",
                                   check=lambda: calls.append("check") or {"charge": "ch_9"}))

        self.work(c, "checked", handle, message_id, "succeeded")
        self.assertEqual(calls, ["check"])
        self.assertEqual(seen, [{"charge": "ch_9"}])
        self.assertEqual(self.effect_bodies(c, message_id)[1:], [("done", '{"charge":"ch_9"}')])

    def test_check_returning_none_calls_fn(self) -> None:
        c = self.client()
        message_id = self.started_by_hand(c, "rechecked")
        calls: list[str] = []

        def handle(job: dlq.Job) -> None:
            def check() -> None:
                calls.append("check")
            self.assertEqual(job.effect("charge:9", lambda: calls.append("fn") or 9, check=check),
                             9)

        self.work(c, "rechecked", handle, message_id, "succeeded")
        self.assertEqual(calls, ["check", "fn"])
        self.assertEqual(self.effect_bodies(c, message_id)[1:],
                         [("started", None), ("done", "9")])

    def test_a_replay_resolves_started_keys_done_skips_fn_forget_runs_it(self) -> None:
        c = self.client()
        message_id = c.enqueue("resolve", "x")["id"]
        lease = c.claim("resolve", max=1)["messages"][0]["lease_id"]
        for key in ("charge", "mail"):
            c.record_effect("resolve", message_id, lease, key, "started")
        c.fail("resolve", message_id, lease_id=lease, error="crashed", error_class="uncertain_effect")
        self.assertEqual(c.get("resolve", message_id)["status"], "dead")
        c.replay("resolve", message_id, reason="charge found in the provider's dashboard",
                 resolve_effects={"charge": "done", "mail": "forget"})
        calls: list[str] = []
        seen = []

        def handle(job: dlq.Job) -> None:
            seen.append([(e["key"], e["state"], e["result"], e["resolved_by"] is not None)
                         for e in job.effects])
            seen.append(job.effect("charge", lambda: calls.append("charge")))
            seen.append(job.effect("mail", lambda: calls.append("mail") or "sent"))

        self.work(c, "resolve", handle, message_id, "succeeded")
        self.assertEqual(calls, ["mail"])
        self.assertEqual(seen, [[("charge", "done", None, True)], None, "sent"])

    def test_bad_keys_descriptions_and_values_are_refused_before_sending(self) -> None:
        c = self.client()
        job = self.hand_job(c, "limits")
        calls: list[str] = []
        for key in ("", "é" * 65, 42):  # 130 bytes
            with self.assertRaises(ValueError):
                job.effect(key, lambda: calls.append("fn"))  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            job.effect("k", lambda: calls.append("fn"), "d" * 513)
        with self.assertRaises(ValueError):
            c.record_effect("limits", job.id, job.lease_id, "k" * 129, "started")
        with self.assertRaises(ValueError):
            c.record_effect("limits", job.id, job.lease_id, "k", "finished")
        self.assertEqual(calls, [])
        self.assertEqual(c.bodies("/effects"), [])
        self.assertEqual(job.effect("é" * 64, lambda: "ok"), "ok")  # 128 bytes is fine
        # A value too big to record: fn ran, so the key stays started, uncertain from now on.
        with self.assertRaises(ValueError):
            job.effect("big", lambda: "x" * 4095)  # 4,097 bytes as JSON text
        with self.assertRaises(dlq.UncertainEffect) as raised:
            job.effect("big", lambda: calls.append("fn"))
        self.assertIn("earlier in this attempt", str(raised.exception))
        self.assertEqual(raised.exception.error_class, "uncertain_effect")
        self.assertEqual(calls, [])

    def test_record_effect_answers(self) -> None:
        c = self.client()
        job = self.hand_job(c, "answers")
        rec = lambda *a: c.record_effect("answers", job.id, job.lease_id, *a)  # noqa: E731
        self.assertEqual(rec("gone", "cleared")["state"], "cleared")  # absent: 200, nothing kept
        self.assertEqual(rec("k", "done", "d", '{"a":1}')["result"], '{"a":1}')
        self.assertEqual(rec("k", "done", "d", '{"a":1}')["state"], "done")  # a resend: 200
        with self.assertRaises(dlq.InvalidStateError):
            rec("k", "started")
        with self.assertRaises(dlq.InvalidStateError):
            rec("k", "cleared")
        with self.assertRaises(dlq.LeaseLostError):
            c.record_effect("answers", job.id, "0" * 32 + f"-{job.id}", "k2", "started")
        for n in range(99):  # 100 keys with "k"
            rec(f"key-{n}", "started")
        with self.assertRaises(dlq.ValidationError) as refused:
            rec("one-too-many", "started")
        self.assertEqual([(e["field"], e["code"]) for e in refused.exception.errors],
                         [("key", "limit")])

    def test_a_lost_lease_while_recording_raises_lease_lost_and_sets_cancelled(self) -> None:
        c = self.client()
        job = self.hand_job(c, "lost")
        c.release("lost", job.id, job.lease_id)
        calls: list[str] = []
        with self.assertRaises(dlq.LeaseLostError):
            job.effect("charge", lambda: calls.append("fn"))
        self.assertEqual(calls, [])
        self.assertTrue(job.cancelled.is_set())
        self.assertEqual(job.effects, [])

    def test_a_done_key_an_operator_resolved_returns_none_and_keys_run_one_at_a_time(self) -> None:
        c = self.client()
        job = self.hand_job(c, "resolved")
        job._effects["charge"] = {"key": "charge", "state": "done", "description": None,
                                  "result": None, "attempt": 1, "recorded_at": "x",
                                  "resolved_by": "alice"}
        self.assertIsNone(job.effect("charge", lambda: self.fail("fn called")))
        # Two threads of one handler with one key: the second waits and gets the first's value.
        gate = threading.Event()
        results: list[Any] = []
        calls: list[str] = []

        def slow() -> str:
            calls.append("fn")
            gate.wait(5)
            return "once"
        def call() -> None:
            try:
                results.append(job.effect("mail", slow))
            finally:
                c.close_thread_connection()
        threads = [threading.Thread(target=call) for _ in range(2)]
        for t in threads:
            t.start()
        support.wait_for(lambda: calls, 5, "the first fn")
        time.sleep(0.1)
        gate.set()
        for t in threads:
            t.join(5)
        self.assertEqual((calls, results), (["fn"], ["once", "once"]))


if __name__ == "__main__":
    unittest.main()

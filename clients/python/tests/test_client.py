"""dlq.Client against a real dlqd: every call with its options, every error kind the server can
be made to answer, DLQ_URL / DLQ_TOKEN; and the retry rule per call against a server that hangs
up without answering."""

from __future__ import annotations

import datetime
import hashlib
import os
import socket
import socketserver
import threading
import time
import unittest
from unittest import mock

import support
from support import dlq

TOKENS = {"producer": "p-secret", "reader": "r-secret", "all": "a-secret"}


class Calls(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.dlqd = support.Dlqd({"limits": {"idle_timeout_seconds": 1}}).start()
        cls.client = dlq.Client(cls.dlqd.url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.dlqd.cleanup()

    def test_enqueue_with_every_option(self) -> None:
        c = self.client
        run_at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        m = c.enqueue("opts", {"to": "a@example.com"}, job_type="send_email", priority=7,
                      max_retries=5, run_at=run_at, idempotency_key="k-1")
        self.assertEqual(m["payload"], '{"to":"a@example.com"}')  # not a str: its JSON text
        self.assertEqual((m["job_type"], m["priority"], m["max_retries"], m["idempotency_key"]),
                         ("send_email", 7, 5, "k-1"))
        self.assertEqual(m["retry_after"][:16], run_at.strftime("%Y-%m-%dT%H:%M"))
        again = c.enqueue("opts", "other", idempotency_key="k-1")
        self.assertEqual(again["id"], m["id"])  # the key holder comes back
        later = c.enqueue("opts", "text payload", delay_seconds=30)
        self.assertEqual(later["payload"], "text payload")
        self.assertIsNotNone(later["retry_after"])
        stats = c.stats("opts")
        self.assertEqual((stats["ready"], stats["scheduled"]), (0, 2))

    def test_batch_get_list_stats_queues(self) -> None:
        c = self.client
        made = c.enqueue_batch("batch", [{"payload": {"n": i}, "job_type": "t", "priority": i % 3}
                                         for i in range(5)])
        self.assertEqual([m["payload"] for m in made], [f'{{"n":{i}}}' for i in range(5)])
        self.assertEqual(c.get("batch", made[2]["id"])["payload"], '{"n":2}')
        page = c.list("batch", status="pending", limit=2)
        self.assertEqual(len(page), 2)
        self.assertEqual([m["id"] for m in c.list("batch", order="desc", limit=1)], [made[-1]["id"]])
        self.assertEqual(len(c.list("batch", job_type="t")), 5)
        self.assertEqual(c.stats("batch")["ready"], 5)
        names = [q["queue"] for q in c.queues()]
        self.assertIn("batch", names)
        with self.assertRaises(ValueError):
            c.enqueue_batch("batch", [{"payload": "x", "colour": "red"}])

    def test_worker_calls_attempts_dead_letters_and_replay(self) -> None:
        c = self.client
        q = "calls"
        a, b, d = (c.enqueue(q, p, job_type="t")["id"] for p in ("a", "b", "d"))
        answer = c.claim(q, max=3, wait_seconds=0, visibility_timeout=30, worker="test:1",
                         job_types=["t"])
        leases = {m["id"]: m["lease_id"] for m in answer["messages"]}
        self.assertEqual(set(leases), {a, b, d})
        extended = c.extend(q, a, leases[a], seconds=60, checkpoint="half way")
        self.assertEqual(extended["checkpoint"], "half way")
        c.release(q, b, leases[b], delay_seconds=0)
        self.assertEqual(c.get(q, b)["status"], "pending")
        results = c.ack(q, [(a, leases[a]), {"id": b, "lease_id": leases[b]}])
        self.assertEqual([r["status"] for r in results], [200, 409])
        c.fail(q, d, lease_id=leases[d], error="bad", error_class="invalid_input", stack="s",
               cause="why", fingerprint="bad.input")
        dead = c.get(q, d)
        self.assertEqual((dead["status"], dead["dead_reason"]), ("dead", "non_retryable"))
        history = c.attempts(q, d)
        self.assertEqual([(h["outcome"], h["worker"], h["cause"]) for h in history],
                         [("failed", "test:1", "why")])
        self.assertEqual(c.attempts(q, b)[-1]["outcome"], "released")
        page = c.dead_letters(queue=q, error_class="invalid_input")
        self.assertEqual([m["id"] for m in page["messages"]], [d])
        self.assertIn("next_after_id", page)
        preview = c.replay(q, d, dry_run=True, reason="check")
        self.assertTrue(preview["dry_run"])
        self.assertEqual(c.get(q, d)["status"], "dead")
        replayed = c.replay(q, d, reason="fixed", payload={"edited": True})
        self.assertEqual((replayed["status"], replayed["replay_count"]), ("pending", 1))
        self.assertEqual(replayed["payload"], '{"edited":true}')
        # A message claimed the single way, succeeded with and without its lease.
        one = c.claim(q, wait_seconds=0, job_types=["t"])
        self.assertTrue(one["claimed"])
        self.assertEqual(c.succeed(q, one["message"]["id"], one["message"]["lease_id"])["status"],
                         "succeeded")
        claimed = c.claim(q, max=1, ack=[])
        self.assertEqual(claimed["acked"], [])

    def test_errors_from_the_server(self) -> None:
        c = self.client
        q = "errors"
        with self.assertRaises(dlq.NotFoundError) as e:
            c.get(q, 999999)
        self.assertEqual((e.exception.status, e.exception.slug), (404, "message-not-found"))
        pending = c.enqueue(q, "x")["id"]
        with self.assertRaises(dlq.InvalidStateError) as e:
            c.replay(q, pending)
        self.assertEqual(e.exception.slug, "invalid-state")
        claimed = c.claim(q, max=1)["messages"][0]
        with self.assertRaises(dlq.LeaseLostError) as e:
            c.extend(q, claimed["id"], "0" * 32 + f"-{claimed['id']}")
        self.assertEqual(e.exception.slug, "lease-lost")
        with self.assertRaises(dlq.ValidationError) as e:
            c.enqueue(q, "x", max_retries=11)
        self.assertEqual([x["field"] for x in e.exception.errors], ["max_retries"])
        with self.assertRaises(dlq.PayloadTooLargeError) as e:
            c.enqueue(q, "x" * (1024 * 1024 + 1))
        self.assertEqual(e.exception.status, 413)
        # ConflictError: replaying a dead message whose key another in-flight message holds.
        first = c.enqueue(q, "k", idempotency_key="held")["id"]
        lease = c.claim(q, max=1, job_types=None)["messages"]
        for m in lease:
            c.fail(q, m["id"], lease_id=m["lease_id"], error="no", retryable=False)
        self.assertEqual(c.get(q, first)["status"], "dead")
        c.enqueue(q, "k2", idempotency_key="held")  # a new holder: the old one is dead
        with self.assertRaises(dlq.ConflictError) as e:
            c.replay(q, first)
        self.assertEqual(e.exception.slug, "idempotency-conflict")
        self.assertNotIsInstance(e.exception, (dlq.InvalidStateError, dlq.LeaseLostError))

    def test_transport_error_when_nothing_listens(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        c = dlq.Client(f"http://127.0.0.1:{port}")
        with mock.patch("dlq.client.time.sleep") as slept:
            with self.assertRaises(dlq.TransportError) as e:
                c.enqueue("q", "x")  # nothing was sent, so even this is retried
        self.assertFalse(e.exception.sent)
        self.assertIsNone(e.exception.status)
        self.assertIsInstance(e.exception, dlq.DlqError)
        delays = [call.args[0] for call in slept.call_args_list]
        self.assertEqual(len(delays), 4)
        for i, delay in enumerate(delays):
            self.assertLessEqual(delay, min(10, 0.2 * 2 ** i))

    def test_a_keep_alive_connection_the_server_closed_is_replaced_before_sending(self) -> None:
        c = dlq.Client(self.dlqd.url, retries=0)
        self.addCleanup(c.close)
        c.enqueue("idle", "one")
        time.sleep(1.6)  # past dlqd's idle_timeout_seconds (1): it closes the connection
        c.enqueue("idle", "two")  # not retryable, so it must not be sent on the dead one
        self.assertEqual(c.stats("idle")["ready"], 2)

    def test_dlq_url_and_dlq_token_from_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {"DLQ_URL": self.dlqd.url, "DLQ_TOKEN": "t"}):
            c = dlq.Client()
        self.addCleanup(c.close)
        self.assertEqual(c.url, self.dlqd.url)
        self.assertEqual(c._headers["Authorization"], "Bearer t")
        self.assertEqual(c.stats("env")["ready"], 0)
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(dlq.Client().url, "http://127.0.0.1:8080")


class Tokens(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        tokens = [{"name": "producer", "token_sha256": hashlib.sha256(b"p-secret").hexdigest(),
                   "roles": ["producer"]},
                  {"name": "reader", "token_sha256": hashlib.sha256(b"r-secret").hexdigest(),
                   "roles": ["reader"]}]
        cls.dlqd = support.Dlqd({"auth": {"tokens": tokens}}).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.dlqd.cleanup()

    def test_unauthorized_and_forbidden(self) -> None:
        with dlq.Client(self.dlqd.url, token="") as anonymous:
            with self.assertRaises(dlq.UnauthorizedError) as e:
                anonymous.enqueue("q", "x")
            self.assertEqual((e.exception.status, e.exception.slug), (401, "unauthorized"))
        with dlq.Client(self.dlqd.url, token="p-secret") as producer:
            producer.enqueue("q", "x")
            with self.assertRaises(dlq.ForbiddenError) as e:
                producer.stats("q")
            self.assertEqual((e.exception.status, e.exception.slug), (403, "forbidden"))
        with dlq.Client(self.dlqd.url, token="r-secret") as reader:
            self.assertEqual(reader.stats("q")["ready"], 1)


class _HangUp(socketserver.BaseRequestHandler):
    """Reads one request per connection; hangs up without answering the first `drops` of them,
    then answers 200 with a body every caller can read."""
    drops = 0
    seen = 0
    lock = threading.Lock()

    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        while len(body) < length:
            body += self.request.recv(65536)
        with _HangUp.lock:
            _HangUp.seen += 1
            drop = _HangUp.seen <= _HangUp.drops
        if drop:
            return  # closes the connection: the request was sent, no answer came
        answer = b'{"messages":[],"results":[],"claimed":false}'
        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer))


class RetryRule(unittest.TestCase):
    """Which calls are resent after a transport failure once the request went out."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _HangUp)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.client = dlq.Client(f"http://127.0.0.1:{cls.server.server_address[1]}")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.server.shutdown()
        cls.server.server_close()

    def requests_made(self, call, drops: int = 2) -> tuple[int, BaseException | None]:
        with _HangUp.lock:
            _HangUp.drops, _HangUp.seen = drops, 0
        error = None
        with mock.patch("dlq.client.time.sleep"):
            try:
                call()
            except dlq.TransportError as e:
                error = e
        return _HangUp.seen, error

    def test_calls_that_cannot_double_an_effect_are_resent(self) -> None:
        c = self.client
        lease = "0" * 32 + "-1"
        safe = {
            "get": lambda: c.get("q", 1),
            "list": lambda: c.list("q"),
            "stats": lambda: c.stats("q"),
            "enqueue with a key": lambda: c.enqueue("q", "x", idempotency_key="k"),
            "batch, every item keyed": lambda: c.enqueue_batch("q", [{"payload": "x", "idempotency_key": "a"}]),
            "replay dry run": lambda: c.replay("q", 1, dry_run=True),
            "claim": lambda: c.claim("q", max=1),
            "ack": lambda: c.ack("q", [(1, lease)]),
            "extend": lambda: c.extend("q", 1, lease),
            "release": lambda: c.release("q", 1, lease),
            "fail with a lease": lambda: c.fail("q", 1, lease_id=lease, error="e"),
            "succeed with a lease": lambda: c.succeed("q", 1, lease),
        }
        for name, call in safe.items():
            with self.subTest(call=name):
                self.assertEqual(self.requests_made(call), (3, None))

    def test_calls_that_could_double_an_effect_are_not(self) -> None:
        c = self.client
        unsafe = {
            "enqueue": lambda: c.enqueue("q", "x"),
            "batch with an unkeyed item": lambda: c.enqueue_batch(
                "q", [{"payload": "x", "idempotency_key": "a"}, {"payload": "y"}]),
            "replay": lambda: c.replay("q", 1),
            "fail without a lease": lambda: c.fail("q", 1, error="e"),
            "succeed without a lease": lambda: c.succeed("q", 1),
        }
        for name, call in unsafe.items():
            with self.subTest(call=name):
                seen, error = self.requests_made(call)
                self.assertEqual(seen, 1)
                self.assertIsInstance(error, dlq.TransportError)
                self.assertTrue(error.sent)

    def test_four_retries_then_the_error(self) -> None:
        seen, error = self.requests_made(lambda: self.client.get("q", 1), drops=100)
        self.assertEqual(seen, 5)
        self.assertIsInstance(error, dlq.TransportError)


if __name__ == "__main__":
    unittest.main()

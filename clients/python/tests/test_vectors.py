"""tests/clients/vectors.json, every entry: problem answers -> the error raised (through a small
local HTTP server that answers exactly the vector), and handler exceptions -> the fail or release
body the worker sends (through a real dlqd, whose resulting status, class and dead_reason are
checked too)."""

from __future__ import annotations

import datetime
import http.server
import json
import threading
import unittest

import support
from support import dlq


class Error(Exception):
    """The vectors' plain exception class ("kind": "Error")."""


def build(spec: dict) -> BaseException:
    kind = spec["kind"]
    if kind == "Fail":
        return dlq.Fail(spec["message"], spec.get("error_class", "unknown"), spec.get("retryable"),
                        spec.get("retry_in"), spec.get("fingerprint"))
    if kind == "NonRetryable":
        return dlq.NonRetryable(spec["message"])
    if kind == "InvalidInput":
        return dlq.InvalidInput(spec["message"])
    if kind == "Throttled":
        return dlq.Throttled(spec["message"], retry_in=spec.get("retry_in"))
    if kind == "TimeoutError":
        return TimeoutError(spec["message"])
    if kind == "Snooze":
        return dlq.Snooze(spec["seconds"])
    if kind == "EffectNotDone":
        return dlq.EffectNotDone(spec["message"], spec.get("error_class", "unknown"),
                                 spec.get("retryable"), spec.get("retry_in"),
                                 spec.get("fingerprint"))
    if kind == "UncertainEffect":
        return dlq.UncertainEffect(spec["key"], {"key": spec["key"], "state": "started",
                                                 "attempt": spec["attempt"]})
    if kind == "Error":
        return Error(spec["message"])
    raise AssertionError(f"unknown kind {kind!r} in vectors.json")


def raise_spec(spec: dict) -> None:
    exc = build(spec)
    if "cause" in spec:
        try:
            raise_spec(spec["cause"])
        except BaseException as cause:
            raise exc from cause
    raise exc


class _Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    answer: tuple[int, object] = (200, {})

    def _send(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body = type(self).answer
        if isinstance(body, str):
            data, kind = body.encode(), "text/html"
        else:
            data, kind = json.dumps(body).encode(), "application/problem+json"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _send

    def log_message(self, *args: object) -> None:
        pass


class ProblemVectors(unittest.TestCase):
    def test_every_problem_answer_raises_its_error(self) -> None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        client = dlq.Client(f"http://127.0.0.1:{server.server_address[1]}", retries=0)
        self.addCleanup(client.close)
        vectors = support.load_vectors()["problems"]
        self.assertGreater(len(vectors), 0)
        for v in vectors:
            with self.subTest(status=v["status"], slug=v["slug"]):
                _Answer.answer = (v["status"], v["body"])
                with self.assertRaises(dlq.DlqError) as caught:
                    client.get("q", 1)
                e = caught.exception
                self.assertEqual(type(e).__name__, v["error"])
                self.assertIs(getattr(dlq, v["error"]), type(e))
                self.assertEqual(e.status, v["status"])
                self.assertEqual(e.slug, v["slug"])
                if isinstance(v["body"], dict):
                    self.assertEqual(e.detail, v["body"]["detail"])
                    self.assertEqual(e.body, v["body"])
                else:
                    self.assertIn(v["body"], e.detail)
                if "errors" in v:
                    self.assertEqual(e.errors, v["errors"])
                # The same error from a POST (the worker's calls) as from a GET.
                with self.assertRaises(getattr(dlq, v["error"])):
                    client.enqueue("q", "x")


class ExceptionVectors(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.dlqd = support.Dlqd().start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.dlqd.cleanup()

    def test_every_exception_sends_its_body_and_ends_in_its_state(self) -> None:
        vectors = support.load_vectors()["exceptions"]
        self.assertGreater(len(vectors), 0)
        client = support.RecordingClient(self.dlqd.url)
        self.addCleanup(client.close)
        queue = "vectors"
        ids = [client.enqueue(queue, {"i": i}, job_type="vector")["id"] for i in range(len(vectors))]
        # Beyond the vectors: a retryable failure on its last attempt dies of retries_exhausted.
        last_try = client.enqueue(queue, {"i": -1}, job_type="vector", max_retries=1)["id"]

        w = support.worker(queue, client, concurrency=4)

        @w.handler("vector")
        def handle(job: dlq.Job) -> None:
            i = job.payload["i"]
            if i < 0:
                raise Error("last try")
            raise_spec(vectors[i]["raise"])

        running = support.RunningWorker(w)
        try:
            def all_sent() -> bool:
                return all(client.bodies(f"/messages/{m}/fail") or client.bodies(f"/messages/{m}/release")
                           for m in ids + [last_try])
            support.wait_for(all_sent, 10, "a fail or release per vector")
        finally:
            running.stop()

        now = datetime.datetime.now(datetime.timezone.utc)
        for v, message_id in zip(vectors, ids):
            with self.subTest(kind=v["raise"]["kind"]):
                message = client.get(queue, message_id)
                if "release" in v:
                    (_, body), = client.bodies(f"/messages/{message_id}/release")
                    self.assertEqual(body, {"lease_id": body["lease_id"], **v["release"]})
                    self.assertFalse(client.bodies(f"/messages/{message_id}/fail"))
                    self.assertEqual((message["status"], message["retry_count"]), ("pending", 0))
                    self.assertEqual(support.outcomes(client, queue, message_id)[-1], "released")
                    continue
                (_, body), = client.bodies(f"/messages/{message_id}/fail")
                expected = v["fail"]
                self.assertEqual(set(body), set(expected) | {"lease_id", "stack"})
                for key, value in expected.items():
                    self.assertEqual(body[key], value, key)
                self.assertIsInstance(body["stack"], str)
                self.assertIn("in handle", body["stack"])        # starts at the handler ...
                self.assertNotIn("dlq/worker.py", body["stack"])  # ... not in the library
                # What dlqd made of it.
                dead = expected.get("retryable") is False
                self.assertEqual(message["status"], "dead" if dead else "pending")
                self.assertEqual(message["error_class"], expected["error_class"])
                self.assertEqual(message["dead_reason"], "non_retryable" if dead else None)
                self.assertEqual(message["last_error"], expected["error"])
                attempt = client.attempts(queue, message_id)[-1]
                self.assertEqual(attempt["outcome"], "failed")
                self.assertEqual(attempt["cause"], expected.get("cause"))
                if "retry_in" in expected and not dead:
                    due = datetime.datetime.fromisoformat(message["retry_after"].replace("Z", "+00:00"))
                    self.assertGreater(due, now + datetime.timedelta(seconds=expected["retry_in"] - 5))
        message = client.get(queue, last_try)
        self.assertEqual((message["status"], message["error_class"], message["dead_reason"]),
                         ("dead", "unknown", "retries_exhausted"))


if __name__ == "__main__":
    unittest.main()

"""dlq.Client: every producer, operator and worker call of dlqd's HTTP API (http-api.md B1, B2,
B6), errors from problem+json, and the one retry rule for transport failures: resend only what
cannot double an effect (docs/clients.md, "Retries")."""

from __future__ import annotations

import datetime
import json
import logging
import os
import random
import threading
import time
import urllib.parse
import weakref
from typing import Any, Iterable, Mapping

from . import _http
from .effects import check_description, check_key, check_result, check_state
from .errors import DlqError, TransportError, error_from_answer

DEFAULT_URL = "http://127.0.0.1:8080"

# Transport retries: 0.2 s doubling to 10 s, full jitter, 4 retries after the first try.
RETRY_BASE = 0.2
RETRY_CAP = 10.0
RETRIES = 4

_ENQUEUE_OPTIONS = ("job_type", "priority", "max_retries", "delay_seconds", "run_at",
                    "idempotency_key")


def _time(value: Any) -> Any:
    """A datetime as RFC 3339 UTC (a naive one is taken as UTC); anything else as given."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        text = value.astimezone(datetime.timezone.utc).isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z")
    return value


def _payload_text(payload: Any) -> str:
    """Payloads are strings on the wire: a str goes as it is, anything else as its JSON text."""
    if isinstance(payload, str):
        return payload
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _enqueue_body(payload: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"payload": _payload_text(payload)}
    for key in _ENQUEUE_OPTIONS:
        value = options.get(key)
        if value is not None:
            body[key] = _time(value) if key == "run_at" else value
    return body


def _query(params: Mapping[str, Any]) -> str:
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        pairs.append((key, str(_time(value))))
    return ("?" + urllib.parse.urlencode(pairs)) if pairs else ""


def _q(queue: str) -> str:
    if not isinstance(queue, str) or not queue:
        raise ValueError("dlq: a queue name is a non-empty string")
    return urllib.parse.quote(queue, safe="")


def _id(message_id: Any) -> str:
    if isinstance(message_id, bool) or not isinstance(message_id, int) or message_id <= 0:
        raise ValueError(f"dlq: a message id is a positive integer, not {message_id!r}")
    return str(message_id)


class Client:
    """A client for one dlqd. Thread-safe: each thread that calls it gets its own keep-alive
    connection. `url` defaults to $DLQ_URL, then http://127.0.0.1:8080; `token` to $DLQ_TOKEN
    (sent as `Authorization: Bearer`); `ca_file` to $DLQ_CA_FILE (https only)."""

    def __init__(self, url: str | None = None, token: str | None = None, *, timeout: float = 30.0,
                 retries: int = RETRIES, ca_file: str | None = None,
                 logger: logging.Logger | None = None) -> None:
        url = url or os.environ.get("DLQ_URL") or DEFAULT_URL
        if token is None:
            token = os.environ.get("DLQ_TOKEN") or None
        self.endpoint = _http.Endpoint(url, ca_file or os.environ.get("DLQ_CA_FILE") or None)
        self.url = url
        self.timeout = timeout
        self.retries = retries
        self.log = logger or logging.getLogger("dlq")
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._local = threading.local()
        self._connections: weakref.WeakSet[_http.Connection] = weakref.WeakSet()

    # -- transport ------------------------------------------------------------------------

    def connection(self) -> _http.Connection:
        """A new connection of its own (the worker's long-poll claim uses one: aborting it must
        not touch another thread's requests)."""
        conn = _http.Connection(self.endpoint, min(self.timeout, 10.0))
        self._connections.add(conn)
        return conn

    def _thread_connection(self) -> _http.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self.connection()
        return conn

    def close(self) -> None:
        """Closes every connection this client opened (they reopen when used again)."""
        for conn in list(self._connections):
            conn.close()

    def close_thread_connection(self) -> None:
        """Closes the calling thread's connection (a thread that ends should call it)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, body: Any = None, *, safe: bool,
                timeout: float | None = None, retries: int | None = None,
                conn: _http.Connection | None = None) -> Any:
        """One call: its decoded JSON answer, or a DlqError. A transport failure is retried
        (0.2 s doubling to 10 s, full jitter) when nothing was sent, or when `safe` (resending
        cannot double an effect)."""
        data = None if body is None else json.dumps(body, ensure_ascii=False,
                                                     separators=(",", ":")).encode("utf-8")
        target = self.endpoint.prefix + path
        conn = conn or self._thread_connection()
        budget = self.retries if retries is None else retries
        attempt = 0
        while True:
            try:
                status, answer = conn.exchange(method, target, data, self._headers,
                                               timeout if timeout is not None else self.timeout)
                break
            except _http.Aborted as e:
                raise TransportError(f"{method} {path}: aborted", sent=True) from e
            except _http.NotSent as e:
                failure, sent = e, False
            except _http.MaybeSent as e:
                failure, sent = e, True
            if (sent and not safe) or attempt >= budget:
                raise TransportError(str(failure), sent=sent) from failure
            delay = random.uniform(0, min(RETRY_CAP, RETRY_BASE * 2 ** attempt))
            self.log.debug("%s; retrying in %.2f s", failure, delay)
            time.sleep(delay)
            attempt += 1
        if 200 <= status < 300:
            try:
                return json.loads(answer) if answer else None
            except ValueError as e:
                raise DlqError(status, "", f"the answer is not JSON: {answer[:200]!r}") from e
        raise error_from_answer(status, answer)

    # -- producers ------------------------------------------------------------------------

    def enqueue(self, queue: str, payload: Any, *, job_type: str | None = None,
                priority: int | None = None, max_retries: int | None = None,
                delay_seconds: int | None = None, run_at: Any = None,
                idempotency_key: str | None = None) -> dict[str, Any]:
        """Enqueues one message and returns it. A payload that is not a str is sent as its JSON
        text. `run_at`: a datetime or an RFC 3339 string. Retried after a transport failure only
        with an idempotency key (without one a resend could enqueue twice)."""
        body = _enqueue_body(payload, {"job_type": job_type, "priority": priority,
                                       "max_retries": max_retries, "delay_seconds": delay_seconds,
                                       "run_at": run_at, "idempotency_key": idempotency_key})
        return self.request("POST", f"/queues/{_q(queue)}/messages", body,
                            safe=idempotency_key is not None)

    def enqueue_batch(self, queue: str, messages: Iterable[Any]) -> list[dict[str, Any]]:
        """Enqueues up to 1,000 messages in one request, all or none; returns them in input order.
        Each item is a dict with `payload` and any enqueue option (job_type, priority,
        max_retries, delay_seconds, run_at, idempotency_key). Retried only when every item has an
        idempotency key."""
        items = []
        for item in messages:
            if not isinstance(item, Mapping) or "payload" not in item:
                raise ValueError("dlq: each batch item is a dict with a payload")
            unknown = set(item) - {"payload", *_ENQUEUE_OPTIONS}
            if unknown:
                raise ValueError(f"dlq: unknown enqueue option(s) {sorted(unknown)}")
            items.append(_enqueue_body(item["payload"], item))
        if not 1 <= len(items) <= 1000:
            raise ValueError("dlq: a batch holds 1 to 1,000 messages")
        safe = all("idempotency_key" in i for i in items)
        answer = self.request("POST", f"/queues/{_q(queue)}/messages/batch", {"messages": items},
                              safe=safe)
        return answer["messages"]

    # -- readers --------------------------------------------------------------------------

    def get(self, queue: str, message_id: int) -> dict[str, Any]:
        """One message."""
        return self.request("GET", f"/queues/{_q(queue)}/messages/{_id(message_id)}", safe=True)

    def list(self, queue: str, *, status: str | None = None, limit: int | None = None,
             offset: int | None = None, order: str | None = None, job_type: str | None = None,
             error_class: str | None = None, retrying: bool | None = None) -> list[dict[str, Any]]:
        """One page of a queue's messages (limit 1-100, default 20; order "asc" or "desc")."""
        query = _query({"status": status, "limit": limit, "offset": offset, "order": order,
                        "job_type": job_type, "error_class": error_class,
                        "retrying": True if retrying else None})
        return self.request("GET", f"/queues/{_q(queue)}/messages{query}", safe=True)["messages"]

    def attempts(self, queue: str, message_id: int) -> list[dict[str, Any]]:
        """A message's whole attempt history, oldest first (every page of it)."""
        entries: list[dict[str, Any]] = []
        after = None
        while True:
            page = self.request("GET", f"/queues/{_q(queue)}/messages/{_id(message_id)}/attempts"
                                f"{_query({'after': after})}", safe=True)
            entries.extend(page["attempts"])
            after = page.get("next_after")
            if after is None:
                return entries

    def stats(self, queue: str) -> dict[str, Any]:
        """One queue's counts per status and its oldest ages."""
        return self.request("GET", f"/queues/{_q(queue)}/stats", safe=True)

    def queues(self) -> list[dict[str, Any]]:
        """Every queue that holds messages, with its counts (every page)."""
        found: list[dict[str, Any]] = []
        after = None
        while True:
            page = self.request("GET", f"/queues{_query({'after': after})}", safe=True)
            found.extend(page["queues"])
            after = page.get("next_after")
            if after is None:
                return found

    def dead_letters(self, *, queue: str | None = None, job_type: str | None = None,
                     error_class: str | None = None, dead_reason: str | None = None,
                     since: Any = None, until: Any = None, limit: int | None = None,
                     after_id: int | None = None) -> dict[str, Any]:
        """One page of the dead-letter view across queues: {"messages", "count",
        "next_after_id"} (pass next_after_id back as after_id for the next page)."""
        query = _query({"queue": queue, "job_type": job_type, "error_class": error_class,
                        "dead_reason": dead_reason, "since": since, "until": until,
                        "limit": limit, "after_id": after_id})
        return self.request("GET", f"/dlq{query}", safe=True)

    # -- operators ------------------------------------------------------------------------

    def replay(self, queue: str, message_id: int, *, reason: str | None = None,
               payload: Any = None, delay_seconds: int | None = None, run_at: Any = None,
               force: bool | None = None, dry_run: bool | None = None,
               resolve_effects: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Replays a dead (or, with force, dismissed) message; returns it. `payload` edits it
        (not a str: sent as JSON text). `resolve_effects` decides about side effects left
        `started`: {key: "done"} (it happened: job.effect returns None without calling fn) or
        {key: "forget"} (it did not: fn runs again). With dry_run: the answer {"dry_run": true,
        "message"} and nothing changes. Not retried after a transport failure unless a dry run."""
        body: dict[str, Any] = {}
        for key, value in (("reason", reason), ("delay_seconds", delay_seconds),
                           ("run_at", _time(run_at)), ("force", force), ("dry_run", dry_run)):
            if value is not None:
                body[key] = value
        if resolve_effects is not None:
            body["resolve_effects"] = dict(resolve_effects)
        if payload is not None:
            body["payload"] = _payload_text(payload)
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/replay",
                            body, safe=bool(dry_run))

    def start_trial(self, queue: str, message_id: int, *, reason: str | None = None,
                    payload: Any = None, payload_is_json: bool | None = None) -> dict[str, Any]:
        """Starts a trial run of a dead message with a job type (admin): a worker whose handler
        opted in (`trials=True`) runs it once and answers whether it would succeed and which
        side effects it would cause; the message itself does not change. `payload` edits it for
        the trial only (not a str: sent as JSON text). Returns the trial {"trial_id", "status",
        ...}; an open trial of the message is returned as it is. Not retried once sent."""
        body: dict[str, Any] = {}
        if reason is not None:
            body["reason"] = reason
        if payload is not None:
            body["payload"] = _payload_text(payload)
        if payload_is_json is not None:
            body["payload_is_json"] = payload_is_json
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/trials",
                            body, safe=False)

    def start_trials(self, message_ids: Iterable[int], *,
                     reason: str | None = None) -> list[dict[str, Any]]:
        """Starts trial runs of 1 to 10 dead messages (admin, POST /dlq/trials), all or none;
        returns the trials in the order of the ids. Not retried once sent."""
        body: dict[str, Any] = {"ids": [int(_id(i)) for i in message_ids]}
        if reason is not None:
            body["reason"] = reason
        return self.request("POST", "/dlq/trials", body, safe=False)["trials"]

    def trial(self, queue: str, message_id: int, trial_id: int) -> dict[str, Any]:
        """One trial run: status pending | running | succeeded | failed | expired, and when it
        ended its error, error_class and would_effects."""
        return self.request("GET", f"/queues/{_q(queue)}/messages/{_id(message_id)}/trials/"
                            f"{_id(trial_id)}", safe=True)

    # -- workers (dlq.Worker makes these calls; they are here for loops of your own) -------

    def claim(self, queue: str, *, max: int | None = None, wait_seconds: int | None = None,
              visibility_timeout: int | None = None, worker: str | None = None,
              worker_version: str | None = None,
              job_types: list[str] | None = None, ack: list[dict[str, Any]] | None = None,
              trials: bool | None = None, retries: int | None = None,
              conn: _http.Connection | None = None) -> dict[str, Any]:
        """The claim answer: {"claimed", "message"} or, with max, {"claimed", "messages"}, plus
        "acked" when ack was sent. `trials=True` (it needs job_types) also takes trial runs of
        those types, first: such a message ends with `trial_id` and is answered only by
        succeed_trial / fail_trial. Retried (a lost answer only leaves leases to expire)."""
        if trials and not job_types:
            raise ValueError("dlq: a claim with trials=True needs job_types")
        body: dict[str, Any] = {}
        for key, value in (("wait_seconds", wait_seconds),
                           ("visibility_timeout", visibility_timeout), ("worker", worker),
                           ("worker_version", worker_version), ("job_types", job_types), ("max", max),
                           ("ack", ack), ("trials", True if trials else None)):
            if value is not None:
                body[key] = value
        return self.request("POST", f"/queues/{_q(queue)}/claim", body, safe=True,
                            timeout=self.timeout + (wait_seconds or 0), retries=retries, conn=conn)

    def ack(self, queue: str, items: Iterable[Any], *,
            retries: int | None = None) -> list[dict[str, Any]]:
        """Succeeds up to 1,000 messages, each {"id", "lease_id"} (or an (id, lease_id) pair);
        returns one {"id", "status", "error"} per item. Lease-fenced, so retried."""
        body = [dict(i) if isinstance(i, Mapping) else {"id": i[0], "lease_id": i[1]}
                for i in items]
        return self.request("POST", f"/queues/{_q(queue)}/ack", {"items": body}, safe=True,
                            retries=retries)["results"]

    def succeed(self, queue: str, message_id: int, lease_id: str | None = None) -> dict[str, Any]:
        """Succeeds one message. Retried only with a lease id."""
        body = {"lease_id": lease_id} if lease_id is not None else {}
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/succeed",
                            body, safe=lease_id is not None)

    def fail(self, queue: str, message_id: int, *, lease_id: str | None = None,
             error: str | None = None, error_class: str | None = None,
             retryable: bool | None = None, retry_in: int | None = None,
             stack: str | None = None, cause: str | None = None, checkpoint: str | None = None,
             fingerprint: str | None = None, retries: int | None = None) -> dict[str, Any]:
        """Fails one message (members left None are not sent). Retried only with a lease id."""
        body = {k: v for k, v in (("lease_id", lease_id), ("error", error),
                                  ("error_class", error_class), ("retryable", retryable),
                                  ("retry_in", retry_in), ("stack", stack), ("cause", cause),
                                  ("checkpoint", checkpoint), ("fingerprint", fingerprint))
                if v is not None}
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/fail",
                            body, safe=lease_id is not None, retries=retries)

    def extend(self, queue: str, message_id: int, lease_id: str, *, seconds: int | None = None,
               checkpoint: str | None = None, retries: int | None = None) -> dict[str, Any]:
        """Heartbeat: the lease now ends `seconds` from now (default: the queue's
        visibility_timeout); records `checkpoint` when given."""
        body: dict[str, Any] = {"lease_id": lease_id}
        if seconds is not None:
            body["seconds"] = seconds
        if checkpoint is not None:
            body["checkpoint"] = checkpoint
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/extend",
                            body, safe=True, retries=retries)

    def release(self, queue: str, message_id: int, lease_id: str, *,
                delay_seconds: int | None = None, retries: int | None = None) -> dict[str, Any]:
        """Gives a claimed message back without a failure; due again after delay_seconds."""
        body: dict[str, Any] = {"lease_id": lease_id}
        if delay_seconds is not None:
            body["delay_seconds"] = delay_seconds
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/release",
                            body, safe=True, retries=retries)

    def record_effect(self, queue: str, message_id: int, lease_id: str, key: str, state: str,
                      description: str | None = None, result: str | None = None, *,
                      retries: int | None = None) -> dict[str, Any]:
        """Records a side effect of a claimed message (job.effect makes these calls): state
        "started", "done" (result: JSON text, at most 4,096 bytes) or "cleared" (forgets a
        started key). key 1-128 bytes, description at most 512 (checked before sending). Returns
        the record {"key", "state", "description", "result", "attempt", "recorded_at",
        "resolved_by"}. Lease-fenced, so retried (a resent record changes nothing)."""
        check_key(key)
        check_state(state)
        body: dict[str, Any] = {"lease_id": lease_id, "key": key, "state": state}
        if check_description(description) is not None:
            body["description"] = description
        if check_result(result) is not None:
            body["result"] = result
        return self.request("POST", f"/queues/{_q(queue)}/messages/{_id(message_id)}/effects",
                            body, safe=True, retries=retries)

    def succeed_trial(self, queue: str, message_id: int, trial_id: int, lease_id: str, *,
                      would_effects: list[dict[str, Any]] | None = None,
                      retries: int | None = None) -> dict[str, Any]:
        """Answers a claimed trial run: it would succeed, causing `would_effects` ([{"key",
        "description"}]). Returns the trial. Fenced by the trial's lease, so retried (a resend
        after the first was applied is 409 lease-lost: the trial has ended)."""
        body: dict[str, Any] = {"lease_id": lease_id, "would_effects": list(would_effects or [])}
        return self.request("POST", self._trial_path(queue, message_id, trial_id, "succeed"),
                            body, safe=True, retries=retries)

    def fail_trial(self, queue: str, message_id: int, trial_id: int, lease_id: str, *,
                   error: str | None = None, error_class: str | None = None,
                   retryable: bool | None = None, retry_in: int | None = None,
                   stack: str | None = None, cause: str | None = None,
                   fingerprint: str | None = None,
                   would_effects: list[dict[str, Any]] | None = None,
                   retries: int | None = None) -> dict[str, Any]:
        """Answers a claimed trial run: it would fail with this error (fail's members; nothing is
        retried, the trial just ends failed). Returns the trial. Lease-fenced, so retried."""
        body: dict[str, Any] = {k: v for k, v in (
            ("lease_id", lease_id), ("error", error), ("error_class", error_class),
            ("retryable", retryable), ("retry_in", retry_in), ("stack", stack), ("cause", cause),
            ("fingerprint", fingerprint)) if v is not None}
        body["would_effects"] = list(would_effects or [])
        return self.request("POST", self._trial_path(queue, message_id, trial_id, "fail"),
                            body, safe=True, retries=retries)

    def extend_trial(self, queue: str, message_id: int, trial_id: int, lease_id: str, *,
                     seconds: int | None = None, retries: int | None = None) -> dict[str, Any]:
        """A trial's heartbeat: its lease now ends `seconds` from now (default the queue's
        visibility_timeout). A trial keeps no checkpoint on dlqd."""
        body: dict[str, Any] = {"lease_id": lease_id}
        if seconds is not None:
            body["seconds"] = seconds
        return self.request("POST", self._trial_path(queue, message_id, trial_id, "extend"),
                            body, safe=True, retries=retries)

    @staticmethod
    def _trial_path(queue: str, message_id: int, trial_id: int, action: str) -> str:
        return f"/queues/{_q(queue)}/messages/{_id(message_id)}/trials/{_id(trial_id)}/{action}"

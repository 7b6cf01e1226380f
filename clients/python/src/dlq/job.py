"""dlq.Job: one claimed message as a handler sees it, with its lease calls (extend,
save_checkpoint, effect) and the `cancelled` Event that is set when the lease is lost or shutdown
gives up on the handler. A trial run (`trial` set) is the same, except that effect() never runs a
side effect and checkpoints stay in memory (docs/clients.md, "Trial runs")."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Callable

from .effects import (EffectNotDone, UncertainEffect, check_description, check_key, result_text,
                      stored_value)
from .failures import _seconds, check_checkpoint

if TYPE_CHECKING:
    from .worker import Worker

MAX_LEASE = 43200  # dlqd's most seconds for a lease


class Job:
    """`payload` is the stored text parsed as JSON when it parses (else the text itself);
    `raw_payload` is the text as stored; `attempt` counts claims of this message so far, this
    one included; `message` is the whole claimed message object. `trial` is the trial run's id
    when this is one (an operator's "would it succeed?" of a dead message: nothing it does
    changes the message), else None."""

    def __init__(self, worker: "Worker", message: dict[str, Any], received: float) -> None:
        self.message = message
        self.id: int = message["id"]
        self.queue: str = message.get("queue") or worker.queue
        self.job_type: str | None = message.get("job_type")
        self.raw_payload: str = message.get("payload", "")
        try:
            self.payload: Any = json.loads(self.raw_payload)
        except (ValueError, TypeError):
            self.payload = self.raw_payload
        self.attempt: int = message.get("attempts", 0)
        self.idempotency_key: str | None = message.get("idempotency_key")
        self.checkpoint: str | None = message.get("checkpoint")
        self.lease_id: str = message["lease_id"]
        trial = message.get("trial_id")
        self.trial: int | None = (trial if isinstance(trial, int) and not isinstance(trial, bool)
                                  else None)
        self.cancelled = threading.Event()
        # A trial's side effects that a real run would cause: {"key", "description"}, by key.
        self._would: dict[str, dict[str, Any]] = {}
        # Recorded side effects by key, as dlqd sent them and as this attempt's records changed
        # them; one lock per key, so two threads of one handler never run the same effect at once.
        self._effects: dict[str, dict[str, Any]] = {
            e["key"]: dict(e) for e in message.get("effects") or []
            if isinstance(e, dict) and isinstance(e.get("key"), str)}
        self._effects_lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        # The worker's bookkeeping, guarded by its lock: the lease as this process knows it.
        self._worker = worker
        self._lease_seconds = worker.visibility_timeout
        self._deadline = received + self._lease_seconds
        self._next_beat = received + self._lease_seconds / 3
        self._state = "running"  # running -> finished | lost | abandoned

    def extend(self, seconds: float) -> None:
        """The lease now ends `seconds` from now, and heartbeats keep that length from here on.
        Raises LeaseLostError (and sets `cancelled`) when the lease is gone."""
        self._worker._extend(self, _seconds(seconds, "extend seconds", MAX_LEASE), None)

    def save_checkpoint(self, text: str) -> None:
        """Records how far the job got (at most 4,096 bytes; checked before sending); the next
        attempt finds it in `checkpoint`. Also renews the lease. In a trial run the checkpoint is
        kept in `checkpoint` only: nothing is sent (a trial changes nothing of its message)."""
        check_checkpoint(text)
        if self.trial is None:
            self._worker._extend(self, self._lease_seconds, text)
        self.checkpoint = text

    @property
    def would_effects(self) -> list[dict[str, Any]]:
        """In a trial run: the side effects effect() did not cause but a real run would, in call
        order, each {"key", "description"} (copies); [] otherwise."""
        with self._effects_lock:
            return [dict(e) for e in self._would.values()]

    @property
    def effects(self) -> list[dict[str, Any]]:
        """The message's recorded side effects (copies), as the claim brought them and this
        attempt's effect() calls changed them: {"key", "state" ("started" | "done"),
        "description", "result" (JSON text or None), "attempt", "recorded_at", "resolved_by"}."""
        with self._effects_lock:
            return [dict(e) for e in self._effects.values()]

    def effect(self, key: str, fn: Callable[[], Any], description: str | None = None,
               check: Callable[[], Any] | None = None) -> Any:
        """Runs `fn()` at most once for this message across its attempts, and returns its value.

        - `key` (1 to 128 bytes) `done`: fn is not called; the value recorded (its JSON round
          trip; None when an operator resolved it) is returned.
        - `key` unknown: `started` is recorded, fn is called, and `done` is recorded with fn's
          value as JSON text (at most 4,096 bytes); fn's value is returned. If fn raises, the
          key stays `started` (it may have happened) and the exception goes on, unless it is
          EffectNotDone: then the key is cleared first (the next attempt calls fn again).
        - `key` `started` (an earlier attempt began it and did not finish): uncertain.
          `check()` decides: a value means it happened (`done` is recorded with it and it is
          returned, fn not called); None means it did not (fn is called as for an unknown key).
          Without check, UncertainEffect: the job fails `uncertain_effect`, not retryable.

        `description` (at most 512 bytes) is shown to operators. Raises ValueError for a bad
        key, description or value before sending it, and LeaseLostError (and sets `cancelled`)
        when the lease is gone.

        In a trial run (`trial` set) nothing is recorded and no side effect happens: a `done`
        key returns its value as above; any other key calls neither fn nor check, is added to
        `would_effects` (key and description, sent with the trial's answer) and returns None."""
        check_key(key)
        check_description(description)
        if not callable(fn) or (check is not None and not callable(check)):
            raise TypeError("dlq: effect(key, fn, description, check): fn and check are callables")
        if self.trial is not None:
            with self._effects_lock:
                known = self._effects.get(key)
                if known is not None and known.get("state") == "done":
                    return stored_value(dict(known))
                self._would.setdefault(key, {"key": key, "description": description})
            return None
        with self._effects_lock:
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            with self._effects_lock:
                known = self._effects.get(key)
                known = dict(known) if known else None
            if known is not None and known.get("state") == "done":
                return stored_value(known)
            if known is not None:
                if check is None:
                    raise UncertainEffect(key, known, self.attempt)
                try:
                    value = check()
                except EffectNotDone:
                    self._record_effect(key, "cleared", None, None)
                    raise
                if value is not None:
                    self._record_effect(key, "done", description, result_text(value))
                    return value
            self._record_effect(key, "started", description, None)
            try:
                value = fn()
            except EffectNotDone:
                self._record_effect(key, "cleared", None, None)
                raise
            self._record_effect(key, "done", description, result_text(value))
            return value

    def _record_effect(self, key: str, state: str, description: str | None,
                       result: str | None) -> None:
        answer = self._worker._record_effect(self, key, state, description, result)
        with self._effects_lock:
            if state == "cleared":
                self._effects.pop(key, None)
            elif isinstance(answer, dict) and answer.get("key") == key:
                self._effects[key] = dict(answer)
            else:  # an answer without the record: keep what was sent
                self._effects[key] = {"key": key, "state": state, "description": description,
                                      "result": result, "attempt": self.attempt,
                                      "recorded_at": None, "resolved_by": None}

    def __repr__(self) -> str:
        trial = f" trial {self.trial}" if self.trial is not None else ""
        return f"<dlq.Job {self.queue}/{self.id} {self.job_type} attempt {self.attempt}{trial}>"

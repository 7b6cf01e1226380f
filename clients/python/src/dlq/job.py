"""dlq.Job: one claimed message as a handler sees it, with its lease calls (extend,
save_checkpoint) and the `cancelled` Event that is set when the lease is lost or shutdown gives
up on the handler."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from .failures import _seconds, check_checkpoint

if TYPE_CHECKING:
    from .worker import Worker

MAX_LEASE = 43200  # dlqd's most seconds for a lease


class Job:
    """`payload` is the stored text parsed as JSON when it parses (else the text itself);
    `raw_payload` is the text as stored; `attempt` counts claims of this message so far, this
    one included; `message` is the whole claimed message object."""

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
        self.cancelled = threading.Event()
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
        attempt finds it in `checkpoint`. Also renews the lease."""
        check_checkpoint(text)
        self._worker._extend(self, self._lease_seconds, text)
        self.checkpoint = text

    def __repr__(self) -> str:
        return f"<dlq.Job {self.queue}/{self.id} {self.job_type} attempt {self.attempt}>"

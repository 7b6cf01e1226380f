"""dlq: the official Python client and worker for dlqd (standard library only).

    import dlq
    worker = dlq.Worker("emails", concurrency=8)

    @worker.handler("send_email")
    def send_email(job):
        ...

    worker.run()

docs/clients.md has the decisions: options, errors, retries, acks, shutdown, heartbeats."""

from .client import Client
from .errors import (ConflictError, DlqError, ForbiddenError, InvalidStateError, LeaseLostError,
                     NotFoundError, PayloadTooLargeError, TransportError, UnauthorizedError,
                     UnavailableError, ValidationError)
from .effects import EffectNotDone, UncertainEffect
from .failures import Fail, InvalidInput, NonRetryable, Snooze, Throttled
from .job import Job
from .worker import Worker

__version__ = "0.1.0"

__all__ = [
    "Client", "Worker", "Job",
    "Fail", "NonRetryable", "InvalidInput", "Throttled", "Snooze",
    "EffectNotDone", "UncertainEffect",
    "DlqError", "NotFoundError", "InvalidStateError", "LeaseLostError", "ConflictError",
    "ValidationError", "UnauthorizedError", "ForbiddenError", "PayloadTooLargeError",
    "UnavailableError", "TransportError",
]

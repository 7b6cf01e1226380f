"""What a handler raises and the fail body it becomes: Fail and its shorthands carry a class,
retryability, a retry hint and a fingerprint; TimeoutError is `timeout`; anything else `unknown`
and retryable. Snooze gives the job back with a delay and is no failure (docs/clients.md)."""

from __future__ import annotations

import math
import re
import traceback
from typing import Any

# dlqd's closed list (http-api.md B2; uncertain_effect since issue 36, non-retryable by default).
ERROR_CLASSES = frozenset({"transient", "throttled", "timeout", "not_found", "invalid_input",
                           "auth", "unknown", "uncertain_effect"})
_FINGERPRINT = re.compile(r"[A-Za-z0-9_.:-]{1,128}")

ERROR_BYTES = 1000       # dlqd keeps the first 1,000 bytes of `error`
STACK_BYTES = 16384      # longer is 422
CAUSE_BYTES = 4096       # longer is 422
CHECKPOINT_BYTES = 4096  # longer is 422
MAX_RETRY_IN = 604800    # a week
MAX_DELAY = 31536000     # a year: release's delay_seconds


def _seconds(value: Any, name: str, top: int) -> int:
    """Whole seconds for the wire (dlqd takes integers): a fraction rounds up."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"dlq: {name} is a number of seconds, not {value!r}")
    whole = math.ceil(value)
    if not 0 <= whole <= top:
        raise ValueError(f"dlq: {name} must be 0 to {top} seconds, not {value!r}")
    return whole


def check_fingerprint(value: Any) -> str:
    if not isinstance(value, str) or not _FINGERPRINT.fullmatch(value):
        raise ValueError(f"dlq: a fingerprint is 1 to 128 of [A-Za-z0-9_.:-], not {value!r}")
    return value


def check_checkpoint(text: Any) -> str:
    if not isinstance(text, str):
        raise ValueError(f"dlq: a checkpoint is a str, not {type(text).__name__}")
    if len(text.encode("utf-8", "replace")) > CHECKPOINT_BYTES:
        raise ValueError(f"dlq: a checkpoint is at most {CHECKPOINT_BYTES} bytes")
    return text


class Fail(Exception):
    """Fails the job with this class. retryable None leaves it to the class and the queue's
    policy (non_retryable: invalid_input, not_found, auth by default); retry_in (seconds)
    replaces the computed backoff; fingerprint (1-128 of [A-Za-z0-9_.:-]) names the cause for
    incidents instead of the one dlqd computes."""

    def __init__(self, message: str, error_class: str = "unknown", retryable: bool | None = None,
                 retry_in: float | None = None, fingerprint: str | None = None) -> None:
        super().__init__(message)
        if error_class not in ERROR_CLASSES:
            raise ValueError(f"dlq: error_class must be one of {sorted(ERROR_CLASSES)}, "
                             f"not {error_class!r}")
        if retryable is not None and not isinstance(retryable, bool):
            raise ValueError("dlq: retryable is True, False or None")
        self.message = message
        self.error_class = error_class
        self.retryable = retryable
        self.retry_in = None if retry_in is None else _seconds(retry_in, "retry_in", MAX_RETRY_IN)
        self.fingerprint = None if fingerprint is None else check_fingerprint(fingerprint)


class NonRetryable(Fail):
    """Dead at once, whatever the class."""

    def __init__(self, message: str, error_class: str = "unknown",
                 fingerprint: str | None = None) -> None:
        super().__init__(message, error_class, False, None, fingerprint)


class InvalidInput(Fail):
    """The payload cannot work, however often it runs: `invalid_input`, dead at once."""

    def __init__(self, message: str, fingerprint: str | None = None) -> None:
        super().__init__(message, "invalid_input", False, None, fingerprint)


class Throttled(Fail):
    """Slow down: `throttled`, retried after retry_in seconds when given.
    Throttled("rate limited", retry_in=12), or Throttled(12)."""

    def __init__(self, message: Any = "throttled", retry_in: float | None = None,
                 fingerprint: str | None = None) -> None:
        if retry_in is None and isinstance(message, (int, float)) and not isinstance(message, bool):
            message, retry_in = "throttled", message
        super().__init__(str(message), "throttled", True, retry_in, fingerprint)


class Snooze(Exception):
    """Not now: the job is released (no failure counted) and due again after `seconds`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = _seconds(seconds, "Snooze seconds", MAX_DELAY)
        super().__init__(f"snoozed for {self.seconds} s")


def cut_utf8(text: str, limit: int) -> str:
    """At most `limit` bytes of UTF-8, cut on a character boundary (text that cannot be encoded,
    a lone surrogate, becomes '?')."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    return data[:limit].decode("utf-8", "ignore")


def describe(exc: BaseException) -> str:
    """`Type: message` (just `Type` when the message is empty)."""
    text = exc.message if isinstance(exc, Fail) else str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen = {id(exc)}
    current = exc
    while True:
        nxt = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
        if nxt is None or id(nxt) in seen:
            return chain
        chain.append(nxt)
        seen.add(id(nxt))
        current = nxt


def fail_body(exc: BaseException, lease_id: str) -> dict[str, Any]:
    """The fail body for an exception a handler raised. Its traceback should start at the
    handler (the worker drops its own frame before calling this)."""
    if isinstance(exc, Fail):
        error_class, retryable = exc.error_class, exc.retryable
    elif isinstance(exc, TimeoutError):
        error_class, retryable = "timeout", True
    else:
        error_class, retryable = "unknown", True
    body: dict[str, Any] = {"lease_id": lease_id, "error": cut_utf8(describe(exc), ERROR_BYTES),
                            "error_class": error_class}
    if retryable is not None:
        body["retryable"] = retryable
    if isinstance(exc, Fail):
        if exc.retry_in is not None:
            body["retry_in"] = exc.retry_in
        if exc.fingerprint is not None:
            body["fingerprint"] = exc.fingerprint
    body["stack"] = cut_utf8("".join(traceback.format_exception(exc)), STACK_BYTES)
    causes = _causes(exc)
    if causes:
        body["cause"] = cut_utf8(" <- ".join(describe(c) for c in causes), CAUSE_BYTES)
    return body


def minimal_fail_body(body: dict[str, Any]) -> dict[str, Any]:
    """What is resent when dlqd refuses a fail body 422: lease_id, error and error_class."""
    return {k: body[k] for k in ("lease_id", "error", "error_class") if k in body}

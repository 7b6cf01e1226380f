"""Recorded side effects (issue 36): job.effect(key, fn) runs fn at most once per message across
attempts, by recording the key as `started` before fn and `done` (with fn's value as JSON text)
after it. A key an earlier attempt left `started` is uncertain: check() decides, or the job fails
`uncertain_effect`, not retryable, for an operator (docs/clients.md, "Recorded side effects")."""

from __future__ import annotations

import json
from typing import Any

from .failures import Fail

KEY_BYTES = 128          # dlqd refuses a longer key (422 key too_long)
DESCRIPTION_BYTES = 512  # ... a longer description
RESULT_BYTES = 4096      # ... a longer result text
STATES = ("started", "done", "cleared")


def _utf8_size(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise ValueError(f"dlq: {what} is not valid UTF-8 text") from e


def check_key(key: Any) -> str:
    if not isinstance(key, str) or not 1 <= _utf8_size(key, "an effect key") <= KEY_BYTES:
        raise ValueError(f"dlq: an effect key is a str of 1 to {KEY_BYTES} bytes (UTF-8), "
                         f"not {key!r:.200}")
    return key


def check_description(description: Any) -> str | None:
    if description is None:
        return None
    if not isinstance(description, str):
        raise ValueError(f"dlq: an effect description is a str, not {type(description).__name__}")
    if _utf8_size(description, "an effect description") > DESCRIPTION_BYTES:
        raise ValueError(f"dlq: an effect description is at most {DESCRIPTION_BYTES} bytes")
    return description


def check_result(result: Any) -> str | None:
    if result is None:
        return None
    if not isinstance(result, str):
        raise ValueError(f"dlq: an effect result is a str (JSON text), not {type(result).__name__}")
    if _utf8_size(result, "an effect result") > RESULT_BYTES:
        raise ValueError(f"dlq: an effect result is at most {RESULT_BYTES} bytes of JSON text")
    return result


def check_state(state: Any) -> str:
    if state not in STATES:
        raise ValueError(f"dlq: an effect state is one of {list(STATES)}, not {state!r}")
    return state


def result_text(value: Any) -> str | None:
    """The JSON text stored for a value fn (or check) returned; None for None."""
    if value is None:
        return None
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"dlq: an effect's value must be JSON-serializable to be recorded "
                         f"({e})") from e
    return check_result(text)


def stored_value(effect: dict[str, Any]) -> Any:
    """What a `done` effect gives back: its result parsed as JSON (the text itself when it does
    not parse); None when it has none (fn returned None, or an operator resolved it)."""
    text = effect.get("result")
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


class EffectNotDone(Fail):
    """Raise from an effect's fn (or check) to say the side effect certainly did not happen: the
    key is cleared, so the next attempt calls fn again, and the job fails like this Fail (class
    `unknown` and the queue's policy by default, which retries it; give a class, retryable or
    retry_in as to any Fail)."""

    def __init__(self, message: str = "the side effect did not happen",
                 error_class: str = "unknown", retryable: bool | None = None,
                 retry_in: float | None = None, fingerprint: str | None = None) -> None:
        super().__init__(message, error_class, retryable, retry_in, fingerprint)


class UncertainEffect(Fail):
    """Raised by job.effect for a key that was left `started` (it may or may not have happened)
    when there is no check() to decide: the job fails `uncertain_effect`, not retryable, so it
    goes dead for an operator. `key` and `effect` (the stored record) say which."""

    def __init__(self, key: str, effect: dict[str, Any] | None = None,
                 current_attempt: int | None = None) -> None:
        attempt = (effect or {}).get("attempt")
        if current_attempt is not None and attempt == current_attempt:
            when = "it was started earlier in this attempt"
        elif isinstance(attempt, int):
            when = f"it was started by an earlier attempt ({attempt})"
        else:
            when = "it was started by an earlier attempt"
        message = (f"uncertain effect {json.dumps(key, ensure_ascii=False)}: {when} and may have "
                   f"happened; check the side effect, then replay with resolve_effects")
        super().__init__(message, "uncertain_effect", False)
        self.key = key
        self.effect = dict(effect) if effect else None

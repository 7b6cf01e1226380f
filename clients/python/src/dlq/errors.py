"""The errors a dlq call raises: one class per kind of problem+json answer (http-api.md C's slugs),
and TransportError when no answer came. Every one is a DlqError."""

from __future__ import annotations

import http.client
import json
from typing import Any


class DlqError(Exception):
    """An answer that is not a success. `status` is the HTTP status (None when no answer came),
    `slug` the last part of the problem's `type` ("" when the body was not a problem), `detail`
    its human text, `body` the decoded problem (or None)."""

    def __init__(self, status: int | None, slug: str, detail: str, body: Any = None) -> None:
        self.status = status
        self.slug = slug
        self.detail = detail
        self.body = body
        label = f"{status} {slug}".strip() if status is not None else (slug or "transport")
        super().__init__(f"{label}: {detail}" if detail else label)


class NotFoundError(DlqError):
    """404: no such message, queue name, replay run or route."""


class InvalidStateError(DlqError):
    """409 invalid-state: the message is not in a status the action needs."""


class LeaseLostError(DlqError):
    """409 lease-lost: the lease expired or belongs to another worker now."""


class ConflictError(DlqError):
    """Any other 409 (already-succeeded, idempotency-conflict, replay-limit, preview-stale...)."""


class ValidationError(DlqError):
    """422 validation-failed; `errors` lists `{field, message, code}` per invalid field."""

    def __init__(self, status: int | None, slug: str, detail: str, body: Any = None) -> None:
        super().__init__(status, slug, detail, body)
        errors = body.get("errors") if isinstance(body, dict) else None
        self.errors: list[dict[str, Any]] = errors if isinstance(errors, list) else []


class UnauthorizedError(DlqError):
    """401: no token, or one dlqd does not accept."""


class ForbiddenError(DlqError):
    """403: the token's roles do not allow this call (or the Host/Origin is refused)."""


class PayloadTooLargeError(DlqError):
    """413: the request body is larger than dlqd's limits.max_body_bytes."""


class UnavailableError(DlqError):
    """503: the database cannot be reached, or dlqd is shutting down; retry later."""


class TransportError(DlqError):
    """No answer: connection refused, reset or timed out. `sent` says whether the request may
    have reached dlqd (False: it certainly did not)."""

    def __init__(self, detail: str, sent: bool) -> None:
        super().__init__(None, "", detail)
        self.sent = sent


_BY_STATUS: dict[int, type[DlqError]] = {
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    413: PayloadTooLargeError,
    422: ValidationError,
    503: UnavailableError,
}
_CONFLICTS: dict[str, type[DlqError]] = {
    "invalid-state": InvalidStateError,
    "lease-lost": LeaseLostError,
}


def error_from_answer(status: int, data: bytes) -> DlqError:
    """The error for a non-2xx answer: the problem's slug and detail when the body is one, else
    the body's text (cut to 500 characters) as the detail."""
    body: Any = None
    try:
        body = json.loads(data) if data else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        kind = body.get("type")
        slug = kind.rsplit("/", 1)[-1] if isinstance(kind, str) else ""
        detail = next((v for v in (body.get("detail"), body.get("error"), body.get("title"))
                       if isinstance(v, str) and v), "")
    else:
        body = None
        slug = ""
        text = data.decode("utf-8", "replace").strip()[:500]
        detail = text or http.client.responses.get(status, "")
    if status == 409:
        cls = _CONFLICTS.get(slug, ConflictError)
    else:
        cls = _BY_STATUS.get(status, DlqError)
    return cls(status, slug, detail, body)

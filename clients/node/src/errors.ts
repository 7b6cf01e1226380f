// The errors a dlq call can raise: one class per kind of problem+json answer (http-api.md C's
// slugs), chosen by status and, for 409, by slug, plus TransportError for answers that never came.

/** One entry of a `422 validation-failed` answer's `errors`. */
export interface FieldError {
  field: string;
  message: string;
  code: string;
}

/** Base class of everything the library raises for a call dlqd refused or never answered. */
export class DlqError extends Error {
  /** HTTP status; 0 for a TransportError. */
  readonly status: number;
  /** The problem's slug (the last segment of its `type`), "" when the answer was not problem+json. */
  readonly slug: string;
  /** The problem's `detail`, else a short description of the answer. */
  readonly detail: string;
  /** The decoded problem body, when there was one. */
  readonly body: unknown;
  /** The answer's `X-Request-Id`, for matching dlqd's log. */
  readonly requestId: string | undefined;

  constructor(status: number, slug: string, detail: string, options: { body?: unknown; requestId?: string; cause?: unknown } = {}) {
    super(status === 0 ? detail : `${status}${slug ? ` ${slug}` : ""}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.slug = slug;
    this.detail = detail;
    this.body = options.body;
    this.requestId = options.requestId;
  }

  override get name(): string {
    return this.constructor.name;
  }
}

/** 404: unknown message (or one of another queue), unknown queue name, no such route or run. */
export class NotFoundError extends DlqError {}
/** 409 invalid-state: the message is not in a state the action applies to. */
export class InvalidStateError extends DlqError {}
/** 409 lease-lost: the lease expired or another worker holds the message now. */
export class LeaseLostError extends DlqError {}
/** Any other 409 (already-succeeded, idempotency-conflict, replay-limit, preview-stale, ...). */
export class ConflictError extends DlqError {}
/** 401: no token, or one dlqd does not accept. */
export class UnauthorizedError extends DlqError {}
/** 403: the token's roles do not allow the call. */
export class ForbiddenError extends DlqError {}
/** 413: the request body is over `limits.max_body_bytes`. */
export class PayloadTooLargeError extends DlqError {}
/** 503: the database cannot be reached, or dlqd is shutting down. Worth retrying later. */
export class UnavailableError extends DlqError {}

/** 422 validation-failed, with every invalid field. Also raised before sending for limits the
 * library checks itself (checkpoint size, fingerprint form). */
export class ValidationError extends DlqError {
  readonly errors: FieldError[];
  constructor(status: number, slug: string, detail: string, errors: FieldError[], options: { body?: unknown; requestId?: string } = {}) {
    super(status, slug, detail, options);
    this.errors = errors;
  }
}

/** No answer: dlqd could not be reached, the connection broke, or the answer did not come in time.
 * `sent` says whether the request may have reached dlqd (false: certainly not). */
export class TransportError extends DlqError {
  readonly code: string;
  readonly sent: boolean;
  constructor(message: string, options: { code?: string; sent?: boolean; cause?: unknown } = {}) {
    super(0, "", message, { cause: options.cause });
    this.code = options.code ?? "";
    this.sent = options.sent ?? true;
  }
}

/** A client-side refusal shaped like dlqd's own 422, so callers handle both alike. */
export function localValidationError(field: string, code: string, message: string): ValidationError {
  return new ValidationError(422, "validation-failed", message, [{ field, message, code }]);
}

function slugOf(type: unknown): string {
  if (typeof type !== "string" || type === "") return "";
  const cut = type.lastIndexOf("/");
  return cut < 0 ? type : type.slice(cut + 1);
}

/** The error for a non-2xx answer: `text` is its body as received. */
export function errorFromAnswer(status: number, text: string, requestId?: string): DlqError {
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const problem = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const slug = problem ? slugOf(problem.type) : "";
  let detail: string;
  if (problem && typeof problem.detail === "string") detail = problem.detail;
  else if (problem && typeof problem.error === "string") detail = problem.error;
  else if (problem && typeof problem.title === "string") detail = problem.title;
  else detail = text.trim() === "" ? `HTTP ${status}` : `HTTP ${status}: ${text.trim().slice(0, 200)}`;
  const options = { body: problem ?? (text === "" ? undefined : text), requestId };
  switch (status) {
    case 401:
      return new UnauthorizedError(status, slug, detail, options);
    case 403:
      return new ForbiddenError(status, slug, detail, options);
    case 404:
      return new NotFoundError(status, slug, detail, options);
    case 409:
      if (slug === "lease-lost") return new LeaseLostError(status, slug, detail, options);
      if (slug === "invalid-state") return new InvalidStateError(status, slug, detail, options);
      return new ConflictError(status, slug, detail, options);
    case 413:
      return new PayloadTooLargeError(status, slug, detail, options);
    case 422: {
      const raw = problem && Array.isArray(problem.errors) ? problem.errors : [];
      const errors: FieldError[] = raw
        .filter((e): e is Record<string, unknown> => e !== null && typeof e === "object")
        .map((e) => ({ field: String(e.field ?? ""), message: String(e.message ?? ""), code: String(e.code ?? "") }));
      return new ValidationError(status, slug, detail, errors, options);
    }
    case 503:
      return new UnavailableError(status, slug, detail, options);
    default:
      return new DlqError(status, slug, detail, options);
  }
}

// What a handler's exception becomes: the classes a handler throws to say how it failed, and the
// one mapping from any thrown value to a fail body (or, for Snooze, a release).

import { validFingerprint } from "./client.js";
import type { Effect } from "./types.js";

/** dlqd's closed list of error classes (http-api.md B2; uncertain_effect since issue 36). */
export const ERROR_CLASSES: readonly string[] = ["transient", "throttled", "timeout", "not_found", "invalid_input", "auth", "unknown", "uncertain_effect"];
export const MAX_RETRY_IN = 604800; // a week
export const MAX_DELAY = 31536000; // a year: release's delay_seconds
export const STACK_MAX_BYTES = 16384;
export const CAUSE_MAX_BYTES = 4096;
export const ERROR_MAX_BYTES = 1000;
const CAUSE_DEPTH = 16;

export interface FailOptions {
  /** transient · throttled · timeout · not_found · invalid_input · auth · uncertain_effect · unknown (default). */
  errorClass?: string;
  /** Omitted: the queue's policy decides by class. */
  retryable?: boolean;
  /** Seconds until the retry, replacing the computed backoff. */
  retryIn?: number;
  /** Groups failures into one incident: 1 to 128 of A-Z a-z 0-9 _ . : - */
  fingerprint?: string;
  cause?: unknown;
}

/** Whole seconds for the wire (dlqd takes integers): a fraction rounds up. */
function seconds(value: unknown, name: string, top: number): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new RangeError(`dlq: ${name} is a number of seconds, not ${String(value)}`);
  const whole = Math.ceil(value);
  if (whole < 0 || whole > top) throw new RangeError(`dlq: ${name} must be 0 to ${top} seconds, not ${value}`);
  return whole;
}

/** Throw from a handler to fail the job with a class, retryability, retry time and fingerprint.
 * The class, fingerprint and retryIn are checked here (a RangeError), so a mistake shows where
 * it is made rather than as a refused fail. */
export class Fail extends Error {
  readonly errorClass: string;
  readonly retryable: boolean | undefined;
  readonly retryIn: number | undefined;
  readonly fingerprint: string | undefined;
  constructor(message: string, options: FailOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const errorClass = options.errorClass ?? "unknown";
    if (!ERROR_CLASSES.includes(errorClass)) throw new RangeError(`dlq: errorClass must be one of ${ERROR_CLASSES.join(", ")}, not ${JSON.stringify(errorClass)}`);
    if (options.retryable !== undefined && typeof options.retryable !== "boolean") throw new RangeError("dlq: retryable is true, false or undefined");
    if (options.fingerprint !== undefined && !validFingerprint(options.fingerprint)) {
      throw new RangeError(`dlq: a fingerprint is 1 to 128 of [A-Za-z0-9_.:-], not ${JSON.stringify(options.fingerprint)}`);
    }
    this.errorClass = errorClass;
    this.retryable = options.retryable;
    this.retryIn = options.retryIn === undefined ? undefined : seconds(options.retryIn, "retryIn", MAX_RETRY_IN);
    this.fingerprint = options.fingerprint;
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/** A failure retrying cannot fix: the job goes dead at once, whatever the class. */
export class NonRetryable extends Fail {
  constructor(message: string, options: Omit<FailOptions, "retryable" | "retryIn"> = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** The payload is wrong (class invalid_input): dead at once. */
export class InvalidInput extends Fail {
  constructor(message: string, options: Omit<FailOptions, "retryable" | "errorClass"> = {}) {
    super(message, { ...options, errorClass: "invalid_input", retryable: false });
  }
}

/** Rate-limited (class throttled): retried after `retryIn` seconds when given.
 * `new Throttled("rate limited", 12)`, or `new Throttled(12)` (message "throttled"). */
export class Throttled extends Fail {
  constructor(message: string | number = "throttled", retryIn?: number, options: Omit<FailOptions, "retryable" | "errorClass" | "retryIn"> = {}) {
    if (typeof message === "number" && retryIn === undefined) [message, retryIn] = ["throttled", message];
    super(String(message), { ...options, errorClass: "throttled", retryable: true, retryIn });
  }
}

/** Throw from an effect's `fn` (or `check`) when the side effect certainly did not happen: the
 * key is cleared, so the next attempt calls `fn` again, and the job fails as this Fail says (by
 * default class unknown under the queue's policy, which retries it). */
export class EffectNotDone extends Fail {
  constructor(message = "the side effect did not happen", options: FailOptions = {}) {
    super(message, options);
  }
}

/** `job.effect` throws it for a key an earlier attempt left `started` (it may or may not have
 * happened) when no `check` can decide: class uncertain_effect, not retryable, so the job goes
 * dead for an operator to check and replay with resolve_effects. */
export class UncertainEffect extends Fail {
  readonly key: string;
  /** The stored record of the key. */
  readonly effect: Readonly<Effect> | undefined;
  constructor(key: string, effect?: Readonly<Effect>, currentAttempt?: number) {
    const attempt = effect?.attempt;
    const when =
      currentAttempt !== undefined && attempt === currentAttempt
        ? "it was started earlier in this attempt"
        : typeof attempt === "number"
          ? `it was started by an earlier attempt (${attempt})`
          : "it was started by an earlier attempt";
    super(`uncertain effect ${JSON.stringify(key)}: ${when} and may have happened; check the side effect, then replay with resolve_effects`, {
      errorClass: "uncertain_effect",
      retryable: false,
    });
    this.key = key;
    this.effect = effect === undefined ? undefined : { ...effect };
  }
}

/** Not a failure: give the job back, due again in `seconds`. */
export class Snooze extends Error {
  readonly seconds: number;
  constructor(delay: number) {
    const whole = seconds(delay, "Snooze seconds", MAX_DELAY);
    super(`snoozed for ${whole} s`);
    this.seconds = whole;
  }
  override get name(): string {
    return "Snooze";
  }
}

/** `text` as well-formed UTF-8 of at most `maxBytes`, cut on a character boundary. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8"); // lone surrogates become U+FFFD, as dlqd would store them
  if (bytes.length <= maxBytes) return bytes.toString("utf8");
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}

/** `Type: message` for any thrown value. A class's own name wins over Error's ("class
 * SmtpError extends Error {}" reads SmtpError); a DOMException reads by its name. */
export function describe(value: unknown): string {
  if (value instanceof Error) {
    let type = value.name;
    if (!type || type === "Error") type = value.constructor?.name || "Error";
    return value.message === "" ? type : `${type}: ${value.message}`;
  }
  if (typeof value === "string") return `Error: ${value}`;
  try {
    return `Error: ${JSON.stringify(value) ?? String(value)}`;
  } catch {
    return `Error: ${String(value)}`;
  }
}

/** The cause chain below `err`, each link described, joined by " <- " (outermost first). */
export function causeChain(err: unknown): string | undefined {
  const links: string[] = [];
  const seen = new Set<unknown>([err]);
  let cur: unknown = err instanceof Error ? err.cause : undefined;
  while (cur !== undefined && cur !== null && !seen.has(cur) && links.length < CAUSE_DEPTH) {
    seen.add(cur);
    links.push(describe(cur));
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return links.length === 0 ? undefined : links.join(" <- ");
}

export type Outcome =
  | { kind: "fail"; body: FailBody; droppedFingerprint?: string }
  | { kind: "release"; delaySeconds: number };

export interface FailBody {
  error: string;
  error_class: string;
  retryable?: boolean;
  retry_in?: number;
  stack?: string;
  cause?: string;
  fingerprint?: string;
}

/** The one mapping (docs/clients.md): Snooze → release; Fail and its shorthands → their class;
 * an Error named TimeoutError → timeout, retryable; anything else → unknown, retryable. */
export function outcomeOf(err: unknown): Outcome {
  if (err instanceof Snooze) return { kind: "release", delaySeconds: err.seconds };
  const body: FailBody = { error: cutUtf8(describe(err), ERROR_MAX_BYTES), error_class: "unknown" };
  let dropped: string | undefined;
  if (err instanceof Fail) {
    body.error_class = err.errorClass;
    if (err.retryable !== undefined) body.retryable = err.retryable;
    if (err.retryIn !== undefined) body.retry_in = err.retryIn;
    if (err.fingerprint !== undefined) {
      if (validFingerprint(err.fingerprint)) body.fingerprint = err.fingerprint;
      else dropped = err.fingerprint;
    }
  } else if (err instanceof Error && err.name === "TimeoutError") {
    body.error_class = "timeout";
    body.retryable = true;
  } else {
    body.retryable = true;
  }
  if (err instanceof Error && typeof err.stack === "string" && err.stack !== "") body.stack = cutUtf8(err.stack, STACK_MAX_BYTES);
  const cause = causeChain(err);
  if (cause !== undefined) body.cause = cutUtf8(cause, CAUSE_MAX_BYTES);
  return dropped === undefined ? { kind: "fail", body } : { kind: "fail", body, droppedFingerprint: dropped };
}

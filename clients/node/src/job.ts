// Job: what a handler receives — the claimed message's fields, its lease's AbortSignal, and the
// calls a handler makes under its lease (extend, saveCheckpoint, effect). A trial run (`trial`
// set) is the same, except that effect() never runs a side effect and checkpoints stay in memory.

import { EffectState, checkCheckpoint, checkEffect } from "./client.js";
import { EffectNotDone, UncertainEffect } from "./failures.js";
import type { ClaimedMessage, Effect, EffectRecord, WouldEffect } from "./types.js";

/** What the worker does for a job's lease; implemented by the worker's per-job run. */
export interface LeaseOps {
  extend(seconds: number): Promise<void>;
  saveCheckpoint(text: string): Promise<void>;
  /** POST …/effects under the job's lease (a lost lease rejects with LeaseLostError). */
  recordEffect(key: string, state: EffectState, description: string | undefined, result: string | undefined): Promise<EffectRecord>;
}

export interface EffectCallOptions<T> {
  /** Shown to operators (≤ 512 bytes). */
  description?: string;
  /** For a key an earlier attempt left `started`: find out whether the side effect happened.
   * A value means it did: it is recorded `done` and returned, `fn` not called. `undefined` (or
   * null) means it did not: `fn` runs as for a new key. Without `check` such a key fails the job
   * with UncertainEffect (uncertain_effect, not retryable). Throwing EffectNotDone clears the
   * key and fails the attempt; any other error fails it with the key left `started`. */
  check?: () => T | undefined | null | Promise<T | undefined | null>;
}

/** The JSON text recorded for an effect's value; undefined for undefined. */
function resultText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new TypeError(`dlq: an effect's value must be JSON-serializable to be recorded (${String(err)})`);
  }
  if (text === undefined) throw new TypeError(`dlq: an effect's value must be JSON-serializable to be recorded, not a ${typeof value}`);
  checkEffect("k", { result: text });
  return text;
}

/** A done effect's value: its result parsed as JSON (the text itself when it does not parse);
 * undefined when it has none (the value was undefined, or an operator resolved it). */
function storedValue(effect: Effect): unknown {
  if (effect.result === null || effect.result === undefined) return undefined;
  try {
    return JSON.parse(effect.result);
  } catch {
    return effect.result;
  }
}

export class Job<P = unknown> {
  readonly id: number;
  readonly queue: string;
  readonly jobType: string | null;
  /** The payload parsed as JSON when it parses, else the string as stored. */
  readonly payload: P;
  /** The payload exactly as stored. */
  readonly rawPayload: string;
  /** Claims of this message so far, this one included (1 on the first try; replays do not reset it). */
  readonly attempt: number;
  readonly idempotencyKey: string | null;
  readonly leaseId: string;
  /** The whole claimed message as dlqd sent it. */
  readonly message: ClaimedMessage;
  /** The trial run's id when this is one (an operator's "would it succeed?" of a dead message:
   * nothing the handler does changes the message), else undefined. */
  readonly trial: number | undefined;
  /** Aborts when the lease is lost (another worker may hold the job now: stop, the result will be
   * dropped) or when shutdown's grace ends. `signal.reason` says which. */
  readonly signal: AbortSignal;
  private checkpointText: string | null;
  private readonly ops: LeaseOps;
  /** Recorded side effects by key: the claim's, changed by this attempt's records. */
  private readonly effectsByKey = new Map<string, Effect>();
  /** An effect call under way per key: a second call with the key waits for it. */
  private readonly effectCalls = new Map<string, Promise<unknown>>();
  /** In a trial: the side effects a real run would cause, by key, in call order. */
  private readonly would = new Map<string, WouldEffect>();

  constructor(message: ClaimedMessage, signal: AbortSignal, ops: LeaseOps) {
    this.message = message;
    this.id = message.id;
    this.queue = message.queue;
    this.jobType = message.job_type ?? null;
    this.rawPayload = message.payload;
    let payload: unknown = message.payload;
    try {
      payload = JSON.parse(message.payload);
    } catch {
      payload = message.payload;
    }
    this.payload = payload as P;
    this.attempt = message.attempts;
    this.idempotencyKey = message.idempotency_key ?? null;
    this.leaseId = message.lease_id;
    this.trial = typeof message.trial_id === "number" ? message.trial_id : undefined;
    this.checkpointText = message.checkpoint ?? null;
    this.signal = signal;
    this.ops = ops;
    for (const e of message.effects ?? []) if (e !== null && typeof e === "object" && typeof e.key === "string") this.effectsByKey.set(e.key, { ...e });
  }

  /** The message's recorded side effects (copies), as the claim brought them and this attempt's
   * `effect` calls changed them. */
  get effects(): readonly Readonly<Effect>[] {
    return Object.freeze([...this.effectsByKey.values()].map((e) => Object.freeze({ ...e })));
  }

  /** In a trial run: the side effects `effect` did not cause but a real run would, in call order
   * (copies); empty otherwise. */
  get wouldEffects(): readonly Readonly<WouldEffect>[] {
    return Object.freeze([...this.would.values()].map((e) => Object.freeze({ ...e })));
  }

  /**
   * Runs `fn` at most once for this message across its attempts, and resolves to its value.
   * - `key` (1..128 bytes) `done`: `fn` is not called; the recorded value (its JSON round trip;
   *   undefined when an operator resolved it) is returned.
   * - `key` unknown: `started` is recorded, `fn` runs, and `done` is recorded with its value as
   *   JSON text (≤ 4,096 bytes). If `fn` throws, the key stays `started` (it may have happened)
   *   and the error goes on — unless it is an EffectNotDone: then the key is cleared first.
   * - `key` `started` (begun earlier, never finished): uncertain. `options.check` decides; without
   *   it the job fails with UncertainEffect (class uncertain_effect, not retryable).
   * Rejects with a ValidationError before sending for a bad key or description (or a value over
   * 4,096 bytes of JSON), and with LeaseLostError when the lease is gone.
   *
   * In a trial run (`trial` set) nothing is recorded and no side effect happens: a `done` key
   * resolves to its value as above; any other key calls neither `fn` nor `check`, is added to
   * `wouldEffects` (sent with the trial's answer) and resolves to undefined.
   */
  effect<T>(key: string, fn: () => T | Promise<T>, options: EffectCallOptions<T> = {}): Promise<T | undefined> {
    try {
      checkEffect(key, { description: options.description });
      if (typeof fn !== "function" || (options.check !== undefined && typeof options.check !== "function")) throw new TypeError("dlq: job.effect(key, fn, { check }): fn and check are functions");
      const known = this.effectsByKey.get(key);
      if (this.trial !== undefined) {
        if (known?.state === "done") return Promise.resolve(storedValue(known) as T | undefined);
        if (!this.would.has(key)) this.would.set(key, { key, description: options.description ?? null });
        return Promise.resolve(undefined);
      }
      if (known?.state === "started" && options.check === undefined && !this.effectCalls.has(key)) {
        // Thrown here, before any await, so that its stack starts at the handler's call.
        const err = new UncertainEffect(key, known, this.attempt);
        Error.captureStackTrace?.(err, Job.prototype.effect);
        throw err;
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const before = this.effectCalls.get(key) ?? Promise.resolve();
    const run = before.then(
      () => this.runEffect(key, fn, options),
      () => this.runEffect(key, fn, options),
    );
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.effectCalls.set(key, settled);
    void settled.then(() => {
      if (this.effectCalls.get(key) === settled) this.effectCalls.delete(key);
    });
    return run;
  }

  private async runEffect<T>(key: string, fn: () => T | Promise<T>, options: EffectCallOptions<T>): Promise<T | undefined> {
    const known = this.effectsByKey.get(key);
    if (known?.state === "done") return storedValue(known) as T | undefined;
    if (known !== undefined) {
      if (options.check === undefined) throw new UncertainEffect(key, known, this.attempt);
      let checked: T | undefined | null;
      try {
        checked = await options.check();
      } catch (err) {
        if (err instanceof EffectNotDone) await this.recordEffect(key, "cleared");
        throw err;
      }
      if (checked !== undefined && checked !== null) {
        await this.recordEffect(key, "done", options.description, resultText(checked));
        return checked;
      }
    }
    await this.recordEffect(key, "started", options.description);
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      if (err instanceof EffectNotDone) await this.recordEffect(key, "cleared");
      throw err;
    }
    await this.recordEffect(key, "done", options.description, resultText(value));
    return value;
  }

  private async recordEffect(key: string, state: EffectState, description?: string, result?: string): Promise<void> {
    const answer = await this.ops.recordEffect(key, state, description, result);
    if (state === "cleared") {
      this.effectsByKey.delete(key);
    } else if (answer !== null && typeof answer === "object" && answer.key === key && (answer.state === "started" || answer.state === "done")) {
      this.effectsByKey.set(key, { ...answer, state: answer.state });
    } else {
      this.effectsByKey.set(key, { key, state, description: description ?? null, result: result ?? null, attempt: this.attempt, recorded_at: new Date().toISOString(), resolved_by: null });
    }
  }

  /** The checkpoint saved by an earlier attempt or by this one (null when none). */
  get checkpoint(): string | null {
    return this.checkpointText;
  }

  /** Records how far the job got (≤ 4,096 bytes, checked before sending); kept across retries.
   * In a trial run it is kept in `checkpoint` only: nothing is sent. */
  async saveCheckpoint(text: string): Promise<void> {
    if (this.trial !== undefined) checkCheckpoint(text);
    else await this.ops.saveCheckpoint(text);
    this.checkpointText = text;
  }

  /** Makes the lease run `seconds` from now; heartbeats then keep that length. */
  extend(seconds: number): Promise<void> {
    return this.ops.extend(seconds);
  }
}

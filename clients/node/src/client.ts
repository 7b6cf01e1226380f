// Client: every producer, operator and worker call of dlqd's HTTP API, with camelCase options,
// errors from problem+json (errors.ts) and each call's retry rule (transport.ts).

import * as fs from "node:fs";
import { localValidationError } from "./errors.js";
import { CallOptions, RetryRule, Transport } from "./transport.js";
import { Logger, defaultLogger } from "./logger.js";
import type {
  AckResult,
  Attempt,
  AttemptPage,
  ClaimAnswer,
  DeadLetterPage,
  EffectRecord,
  Message,
  MessagePage,
  MessageStatus,
  QueuePage,
  QueueStats,
  ReplayDryRun,
  Trial,
  WouldEffect,
} from "./types.js";

export const VERSION = "0.1.0";
export const DEFAULT_URL = "http://127.0.0.1:8080";

export interface ClientOptions {
  /** dlqd's base URL; default `DLQ_URL`, else http://127.0.0.1:8080. */
  url?: string;
  /** Bearer token; default `DLQ_TOKEN`. */
  token?: string;
  /** Retries after a transport failure, where the call allows them (default 4). */
  retries?: number;
  /** A private CA for https://, as a PEM file's path; default `DLQ_CA_FILE`. */
  caFile?: string;
  /** Seconds to wait for an answer (default 30; claims add their wait). */
  timeout?: number;
  logger?: Logger;
}

export type MessageId = number | string | bigint;

export interface EnqueueOptions {
  maxRetries?: number;
  jobType?: string;
  priority?: number;
  delaySeconds?: number;
  /** A Date, or any RFC 3339 time. */
  runAt?: Date | string;
  idempotencyKey?: string;
}

export interface BatchItem extends EnqueueOptions {
  payload: unknown;
}

export interface ListOptions {
  status?: MessageStatus;
  limit?: number;
  offset?: number;
  order?: "asc" | "desc";
  jobType?: string;
  errorClass?: string;
  retrying?: boolean;
}

export interface DeadLetterOptions {
  queue?: string;
  jobType?: string;
  errorClass?: string;
  deadReason?: string;
  fingerprint?: string;
  since?: Date | string;
  until?: Date | string;
  limit?: number;
  afterId?: number;
}

export interface ReplayOptions {
  reason?: string;
  /** An edited payload (a non-string is sent as JSON text). */
  payload?: unknown;
  delaySeconds?: number;
  runAt?: Date | string;
  force?: boolean;
  dryRun?: boolean;
  payloadIsJson?: boolean;
  /** Side effects left `started`: `done` (it happened: job.effect resolves to undefined without
   * calling fn) or `forget` (it did not: fn runs again), by key. */
  resolveEffects?: Record<string, "done" | "forget">;
}

export interface ClaimOptions {
  waitSeconds?: number;
  visibilityTimeout?: number;
  worker?: string;
  /** ≤ 64 bytes: each attempt entry keeps the build that ran it. */
  workerVersion?: string;
  jobTypes?: string[];
  /** 1..100 (always sent by this client, so the answer is the batch shape). */
  max?: number;
  ack?: AckItem[];
  /** Also take trial runs of `jobTypes` (required then), first: such a message has `trial_id`
   * and is answered only by succeedTrial / failTrial, never acked. */
  trials?: boolean;
}

export interface TrialOptions {
  reason?: string;
  /** An edited payload for the trial only (a non-string is sent as JSON text). */
  payload?: unknown;
  payloadIsJson?: boolean;
}

/** A trial's failure: fail's members (nothing is retried: the trial just ends failed) and the
 * side effects it would have caused. */
export interface TrialFailBody extends Omit<FailBody, "checkpoint"> {
  would_effects?: WouldEffect[];
}

export interface AckItem {
  id: MessageId;
  lease_id: string;
}

export interface FailBody {
  error?: string;
  error_class?: string;
  retryable?: boolean;
  retry_in?: number;
  stack?: string;
  cause?: string;
  checkpoint?: string;
  fingerprint?: string;
}

export interface EffectOptions {
  /** Shown to operators, ≤ 512 bytes. */
  description?: string;
  /** With `done`: the effect's value as JSON text, ≤ 4,096 bytes. */
  result?: string;
}

export type EffectState = "started" | "done" | "cleared";

export const CHECKPOINT_MAX_BYTES = 4096;
export const EFFECT_KEY_MAX_BYTES = 128;
export const EFFECT_DESCRIPTION_MAX_BYTES = 512;
export const EFFECT_RESULT_MAX_BYTES = 4096;
const EFFECT_STATES: readonly string[] = ["started", "done", "cleared"];
const FINGERPRINT = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Payloads are strings on the wire: anything else is sent as its JSON text. */
export function payloadText(payload: unknown): string {
  if (typeof payload === "string") return payload;
  const text = JSON.stringify(payload);
  if (text === undefined) throw new TypeError("dlq: the payload must be a string or a JSON value");
  return text;
}

function time(t: Date | string | undefined): string | undefined {
  return t instanceof Date ? t.toISOString() : t;
}

function enqueueBody(payload: unknown, o: EnqueueOptions): Record<string, unknown> {
  return {
    payload: payloadText(payload),
    max_retries: o.maxRetries,
    job_type: o.jobType,
    priority: o.priority,
    delay_seconds: o.delaySeconds,
    run_at: time(o.runAt),
    idempotency_key: o.idempotencyKey,
  };
}

export function checkCheckpoint(checkpoint: string | undefined): void {
  if (checkpoint !== undefined && Buffer.byteLength(checkpoint, "utf8") > CHECKPOINT_MAX_BYTES) {
    throw localValidationError("checkpoint", "too_long", `checkpoint must be at most ${CHECKPOINT_MAX_BYTES} bytes`);
  }
}

/** A side effect's key (1..128 bytes), description (≤ 512) and result (≤ 4,096), checked before
 * sending: a ValidationError shaped like dlqd's 422. */
export function checkEffect(key: unknown, options: { description?: unknown; result?: unknown } = {}): void {
  if (typeof key !== "string" || key === "" || Buffer.byteLength(key, "utf8") > EFFECT_KEY_MAX_BYTES) {
    const long = typeof key === "string" && key !== "";
    throw localValidationError("key", long ? "too_long" : "invalid", `an effect key is a string of 1 to ${EFFECT_KEY_MAX_BYTES} bytes`);
  }
  const { description, result } = options;
  if (description !== undefined && description !== null) {
    if (typeof description !== "string") throw localValidationError("description", "invalid", "an effect description is a string");
    if (Buffer.byteLength(description, "utf8") > EFFECT_DESCRIPTION_MAX_BYTES) throw localValidationError("description", "too_long", `an effect description is at most ${EFFECT_DESCRIPTION_MAX_BYTES} bytes`);
  }
  if (result !== undefined && result !== null) {
    if (typeof result !== "string") throw localValidationError("result", "invalid", "an effect result is a string (JSON text)");
    if (Buffer.byteLength(result, "utf8") > EFFECT_RESULT_MAX_BYTES) throw localValidationError("result", "too_long", `an effect result is at most ${EFFECT_RESULT_MAX_BYTES} bytes of JSON text`);
  }
}

export function validFingerprint(fingerprint: string): boolean {
  return FINGERPRINT.test(fingerprint);
}

function q(queue: string): string {
  return encodeURIComponent(queue);
}

function idText(id: MessageId): string {
  return String(id);
}

export class Client {
  readonly url: string;
  readonly logger: Logger;
  private readonly transport: Transport;
  private readonly timeout: number;

  constructor(options: ClientOptions = {}) {
    this.url = options.url ?? process.env.DLQ_URL ?? DEFAULT_URL;
    const token = options.token ?? process.env.DLQ_TOKEN;
    this.logger = options.logger ?? defaultLogger;
    this.timeout = options.timeout ?? 30;
    const caFile = options.caFile ?? process.env.DLQ_CA_FILE;
    this.transport = new Transport({
      url: this.url,
      token: token === "" ? undefined : token,
      ca: caFile ? fs.readFileSync(caFile, "utf8") : undefined,
      retries: options.retries ?? 4,
      timeout: this.timeout,
      userAgent: `dlq-client-node/${VERSION}`,
    });
  }

  /** Closes pooled connections; the client stays usable (new calls open new ones). */
  close(): void {
    this.transport.close();
  }

  private call<T>(method: string, path: string, retry: RetryRule, body?: unknown, query?: Record<string, string | number | boolean | undefined>, options?: CallOptions): Promise<T> {
    return this.transport.call<T>({ method, path, body, query, retry }, options);
  }

  // ---- producers ----

  /** POST /queues/{queue}/messages. Retried only with an idempotency key (else only when nothing was sent). */
  async enqueue(queue: string, payload: unknown, options: EnqueueOptions = {}, call?: CallOptions): Promise<Message> {
    const retry: RetryRule = options.idempotencyKey !== undefined ? "safe" : "unsent";
    return this.call<Message>("POST", `/queues/${q(queue)}/messages`, retry, enqueueBody(payload, options), undefined, call);
  }

  /** POST /queues/{queue}/messages/batch (≤ 1,000 items). Retried only when every item has an idempotency key. */
  async enqueueBatch(queue: string, items: BatchItem[], call?: CallOptions): Promise<Message[]> {
    const retry: RetryRule = items.length > 0 && items.every((i) => i.idempotencyKey !== undefined) ? "safe" : "unsent";
    const body = { messages: items.map((i) => enqueueBody(i.payload, i)) };
    const answer = await this.call<{ messages: Message[] }>("POST", `/queues/${q(queue)}/messages/batch`, retry, body, undefined, call);
    return answer.messages;
  }

  // ---- readers ----

  async get(queue: string, id: MessageId, call?: CallOptions): Promise<Message> {
    return this.call<Message>("GET", `/queues/${q(queue)}/messages/${idText(id)}`, "safe", undefined, undefined, call);
  }

  async list(queue: string, options: ListOptions = {}, call?: CallOptions): Promise<MessagePage> {
    const query = {
      status: options.status,
      limit: options.limit,
      offset: options.offset,
      order: options.order,
      job_type: options.jobType,
      error_class: options.errorClass,
      retrying: options.retrying,
    };
    return this.call<MessagePage>("GET", `/queues/${q(queue)}/messages`, "safe", undefined, query, call);
  }

  /** The whole attempt history, oldest first (every page of GET …/attempts). */
  async attempts(queue: string, id: MessageId, call?: CallOptions): Promise<Attempt[]> {
    const all: Attempt[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await this.call<AttemptPage>("GET", `/queues/${q(queue)}/messages/${idText(id)}/attempts`, "safe", undefined, { after }, call);
      all.push(...page.attempts);
      if (page.next_after === null || page.next_after === undefined || page.attempts.length === 0) return all;
      after = page.next_after;
    }
  }

  async stats(queue: string, call?: CallOptions): Promise<QueueStats> {
    return this.call<QueueStats>("GET", `/queues/${q(queue)}/stats`, "safe", undefined, undefined, call);
  }

  /** Every queue with its counts, in name order (every page of GET /queues). */
  async queues(call?: CallOptions): Promise<QueueStats[]> {
    const all: QueueStats[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.call<QueuePage>("GET", "/queues", "safe", undefined, { after }, call);
      all.push(...page.queues);
      if (page.next_after === null || page.next_after === undefined || page.queues.length === 0) return all;
      after = page.next_after;
    }
  }

  /** GET /dlq: dead letters across queues, paged by `afterId` (the answer's `next_after_id`). */
  async deadLetters(options: DeadLetterOptions = {}, call?: CallOptions): Promise<DeadLetterPage> {
    const query = {
      queue: options.queue,
      job_type: options.jobType,
      error_class: options.errorClass,
      dead_reason: options.deadReason,
      fingerprint: options.fingerprint,
      since: time(options.since),
      until: time(options.until),
      limit: options.limit,
      after_id: options.afterId,
    };
    return this.call<DeadLetterPage>("GET", "/dlq", "safe", undefined, query, call);
  }

  // ---- operators ----

  /** POST …/messages/{id}/replay (admin). Not retried once sent (a dry run is: it changes nothing). */
  replay(queue: string, id: MessageId, options: ReplayOptions & { dryRun: true }, call?: CallOptions): Promise<ReplayDryRun>;
  replay(queue: string, id: MessageId, options?: ReplayOptions, call?: CallOptions): Promise<Message>;
  async replay(queue: string, id: MessageId, options: ReplayOptions = {}, call?: CallOptions): Promise<Message | ReplayDryRun> {
    const body = {
      reason: options.reason,
      payload: options.payload === undefined ? undefined : payloadText(options.payload),
      delay_seconds: options.delaySeconds,
      run_at: time(options.runAt),
      force: options.force,
      dry_run: options.dryRun,
      payload_is_json: options.payloadIsJson,
      resolve_effects: options.resolveEffects,
    };
    return this.call("POST", `/queues/${q(queue)}/messages/${idText(id)}/replay`, options.dryRun ? "safe" : "unsent", body, undefined, call);
  }

  /** POST …/messages/{id}/trials (admin): starts a trial run of a dead message with a job type
   * — a worker whose handler opted in runs it once and reports whether it would succeed and
   * which side effects it would cause; the message does not change. An open trial of the
   * message is answered as it is. Not retried once sent. */
  async startTrial(queue: string, id: MessageId, options: TrialOptions = {}, call?: CallOptions): Promise<Trial> {
    const body = {
      reason: options.reason,
      payload: options.payload === undefined ? undefined : payloadText(options.payload),
      payload_is_json: options.payloadIsJson,
    };
    return this.call<Trial>("POST", `/queues/${q(queue)}/messages/${idText(id)}/trials`, "unsent", body, undefined, call);
  }

  /** POST /dlq/trials (admin): trial runs of 1..10 dead messages, all or none, in `ids` order. */
  async startTrials(ids: MessageId[], options: { reason?: string } = {}, call?: CallOptions): Promise<Trial[]> {
    const body = { ids: ids.map((i) => Number(i)), reason: options.reason };
    const answer = await this.call<{ trials: Trial[] }>("POST", "/dlq/trials", "unsent", body, undefined, call);
    return answer.trials;
  }

  /** GET …/trials/{trialId}: one trial run (status pending | running | succeeded | failed | expired). */
  async trial(queue: string, id: MessageId, trialId: MessageId, call?: CallOptions): Promise<Trial> {
    return this.call<Trial>("GET", trialPath(queue, id, trialId), "safe", undefined, undefined, call);
  }

  // ---- workers (the Worker makes these calls; they are here for hand-written loops) ----

  /** POST /queues/{queue}/claim, always in the batch shape (`max`, default 1). Retried: a lost
   * answer leaves its messages leased until their lease ends, it never runs anything twice. */
  async claim(queue: string, options: ClaimOptions = {}, call?: CallOptions): Promise<ClaimAnswer> {
    const waitSeconds = options.waitSeconds ?? 0;
    const body: Record<string, unknown> = {
      wait_seconds: waitSeconds,
      visibility_timeout: options.visibilityTimeout,
      worker: options.worker,
      worker_version: options.workerVersion,
      job_types: options.jobTypes,
      max: options.max ?? 1,
    };
    if (options.ack !== undefined) body.ack = options.ack.map((a) => ({ id: Number(a.id), lease_id: a.lease_id }));
    if (options.trials) {
      if (!options.jobTypes || options.jobTypes.length === 0) throw localValidationError("trials", "invalid", "a claim with trials: true needs jobTypes");
      body.trials = true;
    }
    const timeout = (call?.timeout ?? this.timeout) + waitSeconds;
    const answer = await this.call<ClaimAnswer>("POST", `/queues/${q(queue)}/claim`, "safe", body, undefined, { ...call, timeout });
    if (!Array.isArray(answer.messages)) answer.messages = [];
    return answer;
  }

  /** POST /queues/{queue}/ack (≤ 1,000 items): per-item results. Retried: a resent ack of a
   * succeeded message answers 200. */
  async ack(queue: string, items: AckItem[], call?: CallOptions): Promise<AckResult[]> {
    const body = { items: items.map((a) => ({ id: Number(a.id), lease_id: a.lease_id })) };
    const answer = await this.call<{ results: AckResult[] }>("POST", `/queues/${q(queue)}/ack`, "safe", body, undefined, call);
    return answer.results;
  }

  /** POST …/succeed. With a lease id it is fenced and retried; without, FT72's unfenced succeed (not retried). */
  async succeed(queue: string, id: MessageId, leaseId?: string, call?: CallOptions): Promise<Message> {
    return this.call<Message>("POST", `/queues/${q(queue)}/messages/${idText(id)}/succeed`, leaseId ? "safe" : "unsent", { lease_id: leaseId }, undefined, call);
  }

  /** POST …/fail. Fenced by the lease id and retried (a resent fail already applied is 409 lease-lost). */
  async fail(queue: string, id: MessageId, leaseId: string | undefined, body: FailBody, call?: CallOptions): Promise<Message> {
    checkCheckpoint(body.checkpoint);
    if (body.fingerprint !== undefined && !validFingerprint(body.fingerprint)) {
      const long = Buffer.byteLength(body.fingerprint, "utf8") > 128;
      throw localValidationError("fingerprint", long ? "too_long" : "invalid", "fingerprint must be 1 to 128 of A-Z a-z 0-9 _ . : -");
    }
    return this.call<Message>("POST", `/queues/${q(queue)}/messages/${idText(id)}/fail`, leaseId ? "safe" : "unsent", { lease_id: leaseId, ...body }, undefined, call);
  }

  /** POST …/extend: the lease runs `seconds` from now (default the queue's visibility timeout). */
  async extend(queue: string, id: MessageId, leaseId: string, options: { seconds?: number; checkpoint?: string } = {}, call?: CallOptions): Promise<Message> {
    checkCheckpoint(options.checkpoint);
    const body = { lease_id: leaseId, seconds: options.seconds, checkpoint: options.checkpoint };
    return this.call<Message>("POST", `/queues/${q(queue)}/messages/${idText(id)}/extend`, "safe", body, undefined, call);
  }

  /** POST …/release: give the message back without a failure, due after `delaySeconds` (default at once). */
  async release(queue: string, id: MessageId, leaseId: string, options: { delaySeconds?: number } = {}, call?: CallOptions): Promise<Message> {
    const body = { lease_id: leaseId, delay_seconds: options.delaySeconds };
    return this.call<Message>("POST", `/queues/${q(queue)}/messages/${idText(id)}/release`, "safe", body, undefined, call);
  }

  /** POST …/effects (issue 36; `job.effect` makes these calls): records a side effect of a claimed
   * message as `started`, `done` (with `result`, its value as JSON text) or `cleared` (forgets a
   * started key). Key, description and result sizes are checked before sending. Lease-fenced, so
   * retried: a resent record changes nothing. */
  async recordEffect(queue: string, id: MessageId, leaseId: string, key: string, state: EffectState, options: EffectOptions = {}, call?: CallOptions): Promise<EffectRecord> {
    checkEffect(key, options);
    if (!EFFECT_STATES.includes(state)) throw localValidationError("state", "invalid", "an effect state is started, done or cleared");
    const body = { lease_id: leaseId, key, state, description: options.description, result: options.result };
    return this.call<EffectRecord>("POST", `/queues/${q(queue)}/messages/${idText(id)}/effects`, "safe", body, undefined, call);
  }

  /** POST …/trials/{trialId}/succeed: the trial would succeed, causing `wouldEffects`. Fenced by
   * the trial's lease, so retried (a resend after the first was applied is 409 lease-lost). */
  async succeedTrial(queue: string, id: MessageId, trialId: MessageId, leaseId: string, options: { wouldEffects?: WouldEffect[] } = {}, call?: CallOptions): Promise<Trial> {
    const body = { lease_id: leaseId, would_effects: options.wouldEffects ?? [] };
    return this.call<Trial>("POST", `${trialPath(queue, id, trialId)}/succeed`, "safe", body, undefined, call);
  }

  /** POST …/trials/{trialId}/fail: the trial would fail with this error. Lease-fenced, so retried. */
  async failTrial(queue: string, id: MessageId, trialId: MessageId, leaseId: string, body: TrialFailBody, call?: CallOptions): Promise<Trial> {
    if (body.fingerprint !== undefined && !validFingerprint(body.fingerprint)) {
      const long = Buffer.byteLength(body.fingerprint, "utf8") > 128;
      throw localValidationError("fingerprint", long ? "too_long" : "invalid", "fingerprint must be 1 to 128 of A-Z a-z 0-9 _ . : -");
    }
    const sent = { lease_id: leaseId, ...body, would_effects: body.would_effects ?? [] };
    return this.call<Trial>("POST", `${trialPath(queue, id, trialId)}/fail`, "safe", sent, undefined, call);
  }

  /** POST …/trials/{trialId}/extend: a trial's heartbeat (a trial keeps no checkpoint on dlqd). */
  async extendTrial(queue: string, id: MessageId, trialId: MessageId, leaseId: string, options: { seconds?: number } = {}, call?: CallOptions): Promise<Trial> {
    const body = { lease_id: leaseId, seconds: options.seconds };
    return this.call<Trial>("POST", `${trialPath(queue, id, trialId)}/extend`, "safe", body, undefined, call);
  }
}

function trialPath(queue: string, id: MessageId, trialId: MessageId): string {
  return `/queues/${q(queue)}/messages/${idText(id)}/trials/${idText(trialId)}`;
}

// Job: what a handler receives — the claimed message's fields, its lease's AbortSignal, and the
// two calls a handler makes under its lease (extend, saveCheckpoint).

import type { ClaimedMessage } from "./types.js";

/** What the worker does for a job's lease; implemented by the worker's per-job run. */
export interface LeaseOps {
  extend(seconds: number): Promise<void>;
  saveCheckpoint(text: string): Promise<void>;
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
  /** Aborts when the lease is lost (another worker may hold the job now: stop, the result will be
   * dropped) or when shutdown's grace ends. `signal.reason` says which. */
  readonly signal: AbortSignal;
  private checkpointText: string | null;
  private readonly ops: LeaseOps;

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
    this.checkpointText = message.checkpoint ?? null;
    this.signal = signal;
    this.ops = ops;
  }

  /** The checkpoint saved by an earlier attempt or by this one (null when none). */
  get checkpoint(): string | null {
    return this.checkpointText;
  }

  /** Records how far the job got (≤ 4,096 bytes, checked before sending); kept across retries. */
  async saveCheckpoint(text: string): Promise<void> {
    await this.ops.saveCheckpoint(text);
    this.checkpointText = text;
  }

  /** Makes the lease run `seconds` from now; heartbeats then keep that length. */
  extend(seconds: number): Promise<void> {
    return this.ops.extend(seconds);
  }
}

// The shapes dlqd answers with (http-api.md A, B), as it sends them: snake_case members.

export type MessageStatus = "pending" | "processing" | "succeeded" | "dead" | "dismissed";

export interface Message {
  id: number;
  queue: string;
  payload: string;
  status: MessageStatus;
  retry_count: number;
  max_retries: number;
  retry_after: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  priority: number;
  job_type: string | null;
  idempotency_key: string | null;
  error_class: string | null;
  dead_reason: string | null;
  checkpoint: string | null;
  lease_expiries: number;
  attempts: number;
  first_attempt_at: string | null;
  last_attempt_at: string | null;
  dead_at: string | null;
  replay_count: number;
  lease_expires_at: string | null;
  fingerprint?: string | null;
  title?: string | null;
  [more: string]: unknown;
}

/** What recording a side effect answers: the record, or `state: "cleared"` for a cleared key. */
export interface EffectRecord {
  key: string;
  state: "started" | "done" | "cleared";
  description: string | null;
  result: string | null;
  attempt: number;
  recorded_at: string;
  resolved_by: string | null;
  [more: string]: unknown;
}

/** A side effect recorded for a message (issue 36; `job.effect`). */
export interface Effect extends EffectRecord {
  /** `started`: an attempt began it and did not say it finished (it may have happened); `done`: it happened. */
  state: "started" | "done";
  description: string | null;
  /** The JSON text of the effect's value; null when none (or an operator resolved it). */
  result: string | null;
  /** The attempt that recorded it. */
  attempt: number;
  recorded_at: string;
  /** The operator who marked it done on a replay (its result is then null). */
  resolved_by: string | null;
  [more: string]: unknown;
}

/** A message as a claim answers it: with its lease. */
export interface ClaimedMessage extends Message {
  lease_id: string;
  /** The message's recorded side effects (`[]` when none; absent from a dlqd before issue 36). */
  effects?: Effect[];
  /** Present (last) when this is a trial run, claimed with `trials: true`: its `lease_id` is the
   * trial's, and it is answered only on the trial's routes (succeedTrial, failTrial). */
  trial_id?: number;
}

/** A side effect a trial run would have caused (`job.effect` in a trial). */
export interface WouldEffect {
  key: string;
  description: string | null;
}

export type TrialStatus = "pending" | "running" | "succeeded" | "failed" | "expired";

/** A trial run of a dead message (issue 36): started by an operator, run once by a worker whose
 * handler opted in, changing nothing of the message. */
export interface Trial {
  trial_id: number;
  queue: string;
  message_id: number;
  status: TrialStatus;
  actor: string | null;
  reason: string | null;
  payload_edited: boolean;
  created_at: string;
  claimed_at: string | null;
  finished_at: string | null;
  worker: string | null;
  worker_version: string | null;
  error: string | null;
  error_class: string | null;
  stack: string | null;
  cause: string | null;
  would_effects: WouldEffect[];
  [more: string]: unknown;
}

export interface MessagePage {
  messages: Message[];
  count: number;
}

export interface DeadLetterPage {
  messages: Message[];
  count: number;
  next_after_id: number | null;
}

export interface Attempt {
  attempt: number;
  claimed_at: string | null;
  finished_at: string | null;
  outcome: string | null;
  worker: string | null;
  error: string | null;
  error_class: string | null;
  stack: string | null;
  cause: string | null;
  /** On an entry with outcome `trial`: the trial run it records; null on every other entry. */
  trial?: { trial_id: number; status: TrialStatus; would_effects: WouldEffect[] } | null;
  [more: string]: unknown;
}

export interface AttemptPage {
  attempts: Attempt[];
  count: number;
  next_after?: number | null;
}

export interface QueueStats {
  queue: string;
  ready: number;
  scheduled: number;
  processing: number;
  succeeded: number;
  dead: number;
  dismissed: number;
  oldest_ready_age_seconds: number | null;
  oldest_dead_age_seconds: number | null;
  [more: string]: unknown;
}

export interface QueuePage {
  queues: QueueStats[];
  next_after?: string | null;
}

/** One item of an `acked` (claim) or `results` (/ack) list. */
export interface AckResult {
  id: number;
  status: number;
  error: string | null;
}

export interface ClaimAnswer {
  claimed: boolean;
  messages: ClaimedMessage[];
  /** Absent when the claim carried no acks, or the server predates acks in claims (nothing acked). */
  acked?: AckResult[];
}

export interface ReplayDryRun {
  dry_run: true;
  message: Message;
}

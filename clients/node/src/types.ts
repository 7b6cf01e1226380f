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

/** A message as a claim answers it: with its lease. */
export interface ClaimedMessage extends Message {
  lease_id: string;
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

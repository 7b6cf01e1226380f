// dlq-client: dlq's TypeScript worker library (docs/clients.md). No runtime dependencies.

export { Client, DEFAULT_URL, VERSION, CHECKPOINT_MAX_BYTES, EFFECT_KEY_MAX_BYTES, EFFECT_DESCRIPTION_MAX_BYTES, EFFECT_RESULT_MAX_BYTES, payloadText } from "./client.js";
export type {
  ClientOptions,
  MessageId,
  EnqueueOptions,
  BatchItem,
  ListOptions,
  DeadLetterOptions,
  ReplayOptions,
  ClaimOptions,
  AckItem,
  FailBody,
  EffectOptions,
  EffectState,
  TrialOptions,
  TrialFailBody,
} from "./client.js";
export {
  DlqError,
  NotFoundError,
  InvalidStateError,
  LeaseLostError,
  ConflictError,
  ValidationError,
  UnauthorizedError,
  ForbiddenError,
  PayloadTooLargeError,
  UnavailableError,
  TransportError,
} from "./errors.js";
export type { FieldError } from "./errors.js";
export { Fail, NonRetryable, InvalidInput, Throttled, Snooze, EffectNotDone, UncertainEffect, outcomeOf, cutUtf8, STACK_MAX_BYTES, CAUSE_MAX_BYTES } from "./failures.js";
export type { FailOptions, Outcome } from "./failures.js";
export { Job } from "./job.js";
export type { EffectCallOptions } from "./job.js";
export { Worker, ShutdownError } from "./worker.js";
export type { Handler, HandleOptions, WorkerOptions } from "./worker.js";
export { defaultLogger, silentLogger } from "./logger.js";
export type { Logger } from "./logger.js";
export type * from "./types.js";

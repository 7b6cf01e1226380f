// Worker: the claim loop (one long-poll claim asking for the free slots) and, when a handler
// opted in to trial runs, a second one with `trials: true` for those types sharing the slots
// (slotsFor); a heartbeat timer per job, acks that ride on the next claim only when one is about
// to go out, failures, releases and trial answers kept for resending while their lease lasts,
// and a shutdown that gives unfinished leases back (trials excepted: they expire on dlqd).

import * as os from "node:os";
import { performance } from "node:perf_hooks";
import { Client, ClientOptions, EffectState, TrialFailBody } from "./client.js";
import { DlqError, LeaseLostError, NotFoundError, TransportError, UnavailableError, ValidationError } from "./errors.js";
import { FailBody, ERROR_MAX_BYTES, Snooze, cutUtf8, outcomeOf } from "./failures.js";
import { Job } from "./job.js";
import { Logger, defaultLogger } from "./logger.js";
import { fullJitter, sleep } from "./transport.js";
import type { AckResult, ClaimedMessage, EffectRecord } from "./types.js";

export type Handler<P = any> = (job: Job<P>) => unknown;

export interface HandleOptions {
  /** Also run the trial runs of this type that operators start (default false): `job.trial` is
   * set, `job.effect` causes no side effect, and the outcome is only reported. */
  trials?: boolean;
}

type Loop = "main" | "trials";
type LoopState = "idle" | "ready" | "waiting" | "flight" | "backoff" | "ended";
type Delivery = "fail" | "release" | "trial-succeed" | "trial-fail";

export interface WorkerOptions extends ClientOptions {
  /** The queue to work (required). */
  queue: string;
  /** Jobs run at once (default 10). */
  concurrency?: number;
  /** A client to share; by default the worker makes its own from url/token/retries/timeout. */
  client?: Client;
  /** How long a claim parks waiting for work, 0..60 s (default 20). */
  waitSeconds?: number;
  /** Lease length asked for each claim, 1..43200 s (default 30); heartbeats extend it every third. */
  visibilityTimeout?: number;
  /** The claim's `worker`, recorded in the attempt history; default `host:pid` (cut to 128 bytes). */
  workerName?: string;
  /** The claim's `worker_version` (≤ 64 bytes): each attempt entry keeps the build that ran it. */
  workerVersion?: string;
  /** Seconds handlers may run on after stop() or a signal before they are cancelled (default 25). */
  shutdownTimeout?: number;
  /** Stop on SIGTERM/SIGINT, exit at once on a second one (default true). */
  handleSignals?: boolean;
  /** Start-up waits a random 0..startupDelay seconds, so a fleet restarted at once spreads out (default 1). */
  startupDelay?: number;
}

/** signal.reason when shutdown's grace ends before the handler did. */
export class ShutdownError extends Error {
  override get name(): string {
    return "ShutdownError";
  }
}

type RunState = "running" | "done" | "lost" | "cancelled";

interface Run {
  job: Job;
  message: ClaimedMessage;
  controller: AbortController;
  state: RunState;
  leaseSeconds: number;
  /** performance.now() by which the lease ends, as far as this worker knows. */
  deadline: number;
  timer: NodeJS.Timeout | undefined;
}

interface PendingAck {
  id: number;
  leaseId: string;
  deadline: number;
  run: Run;
  /** Sends that failed so far: the first send always goes (dlqd decides whether the lease holds),
   * resends only while the lease lasts as far as this worker knows. */
  failedSends: number;
}

const FINAL_GRACE_MS = 5000;
const BACKOFF_BASE_S = 0.2; // claim back-off when dlqd is down or answers 5xx: doubling from this ...
const BACKOFF_CAP_S = 30; // ... to this, full jitter
const RESEND_CAP_S = 5; // undelivered acks, fails, releases: retried at least this often while leases last
const HEARTBEAT_RETRY_MS = 500;
const MAX_ACKS = 1000;
const UNHANDLED_TYPE_DELAY_S = 60;
const TRIAL_ROOM = 10; // slots an idle main loop's parked claim leaves unheld for a batch of trials
const MAX_WOULD_EFFECTS = 100; // dlqd's default limits.max_effects_per_message: a trial answer's most

function defaultName(): string {
  return cutUtf8(`${os.hostname()}:${process.pid}`, 128);
}

function checkRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`dlq: ${name} must be an integer from ${min} to ${max}, not ${value}`);
}

/** Worth trying again later: no answer, 503, or another 5xx. */
function transient(err: unknown): boolean {
  return err instanceof TransportError || err instanceof UnavailableError || (err instanceof DlqError && err.status >= 500);
}

export class Worker {
  readonly queue: string;
  readonly concurrency: number;
  readonly client: Client;
  readonly workerName: string;
  readonly workerVersion: string | undefined;
  /** Runs jobs whose type has no handler of its own; with one set, claims ask for every type. */
  defaultHandler: Handler | undefined;

  private readonly logger: Logger;
  private readonly ownsClient: boolean;
  private readonly waitSeconds: number;
  private readonly visibilityTimeout: number;
  private readonly shutdownTimeoutMs: number;
  private readonly handleSignals: boolean;
  private readonly startupDelayMs: number;
  private readonly handlers = new Map<string, Handler>();
  /** Job types whose handlers opted in to trial runs. */
  private readonly trialTypes = new Set<string>();

  /** Handlers still running, by lease id (a job whose lease was lost may come back to this worker
   * under a new lease while its old handler still runs: each holds a slot). */
  private readonly running = new Map<string, Run>();
  private acks: PendingAck[] = [];
  private readonly deliveries = new Set<Promise<void>>();
  private readonly stopController = new AbortController();
  private readonly finalController = new AbortController();
  private started = false;
  private stopping = false;
  private stopAt = 0;
  private finished: Promise<void> | undefined;
  private ackInClaim = true;
  /** Per claim loop: its state, the slots its claim in flight asked for, and its wake-up. */
  private readonly loopState: Record<Loop, LoopState> = { main: "idle", trials: "ended" };
  private readonly reserved: Record<Loop, number> = { main: 0, trials: 0 };
  private readonly waiters: Record<Loop, (() => void) | undefined> = { main: undefined, trials: undefined };
  /** Who claims a last free slot both loops want. */
  private turn: Loop = "main";
  /** The trials loop's last answer brought trials: it goes first until one brings none. */
  private trialBurst = false;

  private idleWaiters: (() => void)[] = [];
  private pumpScheduled = false;
  private ackRetry: NodeJS.Timeout | undefined;
  private ackFailures = 0;

  constructor(options: WorkerOptions) {
    if (!options || typeof options.queue !== "string" || options.queue === "") throw new TypeError("dlq: Worker needs a queue");
    this.queue = options.queue;
    this.concurrency = options.concurrency ?? 10;
    this.waitSeconds = options.waitSeconds ?? 20;
    this.visibilityTimeout = options.visibilityTimeout ?? 30;
    checkRange("concurrency", this.concurrency, 1, 10000);
    checkRange("waitSeconds", this.waitSeconds, 0, 60);
    checkRange("visibilityTimeout", this.visibilityTimeout, 1, 43200);
    this.shutdownTimeoutMs = (options.shutdownTimeout ?? 25) * 1000;
    this.handleSignals = options.handleSignals ?? true;
    this.startupDelayMs = (options.startupDelay ?? 1) * 1000;
    this.logger = options.logger ?? options.client?.logger ?? defaultLogger;
    this.ownsClient = options.client === undefined;
    this.client = options.client ?? new Client({ ...options, logger: this.logger });
    this.workerName = cutUtf8(options.workerName ?? defaultName(), 128);
    if (options.workerVersion !== undefined && Buffer.byteLength(options.workerVersion, "utf8") > 64) throw new RangeError("dlq: workerVersion is at most 64 bytes");
    this.workerVersion = options.workerVersion;
  }

  /** Registers the handler for one job type. Return (or resolve) = succeed; throw = fail.
   * `{ trials: true }` also gives it the trial runs of this type (docs/clients.md, "Trial runs"). */
  handle<P = any>(jobType: string, handler: Handler<P>, options: HandleOptions = {}): this {
    if (typeof handler !== "function") throw new TypeError("dlq: a handler must be a function");
    if (options.trials !== undefined && typeof options.trials !== "boolean") throw new TypeError("dlq: trials is true or false");
    this.handlers.set(jobType, handler as Handler);
    if (options.trials) this.trialTypes.add(jobType);
    else this.trialTypes.delete(jobType);
    return this;
  }

  /** Claims and runs jobs until stop() or SIGTERM/SIGINT; resolves when shutdown is complete. */
  run(): Promise<void> {
    if (this.started) throw new Error("dlq: run() was already called on this worker");
    this.started = true;
    if (this.handlers.size === 0 && this.defaultHandler === undefined) throw new Error("dlq: register a handler (worker.handle) or set worker.defaultHandler first");
    if (this.defaultHandler === undefined && this.handlers.size > 100) throw new Error("dlq: at most 100 job types per worker (set a defaultHandler to claim every type)");
    if (this.trialTypes.size > 100) throw new Error("dlq: at most 100 job types take trial runs per worker");
    this.finished = this.lifecycle();
    return this.finished;
  }

  /** Stops claiming, lets handlers finish within shutdownTimeout, releases the rest; resolves when run() does. */
  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.stopAt = performance.now();
      this.logger.info("stopping: no more claims", { queue: this.queue, running: this.running.size });
      this.stopController.abort(new ShutdownError("the worker is stopping"));
      this.wakeLoops();
    }
    return this.finished ?? Promise.resolve();
  }

  private async lifecycle(): Promise<void> {
    const off = this.handleSignals ? this.installSignals() : () => {};
    try {
      const trialTypes = [...this.trialTypes];
      this.logger.info("worker started", { queue: this.queue, concurrency: this.concurrency, worker: this.workerName, trial_types: trialTypes });
      await sleep(Math.random() * this.startupDelayMs, this.stopController.signal).catch(() => {});
      if (trialTypes.length > 0) this.loopState.trials = "idle";
      await Promise.all([this.claimLoop("main"), trialTypes.length > 0 ? this.claimLoop("trials").finally(() => this.endTrialLoop()) : undefined]);
      await this.drain();
      this.logger.info("worker stopped", { queue: this.queue });
    } finally {
      off();
      if (this.ownsClient) this.client.close();
    }
  }

  private installSignals(): () => void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (!this.stopping) {
        this.logger.info(`${signal}: shutting down (a second signal exits at once)`, { queue: this.queue });
        void this.stop();
      } else {
        this.logger.warn(`${signal} again: exiting now; unfinished jobs come back when their leases end`, { queue: this.queue, running: this.running.size });
        process.exit(128 + (os.constants.signals[signal] ?? 15));
      }
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    return () => {
      process.removeListener("SIGTERM", onSignal);
      process.removeListener("SIGINT", onSignal);
    };
  }

  // ---- the claim loop ----

  /** How many slots `loop` may claim now. A claim in flight holds the slots it asked for until its
   * answer is started, so the two loops together never ask for more than `concurrency`. While
   * the other loop has no claim out it will want slots too: this one leaves it one, and of a
   * single free slot they take turns (the loop whose claim came back last yields). An idle trials
   * loop parks for one slot only; once an answer brings trials it goes first, without parking,
   * until an answer brings none. */
  private slotsFor(loop: Loop): number {
    const free = this.concurrency - this.running.size - this.reserved.main - this.reserved.trials;
    if (free <= 0) return 0;
    const other: Loop = loop === "main" ? "trials" : "main";
    if (this.trialBurst && this.loopState.trials !== "ended") {
      if (loop === "trials") return free;
      if (this.loopState.trials !== "flight") return 0;
    }
    if (this.loopState[other] === "flight" || this.loopState[other] === "ended") return free;
    if (free >= 2) return free - 1;
    return this.turn === loop ? 1 : 0;
  }

  private endTrialLoop(): void {
    this.loopState.trials = "ended";
    this.reserved.trials = 0;
    this.trialBurst = false;
    this.wakeLoops();
  }

  private async claimLoop(loop: Loop): Promise<void> {
    const trials = loop === "trials";
    const jobTypes = trials ? [...this.trialTypes] : this.defaultHandler === undefined ? [...this.handlers.keys()] : undefined;
    const other: Loop = trials ? "main" : "trials";
    let failures = 0;
    let idle = true; // the loop's last answer was empty: its next claim will likely park
    while (!this.stopping) {
      this.loopState[loop] = "ready";
      const slots = this.slotsFor(loop);
      if (slots <= 0) {
        await this.waitForSlot(loop);
        continue;
      }
      // A parked claim holds its slots for up to waitSeconds: an idle trials loop parks for one;
      // after an answer with trials it takes every slot it may, without parking.
      // An idle main loop leaves up to TRIAL_ROOM slots unheld while a trials loop exists, so a
      // batch of trials can start side by side; the first message of a burst wakes it, and it
      // claims the rest right after.
      const burst = trials && this.trialBurst;
      const room = !trials && idle && this.loopState.trials !== "ended" ? Math.min(slots - 1, TRIAL_ROOM) : 0;
      const max = Math.min(slots - room, burst || !trials ? 100 : 1);
      const acks = !trials && this.ackInClaim ? this.takeAcks() : [];
      this.reserved[loop] = max;
      this.loopState[loop] = "flight";
      let answer;
      try {
        answer = await this.client.claim(
          this.queue,
          {
            waitSeconds: burst ? 0 : this.waitSeconds,
            visibilityTimeout: this.visibilityTimeout,
            worker: this.workerName,
            workerVersion: this.workerVersion,
            jobTypes,
            max,
            ack: acks.length > 0 ? acks.map((a) => ({ id: a.id, lease_id: a.leaseId })) : undefined,
            trials: trials ? true : undefined,
          },
          { signal: this.stopController.signal, retries: 0 },
        );
      } catch (err) {
        this.loopState[loop] = "backoff";
        this.reserved[loop] = 0;
        this.turn = other;
        if (trials) this.trialBurst = false;
        this.wakeLoops();
        this.requeueAcks(acks);
        if (this.stopping) break;
        failures++;
        const delay = fullJitter(failures - 1, BACKOFF_BASE_S, BACKOFF_CAP_S);
        const fields = { queue: this.queue, error: err, retry_in_ms: Math.round(delay), trials };
        if (transient(err)) this.logger.warn(`${trials ? "trial claim" : "claim"} failed: dlqd unreachable or unavailable; backing off`, fields);
        else this.logger.error(`${trials ? "trial claim" : "claim"} refused; backing off`, fields);
        this.schedulePump(); // acks go by /ack meanwhile
        await sleep(delay, this.stopController.signal).catch(() => {});
        continue;
      }
      if (failures > 0) this.logger.info(trials ? "claiming trials again" : "claiming again", { queue: this.queue });
      failures = 0;
      // A parked claim's leases start when dlqd answers, not when the claim was sent. The
      // reservation becomes the jobs the claim brought in this same turn of the event loop.
      const receivedAt = performance.now();
      this.reserved[loop] = 0;
      this.loopState[loop] = "ready";
      this.turn = other;
      if (trials) this.trialBurst = answer.messages.some((m) => typeof m.trial_id === "number");
      idle = answer.messages.length === 0;
      if (acks.length > 0) this.settleAckedInClaim(acks, answer.acked);
      for (const message of answer.messages) {
        if (this.stopping) this.releaseUnstarted(message);
        else this.start(message, receivedAt);
      }
      this.wakeLoops();
      if (this.acks.length > 0) this.schedulePump();
    }
    this.loopState[loop] = loop === "trials" ? "ended" : "idle";
  }

  private waitForSlot(loop: Loop): Promise<void> {
    this.loopState[loop] = "waiting";
    // No claim goes out now: acks waiting for one go by /ack (the pump decides).
    if (loop === "main" && this.acks.length > 0) this.schedulePump();
    // (A main-loop claim that holds the slots trials wait for is not cut short: one already
    // answering with messages would leave them leased to nobody until their lease ran out. It
    // ends within waitSeconds.)
    return new Promise((resolve) => {
      this.waiters[loop] = resolve;
    });
  }

  private wake(loop: Loop): void {
    const w = this.waiters[loop];
    this.waiters[loop] = undefined;
    w?.();
  }

  private wakeLoops(): void {
    this.wake("main");
    this.wake("trials");
  }

  /** Runs once per turn of the event loop after jobs finish: a claim about to go out (a slot
   * free, the loop waiting for one) takes the acks; otherwise they go by /ack at once. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      // Wake only a loop that will claim now (a woken loop that finds no slot waits again).
      const mainGoes = this.waiters.main !== undefined && !this.stopping && this.slotsFor("main") > 0;
      const trialsGo = this.waiters.trials !== undefined && !this.stopping && this.slotsFor("trials") > 0;
      if (mainGoes) this.wake("main");
      if (trialsGo) this.wake("trials");
      if (!(mainGoes && this.ackInClaim) && this.acks.length > 0) this.sendAcks();
    });
  }

  // ---- acks ----

  private takeAcks(max = MAX_ACKS): PendingAck[] {
    const now = performance.now();
    const live: PendingAck[] = [];
    for (const a of this.acks) {
      if (a.failedSends === 0 || a.deadline > now) live.push(a);
      else this.logger.warn("lease ended before the ack could be delivered; the job will run again", { queue: this.queue, id: a.id });
    }
    this.acks = live.slice(max);
    return live.slice(0, max);
  }

  private requeueAcks(batch: PendingAck[], failed = true): void {
    if (failed) for (const a of batch) a.failedSends++;
    if (batch.length > 0) this.acks = batch.concat(this.acks);
  }

  private sendAcks(): void {
    if (this.ackRetry !== undefined) return; // a retry after a failure is scheduled
    while (this.acks.length > 0) {
      const batch = this.takeAcks();
      if (batch.length === 0) return;
      this.track(
        this.client.ack(this.queue, batch.map((a) => ({ id: a.id, lease_id: a.leaseId })), { signal: this.finalController.signal, retries: 0 }).then(
          (results) => {
            this.ackFailures = 0;
            this.settleAckResults(batch, results);
          },
          (err) => {
            if (transient(err) && !this.finalController.signal.aborted) {
              this.requeueAcks(batch);
              this.logger.warn("ack failed: dlqd unreachable or unavailable; kept for resending while the leases last", { queue: this.queue, count: batch.length, error: err });
              this.scheduleAckRetry();
            } else {
              this.logger.error("ack refused; the jobs will run again when their leases end", { queue: this.queue, count: batch.length, error: err });
            }
          },
        ),
      );
    }
  }

  private settleAckedInClaim(batch: PendingAck[], acked: AckResult[] | undefined): void {
    if (acked === undefined) {
      // An older dlqd ignores `ack` in a claim: nothing was acked. Resend by /ack from now on.
      this.logger.warn("dlqd does not take acks in claims; acking by /ack", { queue: this.queue });
      this.ackInClaim = false;
      this.requeueAcks(batch, false);
      this.schedulePump();
      return;
    }
    this.settleAckResults(batch, acked);
  }

  private settleAckResults(batch: PendingAck[], results: AckResult[]): void {
    const again: PendingAck[] = [];
    batch.forEach((a, i) => {
      const r = results[i];
      if (r === undefined || r.status === 200) return;
      const fields = { queue: this.queue, id: a.id, job_type: a.run.message.job_type, status: r.status, error: r.error };
      if (r.status === 409 || r.status === 404) {
        this.logger.warn("ack refused, lease lost: the job may run again", fields);
        this.lose(a.run, new LeaseLostError(r.status, r.status === 409 ? "lease-lost" : "message-not-found", r.error ?? "lease lost"));
      } else if (r.status >= 500) {
        again.push(a);
      } else {
        this.logger.error("ack refused", fields);
      }
    });
    if (again.length > 0) {
      this.logger.warn("ack not applied (5xx); kept for resending while the leases last", { queue: this.queue, count: again.length });
      this.requeueAcks(again);
      this.scheduleAckRetry();
    }
  }

  private scheduleAckRetry(): void {
    if (this.ackRetry !== undefined) return;
    this.ackFailures++;
    const delay = fullJitter(this.ackFailures - 1, BACKOFF_BASE_S, RESEND_CAP_S);
    this.ackRetry = setTimeout(() => {
      this.ackRetry = undefined;
      this.schedulePump();
    }, delay);
  }

  // ---- jobs ----

  private start(message: ClaimedMessage, receivedAt: number): void {
    const controller = new AbortController();
    const run: Run = {
      job: undefined as unknown as Job,
      message,
      controller,
      state: "running",
      leaseSeconds: this.visibilityTimeout,
      deadline: receivedAt + this.visibilityTimeout * 1000,
      timer: undefined,
    };
    run.job = new Job(message, controller.signal, {
      extend: (seconds) => this.extendLease(run, seconds, undefined, true),
      saveCheckpoint: (text) => this.extendLease(run, run.leaseSeconds, text, false),
      recordEffect: (key, state, description, result) => this.recordEffect(run, key, state, description, result),
    });
    this.running.set(message.lease_id, run);
    this.scheduleBeat(run);
    if (run.job.trial !== undefined) {
      // A trial run: only a handler that opted in runs it.
      const type = message.job_type ?? "";
      const handler = this.trialTypes.has(type) ? this.handlers.get(type) : undefined;
      if (handler === undefined) {
        this.finish(run, new NoTrialHandler(`no handler of worker ${this.workerName} takes trial runs of job type ${JSON.stringify(message.job_type)}`), false);
        return;
      }
      Promise.resolve()
        .then(() => handler(run.job))
        .then(
          () => this.finish(run, undefined, true),
          (err) => this.finish(run, err, false),
        );
      return;
    }
    const handler = (message.job_type !== null ? this.handlers.get(message.job_type) : undefined) ?? this.defaultHandler;
    if (handler === undefined) {
      this.logger.warn(`no handler for job type ${JSON.stringify(message.job_type)}; released for ${UNHANDLED_TYPE_DELAY_S} s`, { queue: this.queue, id: message.id });
      this.finish(run, new Snoozed(UNHANDLED_TYPE_DELAY_S), false);
      return;
    }
    Promise.resolve()
      .then(() => handler(run.job))
      .then(
        () => this.finish(run, undefined, true),
        (err) => this.finish(run, err, false),
      );
  }

  private scheduleBeat(run: Run, ms = (run.leaseSeconds * 1000) / 3): void {
    if (run.timer !== undefined) clearTimeout(run.timer);
    run.timer = setTimeout(() => {
      run.timer = undefined;
      if (run.state !== "running") return;
      this.extendLease(run, run.leaseSeconds, undefined, false, 0).then(
        () => {
          if (run.state === "running") this.scheduleBeat(run);
        },
        (err) => {
          if (run.state !== "running") return;
          const late = performance.now() > run.deadline;
          this.logger.warn(late ? "heartbeat failed and the lease may have ended; dlqd decides at the ack" : "heartbeat failed; trying again", { queue: this.queue, id: run.message.id, error: err });
          this.scheduleBeat(run, Math.min(HEARTBEAT_RETRY_MS, (run.leaseSeconds * 1000) / 6));
        },
      );
    }, ms);
  }

  private async extendLease(run: Run, seconds: number, checkpoint: string | undefined, fromHandler: boolean, retries?: number): Promise<void> {
    if (run.state === "lost") throw run.controller.signal.reason;
    const sentAt = performance.now();
    try {
      if (run.job.trial !== undefined) await this.client.extendTrial(this.queue, run.message.id, run.job.trial, run.message.lease_id, { seconds }, { retries });
      else await this.client.extend(this.queue, run.message.id, run.message.lease_id, { seconds, checkpoint }, { retries });
    } catch (err) {
      if (err instanceof LeaseLostError || err instanceof NotFoundError) this.lose(run, err);
      throw err;
    }
    run.deadline = Math.max(run.deadline, sentAt + seconds * 1000);
    if (fromHandler) {
      run.deadline = sentAt + seconds * 1000;
      run.leaseSeconds = seconds;
      if (run.state === "running") this.scheduleBeat(run);
    }
  }

  /** job.effect's record, under the job's lease (the client resends it after a transport
   * failure: it is fenced). A refusal for the lease (409 lease-lost, or the message gone) loses
   * the job, as a refused extend does, and rejects with it. */
  private async recordEffect(run: Run, key: string, state: EffectState, description: string | undefined, result: string | undefined): Promise<EffectRecord> {
    if (run.state === "lost") throw run.controller.signal.reason;
    try {
      return await this.client.recordEffect(this.queue, run.message.id, run.message.lease_id, key, state, { description, result });
    } catch (err) {
      // 404 "not-found" is no such route (a dlqd before issue 36), not a lost message.
      if (err instanceof LeaseLostError || (err instanceof NotFoundError && err.slug !== "not-found")) this.lose(run, err);
      throw err;
    }
  }

  /** The lease is gone: another worker may run the job. Abort the handler; never ack or fail it. */
  private lose(run: Run, err: DlqError): void {
    if (run.state === "lost" || run.state === "cancelled") return;
    const wasRunning = run.state === "running";
    run.state = "lost";
    if (run.timer !== undefined) clearTimeout(run.timer);
    run.timer = undefined;
    if (wasRunning) this.logger.warn(run.job.trial !== undefined ? "trial lease lost (the trial ended: expired, or answered before): the handler is signalled and its result will be dropped" : "lease lost: the handler is signalled and its result will be dropped", { queue: this.queue, id: run.message.id, job_type: run.message.job_type, trial: run.job.trial });
    run.controller.abort(err);
  }

  private finish(run: Run, err: unknown, ok: boolean): void {
    if (run.timer !== undefined) clearTimeout(run.timer);
    run.timer = undefined;
    this.running.delete(run.message.lease_id);
    const fields = { queue: this.queue, id: run.message.id, job_type: run.message.job_type, trial: run.job.trial };
    if (run.state === "lost") {
      this.logger.info("handler ended after its lease was lost; result dropped", fields);
    } else if (run.state === "cancelled") {
      this.logger.info("handler ended after shutdown gave up its job; result dropped", fields);
    } else if (run.job.trial !== undefined) {
      run.state = "done";
      this.finishTrial(run, err, ok, fields);
    } else {
      run.state = "done";
      if (ok) {
        this.acks.push({ id: run.message.id, leaseId: run.message.lease_id, deadline: run.deadline, run, failedSends: 0 });
      } else if (err instanceof Snoozed) {
        this.deliver(run, "release", { delay_seconds: err.seconds });
      } else {
        const outcome = outcomeOf(err);
        if (outcome.kind === "release") {
          this.deliver(run, "release", { delay_seconds: outcome.delaySeconds });
        } else {
          if (outcome.droppedFingerprint !== undefined) this.logger.warn("fingerprint left out: it must be 1 to 128 of A-Z a-z 0-9 _ . : -", { ...fields, fingerprint: outcome.droppedFingerprint });
          this.logger.info("job failed", { ...fields, error: outcome.body.error, error_class: outcome.body.error_class });
          this.deliver(run, "fail", outcome.body);
        }
      }
    }
    this.schedulePump();
    if (this.running.size === 0) this.notifyIdle();
  }

  /** A trial's outcome is its answer: succeed or fail on the trial's routes, with the side
   * effects it would have caused. Never an ack, never a release. */
  private finishTrial(run: Run, err: unknown, ok: boolean, fields: Record<string, unknown>): void {
    const wouldEffects = run.job.wouldEffects.slice(0, MAX_WOULD_EFFECTS).map((e) => ({ key: e.key, description: e.description }));
    if (ok) {
      this.logger.info("trial would succeed", fields);
      this.deliver(run, "trial-succeed", { would_effects: wouldEffects });
      return;
    }
    let body: TrialFailBody;
    if (err instanceof NoTrialHandler) {
      body = { error: cutUtf8(err.message, ERROR_MAX_BYTES), error_class: "unknown" };
    } else if (err instanceof Snooze) {
      // A trial is answered at once: there is no later attempt to give it back to.
      body = { error: `snoozed during a trial (Snooze ${err.seconds} s): a trial run cannot be given back for later`, error_class: "unknown" };
    } else {
      const outcome = outcomeOf(err);
      body = outcome.kind === "fail" ? { ...outcome.body } : { error: "snoozed during a trial", error_class: "unknown" };
    }
    body.would_effects = wouldEffects;
    this.logger.info("trial would fail", { ...fields, error: body.error, error_class: body.error_class });
    this.deliver(run, "trial-fail", body);
  }

  private releaseUnstarted(message: ClaimedMessage): void {
    if (typeof message.trial_id === "number") return; // never given back: it expires on dlqd
    const run: Run = {
      job: undefined as unknown as Job,
      message,
      controller: new AbortController(),
      state: "cancelled",
      leaseSeconds: this.visibilityTimeout,
      deadline: performance.now() + this.visibilityTimeout * 1000,
      timer: undefined,
    };
    this.deliver(run, "release", {});
  }

  /** Sends a fail, release or trial answer, keeping it for resending while dlqd is unreachable and
   * the lease lasts. */
  private deliver(run: Run, kind: Delivery, body: FailBody | TrialFailBody | { delay_seconds?: number }): void {
    const id = run.message.id;
    const leaseId = run.message.lease_id;
    const trialId = run.job.trial;
    const fields = { queue: this.queue, id, job_type: run.message.job_type, trial: trialId };
    const signal = this.finalController.signal;
    const task = async () => {
      let payload = body;
      let minimal = false;
      for (let n = 1; ; n++) {
        try {
          if (kind === "fail") await this.client.fail(this.queue, id, leaseId, payload as FailBody, { signal, retries: 0 });
          else if (kind === "trial-succeed") await this.client.succeedTrial(this.queue, id, trialId!, leaseId, { wouldEffects: (payload as TrialFailBody).would_effects }, { signal, retries: 0 });
          else if (kind === "trial-fail") await this.client.failTrial(this.queue, id, trialId!, leaseId, payload as TrialFailBody, { signal, retries: 0 });
          else await this.client.release(this.queue, id, leaseId, { delaySeconds: (payload as { delay_seconds?: number }).delay_seconds }, { signal, retries: 0 });
          return;
        } catch (err) {
          if (kind !== "release" && err instanceof ValidationError && !minimal) {
            // A dlqd with other limits (more would-effects than it keeps, say): the outcome
            // matters more than the detail, so resend it plainly.
            const full = payload as FailBody;
            this.logger.warn(`${kind} refused (422); resending without the details`, { ...fields, errors: err.errors });
            payload = kind === "trial-succeed" ? {} : { error: full.error, error_class: full.error_class };
            minimal = true;
            n = 0;
            continue;
          }
          if (err instanceof LeaseLostError || err instanceof NotFoundError) {
            this.logger.warn(trialId !== undefined ? `${kind} refused, lease lost (the trial expired, or an earlier try was applied)` : `${kind} refused, lease lost (or an earlier try was applied): the job may run again elsewhere`, { ...fields, status: err.status });
            if (err instanceof LeaseLostError) this.lose(run, err);
            return;
          }
          if (transient(err) && !signal.aborted && performance.now() < run.deadline) {
            const delay = fullJitter(n - 1, BACKOFF_BASE_S, RESEND_CAP_S);
            this.logger.warn(`${kind} failed: dlqd unreachable or unavailable; kept for resending while the lease lasts`, { ...fields, error: err, retry_in_ms: Math.round(delay) });
            await sleep(Math.min(delay, Math.max(0, run.deadline - performance.now())), signal).catch(() => {});
            continue;
          }
          this.logger.error(`${kind} could not be delivered; the job comes back when its lease ends`, { ...fields, error: err });
          return;
        }
      }
    };
    this.track(task());
  }

  private track(p: Promise<void>): void {
    const tracked: Promise<void> = p.catch((err) => this.logger.error("internal error", { queue: this.queue, error: err })).finally(() => this.deliveries.delete(tracked));
    this.deliveries.add(tracked);
  }

  // ---- shutdown ----

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private async drain(): Promise<void> {
    if (this.stopAt === 0) this.stopAt = performance.now();
    const deadline = this.stopAt + this.shutdownTimeoutMs;
    if (this.running.size > 0) {
      this.logger.info("waiting for running jobs", { queue: this.queue, running: this.running.size, timeout_s: Math.round((deadline - performance.now()) / 1000) });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - performance.now())))),
      ]);
      clearTimeout(timer);
    }
    for (const run of [...this.running.values()]) {
      if (run.state !== "running") continue;
      run.state = "cancelled";
      if (run.timer !== undefined) clearTimeout(run.timer);
      run.timer = undefined;
      const trial = run.job.trial;
      this.logger.warn(trial !== undefined ? "shutdown timeout: trial cancelled (it expires on dlqd)" : "shutdown timeout: job cancelled and its lease released", { queue: this.queue, id: run.message.id, job_type: run.message.job_type, trial });
      run.controller.abort(new ShutdownError("the worker's shutdown timeout ended"));
      if (trial === undefined) this.deliver(run, "release", {});
    }
    // Deliver what is left (acks, fails, releases), for a few seconds at most.
    const finalDeadline = performance.now() + FINAL_GRACE_MS;
    if (this.ackRetry !== undefined) {
      clearTimeout(this.ackRetry);
      this.ackRetry = undefined;
    }
    while ((this.acks.length > 0 || this.deliveries.size > 0) && performance.now() < finalDeadline) {
      if (this.acks.length > 0 && this.ackRetry === undefined) this.sendAcks();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...this.deliveries]),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(finalDeadline - performance.now(), this.ackRetry ? 1000 : FINAL_GRACE_MS))))),
      ]);
      clearTimeout(timer);
      if (this.ackRetry !== undefined) {
        clearTimeout(this.ackRetry);
        this.ackRetry = undefined;
      }
    }
    if (this.acks.length > 0 || this.deliveries.size > 0) {
      this.logger.warn("shutdown: some acks, failures or releases could not be delivered; those jobs come back when their leases end", { queue: this.queue, acks: this.acks.length, others: this.deliveries.size });
    }
    this.finalController.abort(new ShutdownError("the worker stopped"));
  }
}

/** Internal: a trial of a type whose handler did not opt in (a claim never asks for one). */
class NoTrialHandler extends Error {}

/** Internal: release without failure (a job type this worker has no handler for). */
class Snoozed extends Error {
  constructor(readonly seconds: number) {
    super(`released for ${seconds} s`);
  }
}

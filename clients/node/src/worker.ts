// Worker: the claim loop (one long-poll claim asking for the free slots), a heartbeat timer per
// job, acks that ride on the next claim only when one is about to go out, failures and releases
// kept for resending while their lease lasts, and a shutdown that gives unfinished leases back.

import * as os from "node:os";
import { performance } from "node:perf_hooks";
import { Client, ClientOptions } from "./client.js";
import { DlqError, LeaseLostError, NotFoundError, TransportError, UnavailableError, ValidationError } from "./errors.js";
import { FailBody, cutUtf8, outcomeOf } from "./failures.js";
import { Job } from "./job.js";
import { Logger, defaultLogger } from "./logger.js";
import { fullJitter, sleep } from "./transport.js";
import type { AckResult, ClaimedMessage } from "./types.js";

export type Handler<P = any> = (job: Job<P>) => unknown;

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
  private claimInFlight = false;
  private ackInClaim = true;
  private loopWaiter: (() => void) | undefined;
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

  /** Registers the handler for one job type. Return (or resolve) = succeed; throw = fail. */
  handle<P = any>(jobType: string, handler: Handler<P>): this {
    if (typeof handler !== "function") throw new TypeError("dlq: a handler must be a function");
    this.handlers.set(jobType, handler as Handler);
    return this;
  }

  /** Claims and runs jobs until stop() or SIGTERM/SIGINT; resolves when shutdown is complete. */
  run(): Promise<void> {
    if (this.started) throw new Error("dlq: run() was already called on this worker");
    this.started = true;
    if (this.handlers.size === 0 && this.defaultHandler === undefined) throw new Error("dlq: register a handler (worker.handle) or set worker.defaultHandler first");
    if (this.defaultHandler === undefined && this.handlers.size > 100) throw new Error("dlq: at most 100 job types per worker (set a defaultHandler to claim every type)");
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
      this.wakeLoop();
    }
    return this.finished ?? Promise.resolve();
  }

  private async lifecycle(): Promise<void> {
    const off = this.handleSignals ? this.installSignals() : () => {};
    try {
      this.logger.info("worker started", { queue: this.queue, concurrency: this.concurrency, worker: this.workerName });
      await sleep(Math.random() * this.startupDelayMs, this.stopController.signal).catch(() => {});
      await this.claimLoop();
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

  private async claimLoop(): Promise<void> {
    const jobTypes = this.defaultHandler === undefined ? [...this.handlers.keys()] : undefined;
    let failures = 0;
    while (!this.stopping) {
      const free = this.concurrency - this.running.size;
      if (free <= 0) {
        await this.waitForSlot();
        continue;
      }
      const acks = this.ackInClaim ? this.takeAcks() : [];
      this.claimInFlight = true;
      let answer;
      try {
        answer = await this.client.claim(
          this.queue,
          {
            waitSeconds: this.waitSeconds,
            visibilityTimeout: this.visibilityTimeout,
            worker: this.workerName,
            workerVersion: this.workerVersion,
            jobTypes,
            max: Math.min(free, 100),
            ack: acks.length > 0 ? acks.map((a) => ({ id: a.id, lease_id: a.leaseId })) : undefined,
          },
          { signal: this.stopController.signal, retries: 0 },
        );
      } catch (err) {
        this.claimInFlight = false;
        this.requeueAcks(acks);
        if (this.stopping) break;
        failures++;
        const delay = fullJitter(failures - 1, BACKOFF_BASE_S, BACKOFF_CAP_S);
        const fields = { queue: this.queue, error: err, retry_in_ms: Math.round(delay) };
        if (transient(err)) this.logger.warn("claim failed: dlqd unreachable or unavailable; backing off", fields);
        else this.logger.error("claim refused; backing off", fields);
        this.schedulePump(); // acks go by /ack meanwhile
        await sleep(delay, this.stopController.signal).catch(() => {});
        continue;
      }
      this.claimInFlight = false;
      if (failures > 0) this.logger.info("claiming again", { queue: this.queue });
      failures = 0;
      // A parked claim's leases start when dlqd answers, not when the claim was sent.
      const receivedAt = performance.now();
      if (acks.length > 0) this.settleAckedInClaim(acks, answer.acked);
      for (const message of answer.messages) {
        if (this.stopping) this.releaseUnstarted(message);
        else this.start(message, receivedAt);
      }
      if (this.acks.length > 0) this.schedulePump();
    }
  }

  private waitForSlot(): Promise<void> {
    return new Promise((resolve) => {
      this.loopWaiter = resolve;
    });
  }

  private wakeLoop(): void {
    const w = this.loopWaiter;
    this.loopWaiter = undefined;
    w?.();
  }

  /** Runs once per turn of the event loop after jobs finish: a claim about to go out (a slot
   * free, the loop waiting for one) takes the acks; otherwise they go by /ack at once. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      const claimWillGo = this.loopWaiter !== undefined && !this.stopping && this.ackInClaim && this.running.size < this.concurrency;
      if (claimWillGo) this.wakeLoop();
      else if (this.acks.length > 0) this.sendAcks();
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
    });
    this.running.set(message.lease_id, run);
    this.scheduleBeat(run);
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
      await this.client.extend(this.queue, run.message.id, run.message.lease_id, { seconds, checkpoint }, { retries });
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

  /** The lease is gone: another worker may run the job. Abort the handler; never ack or fail it. */
  private lose(run: Run, err: DlqError): void {
    if (run.state === "lost" || run.state === "cancelled") return;
    const wasRunning = run.state === "running";
    run.state = "lost";
    if (run.timer !== undefined) clearTimeout(run.timer);
    run.timer = undefined;
    if (wasRunning) this.logger.warn("lease lost: the handler is signalled and its result will be dropped", { queue: this.queue, id: run.message.id, job_type: run.message.job_type });
    run.controller.abort(err);
  }

  private finish(run: Run, err: unknown, ok: boolean): void {
    if (run.timer !== undefined) clearTimeout(run.timer);
    run.timer = undefined;
    this.running.delete(run.message.lease_id);
    const fields = { queue: this.queue, id: run.message.id, job_type: run.message.job_type };
    if (run.state === "lost") {
      this.logger.info("handler ended after its lease was lost; result dropped", fields);
    } else if (run.state === "cancelled") {
      this.logger.info("handler ended after shutdown released its job; result dropped", fields);
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

  private releaseUnstarted(message: ClaimedMessage): void {
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

  /** Sends a fail or release, keeping it for resending while dlqd is unreachable and the lease lasts. */
  private deliver(run: Run, kind: "fail" | "release", body: FailBody | { delay_seconds?: number }): void {
    const id = run.message.id;
    const leaseId = run.message.lease_id;
    const fields = { queue: this.queue, id, job_type: run.message.job_type };
    const signal = this.finalController.signal;
    const task = async () => {
      let payload = body;
      let minimal = false;
      for (let n = 1; ; n++) {
        try {
          if (kind === "fail") await this.client.fail(this.queue, id, leaseId, payload as FailBody, { signal, retries: 0 });
          else await this.client.release(this.queue, id, leaseId, { delaySeconds: (payload as { delay_seconds?: number }).delay_seconds }, { signal, retries: 0 });
          return;
        } catch (err) {
          if (kind === "fail" && err instanceof ValidationError && !minimal) {
            const full = payload as FailBody;
            this.logger.warn("fail refused (422); resending with error and class only", { ...fields, errors: err.errors });
            payload = { error: full.error, error_class: full.error_class };
            minimal = true;
            n = 0;
            continue;
          }
          if (err instanceof LeaseLostError || err instanceof NotFoundError) {
            this.logger.warn(`${kind} refused, lease lost (or an earlier try was applied): the job may run again elsewhere`, { ...fields, status: err.status });
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
      this.logger.warn("shutdown timeout: job cancelled and its lease released", { queue: this.queue, id: run.message.id, job_type: run.message.job_type });
      run.controller.abort(new ShutdownError("the worker's shutdown timeout ended"));
      this.deliver(run, "release", {});
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

/** Internal: release without failure (a job type this worker has no handler for). */
class Snoozed extends Error {
  constructor(readonly seconds: number) {
    super(`released for ${seconds} s`);
  }
}

"""dlq.Worker: the claim loop, handler threads, heartbeats, acks and fails, and shutdown.

Threads: run()'s own thread claims (one long-poll at a time, asking for as many messages as there
are free slots); when a handler opted in to trial runs, a second claim thread does the same with
`"trials": true` for those types, sharing the slots (_slots_for); `concurrency` handler threads
run jobs; one maintenance thread sends heartbeats and resends what dlqd could not take; on the
main thread a watcher (_signals.py) turns SIGTERM/SIGINT into stop(). One lock guards the shared
state; no request is ever made while holding it."""

from __future__ import annotations

import logging
import os
import queue as queue_module
import random
import socket
import threading
import time
from typing import Any, Callable

from . import _signals
from .client import Client
from .errors import (DlqError, LeaseLostError, NotFoundError, TransportError, UnavailableError,
                     ValidationError)
from .failures import Snooze, cut_utf8, fail_body, minimal_fail_body, ERROR_BYTES
from .job import MAX_LEASE, Job

Handler = Callable[[Job], Any]

BACKOFF_BASE = 0.2   # claim back-off when dlqd is down or answers 5xx: doubling from this ...
BACKOFF_CAP = 30.0   # ... to this, full jitter
RESEND_CAP = 5.0     # undelivered acks/fails are retried at least this often while leases last
NO_HANDLER_DELAY = 60  # a job of a type without a handler is released for this long
MAX_JOB_TYPES = 100
TRIAL_ROOM = 10  # slots an idle main loop's parked claim leaves unheld for a batch of trials
MAX_WOULD_EFFECTS = 100  # dlqd's default limits.max_effects_per_message: a trial answer's most


def _retryable(e: DlqError) -> bool:
    """Worth trying again later: no answer, 503, or another 5xx."""
    return isinstance(e, (TransportError, UnavailableError)) or (e.status or 0) >= 500


class Worker:
    """Runs handlers for the jobs of one queue.

        worker = dlq.Worker("emails", concurrency=8)

        @worker.handler("send_email")
        def send_email(job): ...

        worker.run()   # until SIGTERM, SIGINT or worker.stop()
    """

    def __init__(self, queue: str, concurrency: int = 10, *, client: Client | None = None,
                 url: str | None = None, token: str | None = None, wait_seconds: int = 20,
                 visibility_timeout: int = 30, worker_name: str | None = None,
                 worker_version: str | None = None, shutdown_timeout: float = 25.0, startup_delay: float = 1.0,
                 handle_signals: bool = True, logger: logging.Logger | None = None) -> None:
        if not isinstance(concurrency, int) or not 1 <= concurrency <= 1000:
            raise ValueError("concurrency is 1 to 1,000")
        if not isinstance(wait_seconds, int) or not 0 <= wait_seconds <= 60:
            raise ValueError("wait_seconds is a whole number 0 to 60")
        if not isinstance(visibility_timeout, int) or not 1 <= visibility_timeout <= MAX_LEASE:
            raise ValueError(f"visibility_timeout is a whole number 1 to {MAX_LEASE}")
        self.queue = queue
        self.concurrency = concurrency
        self.log = logger or (client.log if client else logging.getLogger("dlq"))
        self.client = client or Client(url, token, logger=self.log)
        self.wait_seconds = wait_seconds
        self.visibility_timeout = visibility_timeout
        name = worker_name or f"{socket.gethostname()}:{os.getpid()}"
        self.worker_name = name.encode("utf-8")[:128].decode("utf-8", "ignore")
        # Each attempt entry keeps it: which build of the handlers ran the attempt.
        if worker_version is not None and (not isinstance(worker_version, str)
                                           or len(worker_version.encode("utf-8")) > 64):
            raise ValueError("worker_version is a string of at most 64 bytes")
        self.worker_version = worker_version
        self.shutdown_timeout = shutdown_timeout
        self.startup_delay = startup_delay
        self.handle_signals = handle_signals
        self._handlers: dict[str, Handler] = {}
        self._trial_types: set[str] = set()  # handlers that opted in to trial runs
        self._default: Handler | None = None

        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)     # slots freed, stop
        self._maint = threading.Condition(self._lock)    # outbox filled, maintenance stop
        self._stop_event = threading.Event()
        self._stopping = False
        self._stop_at = 0.0
        self._running = False
        self._active = 0                 # jobs handed to handler threads and not yet returned
        self._delivering = 0             # outcomes being sent from handler threads right now
        self._leased: dict[str, Job] = {}  # jobs whose lease this process holds, by lease id
        self._ride: list[Job] = []       # acks waiting for the main loop's claim about to go out
        # Per claim loop ("main"; "trials" when a handler opted in): idle | ready | waiting |
        # flight | backoff | ended, and the slots its claim in flight asked for.
        self._loop_state = {"main": "idle", "trials": "ended"}
        self._reserved = {"main": 0, "trials": 0}
        self._turn = "main"              # who claims a last free slot both loops want
        self._trial_burst = False        # the trials loop's last answer brought trials
        self._acks_ride = True           # False once a claim answer came back without "acked"
        self._outbox: list[tuple[str, Job, Any]] = []  # ("ack"|"fail"|"release", job, body)
        self._outbox_failures = 0
        self._outbox_next = 0.0
        self._maint_stop = False
        self._jobs: queue_module.SimpleQueue[Job | None] = queue_module.SimpleQueue()
        self._claim_conn = None
        self._trial_conn = None

    # -- registration ----------------------------------------------------------------------

    def handler(self, job_type: str, *, trials: bool = False) -> Callable[[Handler], Handler]:
        """Decorator: `fn(job)` runs the jobs of this type. Returning succeeds the job; raising
        fails it (docs/clients.md, "Exceptions"). `trials=True` also gives it the trial runs of
        this type that operators start: `job.trial` is set, `job.effect` causes no side effect
        and the outcome is only reported (docs/clients.md, "Trial runs")."""
        if not isinstance(job_type, str) or not job_type:
            raise ValueError("a job type is a non-empty string")
        if not isinstance(trials, bool):
            raise ValueError("trials is True or False")

        def register(fn: Handler) -> Handler:
            self._handlers[job_type] = fn
            if trials:
                self._trial_types.add(job_type)
            else:
                self._trial_types.discard(job_type)
            return fn
        return register

    def default_handler(self, fn: Handler) -> Handler:
        """Decorator (or call): `fn(job)` runs every job without a handler of its own type.
        With one, the worker claims jobs of every type (it sends no job_types)."""
        self._default = fn
        return fn

    # -- lifecycle -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stops claiming (a parked claim ends now), lets running handlers finish for up to
        shutdown_timeout, then releases the rest; run() returns after that. Any thread."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            self._stop_at = time.monotonic()
            self._cond.notify_all()
        self._stop_event.set()
        for conn in (self._claim_conn, self._trial_conn):
            if conn is not None:
                conn.abort()

    def run(self) -> None:
        """Claims and runs jobs until stop(), SIGTERM or SIGINT (signals only when run() is on
        the main thread). A second signal exits the process at once."""
        if self._default is None and not self._handlers:
            raise ValueError("register a handler (worker.handler(type)) or a default_handler")
        if self._default is None and len(self._handlers) > MAX_JOB_TYPES:
            raise ValueError(f"at most {MAX_JOB_TYPES} job types per worker (or a default_handler)")
        if len(self._trial_types) > MAX_JOB_TYPES:
            raise ValueError(f"at most {MAX_JOB_TYPES} job types take trial runs per worker")
        with self._lock:
            if self._running:
                raise RuntimeError("this worker is already running")
            self._running = True
            stopped_early = self._stopping
            trial_types = sorted(self._trial_types)
            if trial_types:
                self._loop_state["trials"] = "idle"
        self._claim_conn = self.client.connection()
        if trial_types:
            self._trial_conn = self.client.connection()
        if stopped_early:
            self._claim_conn.abort()
            if self._trial_conn is not None:
                self._trial_conn.abort()
        restore = None
        if self.handle_signals and threading.current_thread() is threading.main_thread():
            restore = _signals.install(self.stop, self.log, self.shutdown_timeout)
        threads = [threading.Thread(target=self._handler_thread, name=f"dlq-handler-{i}",
                                    daemon=True) for i in range(self.concurrency)]
        maintenance = threading.Thread(target=self._maintenance_thread, name="dlq-maintenance",
                                       daemon=True)
        trial_loop = threading.Thread(target=self._trial_thread, name="dlq-trials", daemon=True)
        try:
            for t in threads:
                t.start()
            maintenance.start()
            # Many workers restarted at once (a deploy) should not claim in lock-step.
            self._stop_event.wait(random.uniform(0, max(0.0, self.startup_delay)))
            self.log.info("worker %s on queue %s, concurrency %d%s", self.worker_name,
                          self.queue, self.concurrency,
                          f", trial runs of {trial_types}" if trial_types else "")
            if trial_types:
                trial_loop.start()
            self._claim_loop("main")
            if trial_types:
                trial_loop.join(timeout=10)
            self._drain_handlers()
        finally:
            with self._lock:
                self._maint_stop = True
                self._maint.notify_all()
            for _ in threads:
                self._jobs.put(None)
            maintenance.join(timeout=5)
            self._flush_outbox()
            self._claim_conn.close()
            if self._trial_conn is not None:
                self._trial_conn.close()
            self.client.close_thread_connection()
            if restore:
                restore()
            self.log.info("worker %s stopped", self.worker_name)

    # -- claiming --------------------------------------------------------------------------

    def _trial_thread(self) -> None:
        try:
            self._claim_loop("trials")
        except Exception:  # never expected; the main loop goes on
            self.log.exception("trial claim loop")
        finally:
            with self._lock:
                self._loop_state["trials"] = "ended"
                self._reserved["trials"] = 0
                self._trial_burst = False
                self._cond.notify_all()
            self.client.close_thread_connection()

    def _slots_for(self, loop: str) -> int:
        """(Lock held.) How many slots `loop` may claim now. A claim in flight holds the slots it
        asked for until its answer is dispatched, so the two loops together never ask for more
        than `concurrency`. While the other loop has no claim out it will want slots too: this
        one leaves it one, and of a single free slot they take turns (the loop whose claim came
        back last yields), so neither can starve the other. An idle trials loop parks for one
        slot only (_claim_loop); once an answer brings trials it goes first, without parking,
        until an answer brings none (_trial_burst)."""
        free = (self.concurrency - self._active - self._reserved["main"]
                - self._reserved["trials"])
        if free <= 0:
            return 0
        other = "trials" if loop == "main" else "main"
        if self._trial_burst and self._loop_state["trials"] != "ended":
            # Trials are coming in (an operator started some): the trials loop goes first.
            if loop == "trials":
                return free
            if self._loop_state["trials"] != "flight":
                return 0
        if self._loop_state[other] in ("flight", "ended"):
            return free
        if free >= 2:
            return free - 1
        return 1 if self._turn == loop else 0

    def _claim_loop(self, loop: str) -> None:
        trials = loop == "trials"
        conn = self._trial_conn if trials else self._claim_conn
        if trials:
            job_types: list[str] | None = sorted(self._trial_types)
        else:
            job_types = None if self._default is not None else sorted(self._handlers)
        other = "main" if trials else "trials"
        failures = 0
        idle = True  # the loop's last answer was empty: its next claim will likely park
        while True:
            with self._lock:
                self._loop_state[loop] = "ready"
                while not self._stopping:
                    free = self._slots_for(loop)
                    if free > 0:
                        break
                    self._loop_state[loop] = "waiting"
                    if self._ride and not trials:
                        # No claim goes out now: the acks waiting for one go by /ack instead.
                        self._outbox.extend(("ack", j, None) for j in self._ride)
                        self._ride = []
                        self._outbox_next = 0.0
                        self._maint.notify_all()
                    # (A main-loop claim that holds the slots trials wait for is not cut short:
                    # one already answering with messages would leave them leased to nobody
                    # until their lease ran out. It ends within wait_seconds.)
                    self._cond.wait()
                if self._stopping:
                    self._loop_state[loop] = "idle"
                    return
                # A parked claim holds its slots for up to wait_seconds: an idle trials loop
                # parks for one; after an answer with trials it takes every slot it may, without
                # parking, for the rest of a batch an operator started.
                # An idle main loop leaves up to TRIAL_ROOM slots unheld while a trials loop
                # exists, so a batch of trials can start side by side; the first message of a
                # burst wakes it, and it claims the rest right after.
                burst = trials and self._trial_burst
                if not trials and idle and self._loop_state["trials"] != "ended":
                    free = max(1, free - min(free - 1, TRIAL_ROOM))
                free = min(free, 100 if burst or not trials else 1)
                wait = 0 if burst else self.wait_seconds
                self._reserved[loop] = free
                acks: list[Job] = []
                if not trials:  # acks ride on the main loop's claims only
                    acks, self._ride = self._ride, []
                    if self._acks_ride:
                        acks.extend(self._take_outbox_acks())
                self._loop_state[loop] = "flight"
            try:
                answer = self.client.claim(
                    self.queue, max=free, wait_seconds=wait,
                    visibility_timeout=self.visibility_timeout, worker=self.worker_name,
                    worker_version=self.worker_version, job_types=job_types,
                    ack=[{"id": j.id, "lease_id": j.lease_id} for j in acks] or None,
                    trials=True if trials else None, retries=0, conn=conn)
            except DlqError as e:
                with self._lock:
                    self._loop_state[loop] = "backoff"
                    self._reserved[loop] = 0
                    self._turn = other
                    if trials:
                        self._trial_burst = False
                    self._cond.notify_all()
                    stopping = self._stopping
                if acks:
                    # Applied or not, nobody knows: resend them by /ack (a repeat answers 200).
                    self._to_outbox([("ack", j, None) for j in acks], soon=True)
                if stopping:
                    return
                failures += 1
                delay = random.uniform(0, min(BACKOFF_CAP,
                                              BACKOFF_BASE * 2 ** min(failures - 1, 20)))
                level = logging.WARNING if _retryable(e) else logging.ERROR
                self.log.log(level, "%s on %s failed (%s); trying again in %.1f s",
                             "trial claim" if trials else "claim", self.queue, e, delay)
                self._stop_event.wait(delay)
                continue
            except Exception:
                with self._lock:
                    self._loop_state[loop] = "backoff"
                    self._reserved[loop] = 0
                    self._turn = other
                    if trials:
                        self._trial_burst = False
                    self._cond.notify_all()
                if acks:
                    self._to_outbox([("ack", j, None) for j in acks], soon=True)
                self.log.exception("trial claim loop" if trials else "claim loop")
                self._stop_event.wait(1.0)
                continue
            received = time.monotonic()
            with self._lock:
                self._loop_state[loop] = "ready"  # handlers finishing now ride on the next claim
            if failures:
                self.log.info("claiming %sfrom %s again", "trials " if trials else "", self.queue)
                failures = 0
            if acks:
                self._settle_acks(acks, answer.get("acked"))
            messages = answer.get("messages") or []
            idle = not messages
            self._dispatch(messages, received, loop)

    def _dispatch(self, messages: list[dict[str, Any]], received: float, loop: str) -> None:
        jobs = [Job(self, m, received) for m in messages]
        with self._lock:
            # The claim's reservation becomes the jobs it brought, in one step: the other loop
            # never sees those slots free in between.
            self._reserved[loop] = 0
            self._turn = "trials" if loop == "main" else "main"
            if loop == "trials":
                self._trial_burst = any(job.trial is not None for job in jobs)
            late = self._stopping
            if not late:
                for job in jobs:
                    self._leased[job.lease_id] = job
                self._active += len(jobs)
            self._cond.notify_all()
        if late:
            # Claimed as stop() came: give them straight back (a trial is never given back: it
            # expires on dlqd).
            for job in jobs:
                if job.trial is None:
                    self._release_now(job, 0)
            return
        for job in jobs:
            self._jobs.put(job)

    # -- handlers --------------------------------------------------------------------------

    def _handler_thread(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                self.client.close_thread_connection()
                return
            try:
                self._run_job(job)
            except Exception:  # never lose a handler thread
                self.log.exception("job %s", job.id)

    def _run_job(self, job: Job) -> None:
        if job.trial is not None:
            kind, body = self._run_trial(job)
        else:
            kind, body = self._run_handler(job)
        with self._lock:
            self._active -= 1
            state = job._state
            if state == "running":
                job._state = "finished"
            # An ack rides only on a main-loop claim that is about to go out for this slot.
            ride = (kind == "ack" and state == "running" and not self._stopping
                    and self._acks_ride and self._loop_state["main"] in ("ready", "waiting")
                    and self._slots_for("main") > 0)
            if ride:
                self._ride.append(job)
            elif state != "running":
                self._leased.pop(job.lease_id, None)
            else:
                self._delivering += 1
            self._cond.notify_all()
        if state == "lost":
            self.log.warning("%s finished after its lease was lost; not %s", self._name(job),
                             "acked" if kind == "ack" else "sent")
        elif state == "abandoned":
            self.log.warning("%s finished after shutdown gave it up; not sent", self._name(job))
        elif not ride:
            try:
                self._deliver(kind, job, body)
            finally:
                with self._lock:
                    self._delivering -= 1
                    self._cond.notify_all()

    def _run_handler(self, job: Job) -> tuple[str, Any]:
        fn = self._handlers.get(job.job_type or "") or self._default
        if fn is None:
            self.log.warning("no handler for job type %r (job %s); released for %d s",
                             job.job_type, job.id, NO_HANDLER_DELAY)
            return "release", NO_HANDLER_DELAY
        try:
            fn(job)
            return "ack", None
        except Snooze as s:
            return "release", s.seconds
        except BaseException as e:  # a handler's SystemExit is its failure, not ours
            if e.__traceback__ is not None and e.__traceback__.tb_next is not None:
                e.__traceback__ = e.__traceback__.tb_next  # start the stack at the handler
            body = fail_body(e, job.lease_id)
            self.log.warning("job %s (%s) failed: %s", job.id, job.job_type, body["error"])
            return "fail", body

    def _run_trial(self, job: Job) -> tuple[str, Any]:
        """A trial run: only a handler that opted in runs it, and its outcome is the answer."""
        fn = self._handlers.get(job.job_type or "") if job.job_type in self._trial_types else None
        if fn is None:
            body = {"lease_id": job.lease_id, "error_class": "unknown",
                    "error": cut_utf8(f"no handler of worker {self.worker_name} takes trial runs "
                                      f"of job type {job.job_type!r}", ERROR_BYTES)}
        else:
            try:
                fn(job)
                body = {"lease_id": job.lease_id}
                self.log.info("trial %s of job %s (%s) would succeed", job.trial, job.id,
                              job.job_type)
                body["would_effects"] = job.would_effects[:MAX_WOULD_EFFECTS]
                return "trial_succeed", body
            except Snooze as s:
                # A trial is answered at once: there is no later attempt to give it back to.
                body = {"lease_id": job.lease_id, "error_class": "unknown",
                        "error": f"snoozed during a trial (Snooze {s.seconds} s): a trial run "
                                 "cannot be given back for later"}
            except BaseException as e:
                if e.__traceback__ is not None and e.__traceback__.tb_next is not None:
                    e.__traceback__ = e.__traceback__.tb_next
                body = fail_body(e, job.lease_id)
        self.log.info("trial %s of job %s (%s) would fail: %s", job.trial, job.id,
                      job.job_type, body["error"])
        body["would_effects"] = job.would_effects[:MAX_WOULD_EFFECTS]
        return "trial_fail", body

    @staticmethod
    def _name(job: Job) -> str:
        return f"trial {job.trial} of job {job.id}" if job.trial is not None else f"job {job.id}"

    # -- delivering outcomes ---------------------------------------------------------------

    def _deliver(self, kind: str, job: Job, body: Any, retries: int | None = None,
                 keep: bool = True) -> bool:
        """Sends one outcome now. False: dlqd could not take it (kept in the outbox, unless
        `keep` is False: the outbox's own resend, which re-queues what is left itself)."""
        try:
            if kind == "ack":
                results = self.client.ack(self.queue, [{"id": job.id, "lease_id": job.lease_id}],
                                          retries=retries)
                self._settle_acks([job], results)
                return True
            if kind == "fail":
                self._send_fail(job, body, retries)
            elif kind in ("trial_succeed", "trial_fail"):
                self._send_trial_answer(kind, job, body, retries)
            else:
                self.client.release(self.queue, job.id, job.lease_id, delay_seconds=body,
                                    retries=retries)
        except (LeaseLostError, NotFoundError) as e:
            self._lost(job, f"{kind} refused ({e.slug})")
        except DlqError as e:
            if _retryable(e):
                if keep:
                    self.log.warning("%s of %s not delivered (%s); kept while its lease lasts",
                                     kind, self._name(job), e)
                    self._to_outbox([(kind, job, body)])
                return False
            self.log.error("%s of %s refused: %s", kind, self._name(job), e)
        self._done(job)
        return True

    def _send_trial_answer(self, kind: str, job: Job, body: dict[str, Any],
                           retries: int | None) -> None:
        assert job.trial is not None
        call = self.client.succeed_trial if kind == "trial_succeed" else self.client.fail_trial
        try:
            call(self.queue, job.id, job.trial, **body, retries=retries)
        except ValidationError as e:
            # A dlqd with other limits (more would-effects than it keeps, say): the outcome
            # matters more than the detail, so resend it plainly.
            fields = ", ".join(str(x.get("field")) for x in e.errors) or e.detail
            self.log.warning("%s of %s refused (422: %s); resending without the details",
                             kind, self._name(job), fields)
            plain = {k: body[k] for k in ("lease_id", "error", "error_class") if k in body}
            call(self.queue, job.id, job.trial, **plain, retries=retries)

    def _send_fail(self, job: Job, body: dict[str, Any], retries: int | None) -> None:
        try:
            self.client.fail(self.queue, job.id, **body, retries=retries)
        except ValidationError as e:
            fields = ", ".join(str(x.get("field")) for x in e.errors) or e.detail
            self.log.warning("fail of job %s refused (422: %s); resending error and class "
                             "only", job.id, fields)
            self.client.fail(self.queue, job.id, **minimal_fail_body(body), retries=retries)

    def _settle_acks(self, jobs: list[Job], results: Any) -> None:
        """Reads the per-message results of acks (from /ack or a claim's "acked")."""
        if not isinstance(results, list) or len(results) != len(jobs):
            # A claim answer without "acked" comes from a dlqd that applied none of them: from
            # now on every ack goes by /ack.
            with self._lock:
                if self._acks_ride:
                    self.log.warning("dlqd at %s does not take acks in claims; sending them by "
                                     "/ack", self.client.url)
                self._acks_ride = False
            self._to_outbox([("ack", j, None) for j in jobs], soon=True)
            return
        again = []
        for job, result in zip(jobs, results):
            status = result.get("status") if isinstance(result, dict) else None
            if status == 200:
                self._done(job)
            elif status in (404, 409):
                self._lost(job, f"ack refused ({status}: {result.get('error')})")
                self._done(job)
            elif isinstance(status, int) and status >= 500:
                again.append(("ack", job, None))
            else:
                self.log.error("ack of job %s refused: %s", job.id, result)
                self._done(job)
        if again:
            self._to_outbox(again)

    def _lost(self, job: Job, why: str) -> None:
        with self._lock:
            finished = job._state == "finished"
            if job._state == "running":
                job._state = "lost"
        job.cancelled.set()
        self.log.warning("lease of %s lost: %s; %s%s", self._name(job), why,
                         "the trial has ended (expired, or answered before)" if job.trial
                         is not None else "it may run again elsewhere",
                         "" if finished else " (its handler is told by job.cancelled)")

    def _done(self, job: Job) -> None:
        with self._lock:
            self._leased.pop(job.lease_id, None)

    def _to_outbox(self, entries: list[tuple[str, Job, Any]], soon: bool = False) -> None:
        with self._lock:
            self._outbox.extend(entries)
            if soon:
                self._outbox_next = 0.0
            self._maint.notify_all()

    def _take_outbox_acks(self) -> list[Job]:
        """(Lock held.) Undelivered acks still within their lease, to ride on the next claim."""
        now = time.monotonic()
        jobs = [j for kind, j, _ in self._outbox if kind == "ack" and j._deadline > now]
        if jobs:
            self._outbox = [e for e in self._outbox if e[0] != "ack"]
        return jobs

    def _release_now(self, job: Job, delay: int) -> None:
        if job.trial is not None:  # never given back: it expires on dlqd
            self._done(job)
            return
        try:
            self.client.release(self.queue, job.id, job.lease_id, delay_seconds=delay, retries=1)
        except DlqError as e:
            self.log.warning("release of job %s failed (%s); it returns when its lease "
                             "expires", job.id, e)
        self._done(job)

    # -- heartbeats and resends ------------------------------------------------------------

    def _extend(self, job: Job, seconds: int, checkpoint: str | None,
                heartbeat: bool = False) -> None:
        sent = time.monotonic()
        try:
            if job.trial is not None:  # a trial's checkpoints stay in memory
                self.client.extend_trial(self.queue, job.id, job.trial, job.lease_id,
                                         seconds=seconds, retries=0 if heartbeat else None)
            else:
                self.client.extend(self.queue, job.id, job.lease_id, seconds=seconds,
                                   checkpoint=checkpoint, retries=0 if heartbeat else None)
        except (LeaseLostError, NotFoundError) as e:
            self._lost(job, f"extend refused ({e.slug})")
            if not heartbeat:
                raise
            return
        with self._lock:
            job._lease_seconds = seconds
            job._deadline = sent + seconds
            job._next_beat = sent + seconds / 3

    def _record_effect(self, job: Job, key: str, state: str, description: str | None,
                       result: str | None) -> dict[str, Any]:
        """job.effect's record (lease-fenced, so the client resends it after a transport
        failure). A refusal for the lease (409 lease-lost, or the message gone) means the job
        may run elsewhere: it is lost, as for a refused extend, and the error goes on."""
        try:
            return self.client.record_effect(self.queue, job.id, job.lease_id, key, state,
                                             description, result)
        except LeaseLostError as e:
            self._lost(job, f"effect refused ({e.slug})")
            raise
        except NotFoundError as e:
            if e.slug != "not-found":  # "not-found" is no such route: a dlqd before issue 36
                self._lost(job, f"effect refused ({e.slug})")
            raise

    def _maintenance_thread(self) -> None:
        try:
            self._maintain()
        finally:
            self.client.close_thread_connection()

    def _maintain(self) -> None:
        tick = min(0.5, self.visibility_timeout / 6)
        while True:
            with self._lock:
                if self._maint_stop:
                    return
                self._maint.wait(tick)
                if self._maint_stop:
                    return
                now = time.monotonic()
                beats = [j for j in self._leased.values()
                         if j._state == "running" and j._next_beat <= now]
                resend: list[tuple[str, Job, Any]] = []
                if self._outbox and now >= self._outbox_next:
                    resend, self._outbox = self._outbox, []
            for job in beats:
                try:
                    self._extend(job, job._lease_seconds, None, heartbeat=True)
                except DlqError as e:
                    with self._lock:
                        job._next_beat = time.monotonic() + tick
                    self.log.warning("heartbeat of %s failed (%s)", self._name(job), e)
                except Exception:
                    self.log.exception("heartbeat of %s", self._name(job))
            if resend:
                self._resend(resend, retries=0)

    def _resend(self, entries: list[tuple[str, Job, Any]], retries: int) -> None:
        """One try at every undelivered outcome still within its lease; what fails goes back."""
        now = time.monotonic()
        live = []
        for entry in entries:
            if entry[1]._deadline <= now:
                self.log.warning("%s of job %s dropped: its lease ran out before dlqd took "
                                 "it (the job may run again)", entry[0], entry[1].id)
                self._done(entry[1])
            else:
                live.append(entry)
        acks = [j for kind, j, _ in live if kind == "ack"]
        others = [e for e in live if e[0] != "ack"]
        failed: list[tuple[str, Job, Any]] = []
        for start in range(0, len(acks), 1000):
            batch = acks[start:start + 1000]
            try:
                results = self.client.ack(self.queue, [{"id": j.id, "lease_id": j.lease_id}
                                                       for j in batch], retries=retries)
            except DlqError as e:
                if not _retryable(e):
                    self.log.error("acks refused: %s", e)
                    for j in batch:
                        self._done(j)
                    continue
                failed.extend(("ack", j, None) for j in acks[start:])
                failed.extend(others)
                others = []
                break
            self._settle_acks(batch, results)
        for i, (kind, job, body) in enumerate(others):
            try:
                delivered = self._deliver(kind, job, body, retries, keep=False)
            except DlqError:
                delivered = False
            if not delivered:
                failed.extend(others[i:])
                break
        with self._lock:
            if failed:
                self._outbox_failures += 1
                self._outbox.extend(failed)
                self._outbox_next = time.monotonic() + random.uniform(
                    0, min(RESEND_CAP, BACKOFF_BASE * 2 ** min(self._outbox_failures - 1, 20)))
            else:
                self._outbox_failures = 0

    # -- shutdown --------------------------------------------------------------------------

    def _drain_handlers(self) -> None:
        """After stop(): handlers have until shutdown_timeout; the rest are cancelled and their
        leases released (their handlers' later outcomes are not sent)."""
        with self._lock:
            riders, self._ride = self._ride, []
        if riders:
            self._to_outbox([("ack", j, None) for j in riders], soon=True)
        deadline = self._stop_at + self.shutdown_timeout
        with self._lock:
            # A handler that returned may still be sending its outcome: wait for that too.
            while (self._active or self._delivering) and time.monotonic() < deadline:
                self._cond.wait(max(0.0, deadline - time.monotonic()))
            left = [j for j in self._leased.values() if j._state == "running"]
            for job in left:
                job._state = "abandoned"
        for job in left:
            job.cancelled.set()
            self.log.warning("%s still running after shutdown_timeout (%.0f s): cancelled and %s",
                             self._name(job), self.shutdown_timeout,
                             "left to expire on dlqd" if job.trial is not None else "released")
            self._release_now(job, 0)

    def _flush_outbox(self) -> None:
        """Once the maintenance thread has ended: a last try at what dlqd has not taken."""
        with self._lock:
            outbox, self._outbox = self._outbox, []
        if not outbox:
            return
        self._resend(outbox, retries=1)
        with self._lock:
            kept, self._outbox = self._outbox, []
        for kind, job, _ in kept:
            self.log.warning("%s of job %s not delivered before exit; the job returns "
                             "when its lease expires", kind, job.id)

// The Worker against a real dlqd: a drain of 2,000 jobs each succeeded once, a parked claim woken
// by an enqueue (and its acks sent by /ack meanwhile), heartbeats, checkpoints, a handler stuck
// past its lease while another worker takes the job, and dlqd restarted under a running worker.

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { Client, LeaseLostError, ValidationError, Worker } from "../src/index.js";
import type { Job } from "../src/index.js";
import { recordingLogger, sleep, startDlqd, startProxy, waitFor, watchUnhandled, newWorker, stopWorkers } from "./helpers.js";
import { startChild } from "./child.js";

const unhandled = watchUnhandled();
after(async () => {
  await stopWorkers();
  assert.deepEqual(unhandled, [], "no unhandled rejections");
});

describe("worker", { concurrency: true, timeout: 60000 }, () => {
  it("2,000 jobs at concurrency 8: each handled once, succeeded on its first attempt", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const N = 2000;
    for (let i = 0; i < N; i += 1000) {
      await client.enqueueBatch("bulk", Array.from({ length: 1000 }, (_, k) => ({ payload: { n: i + k }, jobType: "n" })));
    }
    const calls = new Map<number, number>();
    let inFlight = 0;
    let peak = 0;
    const worker = newWorker({ queue: "bulk", url: d.url, concurrency: 8, handleSignals: false, logger: recordingLogger() });
    worker.handle("n", async (job: Job<{ n: number }>) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      calls.set(job.id, (calls.get(job.id) ?? 0) + 1);
      assert.equal(job.attempt, 1);
      await new Promise((r) => setImmediate(r));
      inFlight--;
    });
    const running = worker.run();
    await waitFor("2,000 succeeded", async () => (await client.stats("bulk")).succeeded === N, 60000, 200);
    await worker.stop();
    await running;
    assert.equal(calls.size, N);
    assert.ok([...calls.values()].every((c) => c === 1), "no job ran twice");
    assert.ok(peak <= 8 && peak >= 2, `peak concurrency ${peak}`);
    const stats = await client.stats("bulk");
    assert.deepEqual([stats.ready, stats.processing, stats.dead], [0, 0, 0]);
    // The attempt history: every message claimed once, one succeeded entry.
    for (let offset = 0; offset < N; offset += 100) {
      const page = await client.list("bulk", { status: "succeeded", limit: 100, offset });
      assert.ok(page.messages.every((m) => m.attempts === 1 && m.retry_count === 0 && m.lease_expiries === 0));
    }
    for (const id of [1, 2, 500, 1999, 2000]) {
      const h = await client.attempts("bulk", id);
      assert.deepEqual(
        h.map((a) => a.outcome),
        ["succeeded"],
      );
    }
  });

  it("a job enqueued while the idle worker's claim is parked succeeds at once; its ack goes by /ack", async () => {
    const d = await startDlqd();
    const proxy = await startProxy(d.url);
    const client = new Client({ url: d.url });
    const worker = newWorker({ queue: "idle", url: proxy.url, concurrency: 4, waitSeconds: 30, workerName: "mail-1", workerVersion: "1.2.3", handleSignals: false, logger: recordingLogger() });
    const handled: number[] = [];
    worker.handle("t", (job: Job) => {
      handled.push(job.id);
    });
    const running = worker.run();
    await waitFor("a parked claim", () => proxy.seen.some((s) => s.url === "/queues/idle/claim" && !s.done), 5000);
    await sleep(200);
    const t0 = Date.now();
    const m = await client.enqueue("idle", "x", { jobType: "t" });
    await waitFor("succeeded", async () => (await client.get("idle", m.id)).status === "succeeded", 5000, 20);
    const took = Date.now() - t0;
    assert.ok(took < 3000, `took ${took} ms, the wait is 30 s`);
    assert.deepEqual(handled, [m.id]);
    const claims = proxy.seen.filter((s) => s.url === "/queues/idle/claim");
    const last = claims[claims.length - 1];
    assert.equal(last.done, false, "the next claim is parked");
    assert.equal(last.body.wait_seconds, 30);
    assert.equal(claims[0].body.max, 4, "it asks for every free slot");
    assert.equal(last.body.max, 3, "the next claim went out while the job ran");
    assert.equal(last.body.visibility_timeout, 30);
    assert.deepEqual(last.body.job_types, ["t"]);
    assert.equal(last.body.worker, "mail-1");
    assert.equal(last.body.worker_version, "1.2.3");
    const acks = proxy.seen.filter((s) => s.url === "/queues/idle/ack");
    assert.equal(acks.length, 1, "acked by /ack while the claim was parked");
    assert.deepEqual(acks[0].body.items, [{ id: m.id, lease_id: acks[0].body.items[0].lease_id }]);
    await worker.stop();
    await running;
    // Closing the parked claim ended its wait: dlqd holds nothing for it (once the proxy, in this
    // process, has closed its side too).
    await waitFor("the proxy closed the parked claim", () => proxy.seen.every((s) => s.done), 2000, 10);
    const after = await client.enqueue("idle", "y", { jobType: "t" });
    // (it may still be giving it back when this claim arrives: wait for it)
    const again = await client.claim("idle", { max: 1, waitSeconds: 5 });
    assert.equal(again.messages[0]?.id, after.id, JSON.stringify(await client.get("idle", after.id)));
    await proxy.close();
  });

  it("acks ride on the claim that a freed slot sends", async () => {
    const d = await startDlqd();
    const proxy = await startProxy(d.url);
    const client = new Client({ url: d.url });
    await client.enqueueBatch("ride", Array.from({ length: 6 }, () => ({ payload: "x", jobType: "t" })));
    const worker = newWorker({ queue: "ride", url: proxy.url, concurrency: 2, waitSeconds: 1, handleSignals: false, logger: recordingLogger() });
    worker.handle("t", () => sleep(50));
    const running = worker.run();
    await waitFor("6 succeeded", async () => (await client.stats("ride")).succeeded === 6, 10000);
    await worker.stop();
    await running;
    const claims = proxy.seen.filter((s) => s.url === "/queues/ride/claim");
    const riding = claims.flatMap((c) => c.body.ack ?? []);
    assert.ok(riding.length >= 4, `acks in claims: ${riding.length}`);
    assert.ok(claims.every((c) => c.body.max >= 1 && c.body.max <= 2));
    await proxy.close();
  });

  it("heartbeats hold a job for three leases; checkpoints and extend", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const long = await client.enqueue("hb", "long", { jobType: "long" });
    const cp = await client.enqueue("hb", "cp", { jobType: "cp", maxRetries: 3 });
    const worker = newWorker({ queue: "hb", url: d.url, visibilityTimeout: 2, concurrency: 4, handleSignals: false, logger: recordingLogger() });
    let extendedTo = 0;
    worker.handle("long", async (job: Job) => {
      await sleep(6500);
      assert.equal(job.signal.aborted, false);
    });
    const seenCheckpoints: (string | null)[] = [];
    worker.handle("cp", async (job: Job) => {
      seenCheckpoints.push(job.checkpoint);
      if (job.attempt === 1) {
        await assert.rejects(job.saveCheckpoint("x".repeat(4097)), ValidationError);
        await job.saveCheckpoint("halfway");
        assert.equal(job.checkpoint, "halfway");
        await job.extend(10);
        extendedTo = Date.parse((await client.get("hb", job.id)).lease_expires_at!);
        throw new Error("second half failed");
      }
    });
    const running = worker.run();
    await waitFor("the long job succeeded", async () => (await client.get("hb", long.id)).status === "succeeded", 12000, 100);
    await waitFor("the checkpointed job succeeded", async () => (await client.get("hb", cp.id)).status === "succeeded", 8000, 100);
    await worker.stop();
    await running;
    const m = await client.get("hb", long.id);
    assert.equal(m.attempts, 1);
    assert.equal(m.lease_expiries, 0);
    assert.deepEqual(
      (await client.attempts("hb", long.id)).map((a) => a.outcome),
      ["succeeded"],
    );
    assert.deepEqual(seenCheckpoints, [null, "halfway"]);
    assert.ok(extendedTo > Date.now() - 10000, "extend(10) pushed the lease 10 s out");
  });

  it("a handler stuck past its lease while another worker takes the job: its ack refused, signal aborted, one success", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const m = await client.enqueue("stuck", { block_ms: 6000 });
    // A's claims wait 1 s, so the answer to the claim its ack rides on (and the refusal) comes soon.
    const child = startChild({ DLQ_URL: d.url, QUEUE: "stuck", VISIBILITY: "2", CONCURRENCY: "1", WAIT: "1" });
    await child.waitEvent("the child started the job", (e) => e.event === "start" && e.id === m.id);
    // Worker B, here: it gets the job once A's lease is reaped.
    const log = recordingLogger();
    const b = newWorker({ queue: "stuck", url: d.url, visibilityTimeout: 10, handleSignals: false, logger: log });
    const bRan: number[] = [];
    b.defaultHandler = (job: Job) => {
      bRan.push(job.id);
    };
    const bRunning = b.run();
    await waitFor("B succeeded it", async () => (await client.get("stuck", m.id)).status === "succeeded", 10000, 100);
    await child.waitEvent("A's signal aborted", (e) => e.event === "aborted" && e.id === m.id && e.reason === "LeaseLostError", 10000);
    await child.waitEvent("A's result refused", (e) => e.event === "log" && /lease lost/.test(String(e.message)), 5000);
    await b.stop();
    await bRunning;
    child.kill();
    assert.deepEqual(bRan, [m.id]);
    const h = await client.attempts("stuck", m.id);
    assert.deepEqual(
      h.map((a) => a.outcome),
      ["lease_expired", "succeeded"],
    );
    assert.equal(h.filter((a) => a.outcome === "succeeded").length, 1);
    assert.deepEqual(child.events.filter((e) => e.event === "log" && e.level === "error"), []);
  });

  it("lease lost during a heartbeat: the signal aborts and nothing is acked or failed", async () => {
    const d = await startDlqd();
    const proxy = await startProxy(d.url);
    const client = new Client({ url: d.url });
    const m = await client.enqueue("ll", "x", { jobType: "t" });
    const worker = newWorker({ queue: "ll", url: proxy.url, visibilityTimeout: 3, handleSignals: false, logger: recordingLogger() });
    // dlqd answers every heartbeat "lease lost" (as it does once the lease was reaped).
    proxy.intercept = (s) => (s.url.endsWith("/extend") ? { status: 409, body: { type: "https://dlq.dev/problems/lease-lost", status: 409, detail: "lease lost" } } : undefined);
    let reason: unknown;
    worker.handle("t", async (job: Job) => {
      await new Promise<void>((resolve) => job.signal.addEventListener("abort", () => resolve()));
      reason = job.signal.reason;
      throw new Error("stopped because the lease was lost");
    });
    const running = worker.run();
    await waitFor("the signal", () => reason !== undefined, 6000);
    await sleep(300);
    await worker.stop();
    await running;
    assert.ok(reason instanceof LeaseLostError);
    assert.equal(proxy.seen.filter((s) => /\/(fail|succeed|release)$/.test(s.url) || s.url.endsWith("/ack") || (s.body?.ack ?? []).length > 0).length, 0);
    assert.equal((await client.get("ll", m.id)).status, "processing", "left to the reaper");
    await proxy.close();
  });

  it("dlqd restarted: the ack of a job that finished meanwhile is delivered, and the worker goes on", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const first = await client.enqueue("rs", { ms: 1500 });
    const log = recordingLogger();
    const worker = newWorker({ queue: "rs", url: d.url, concurrency: 2, waitSeconds: 5, handleSignals: false, logger: log });
    const ran: number[] = [];
    worker.defaultHandler = async (job: Job<{ ms: number }>) => {
      ran.push(job.id);
      await sleep(job.payload.ms);
    };
    const running = worker.run();
    await waitFor("the first job running", () => ran.includes(first.id), 5000);
    await d.stop();
    await sleep(2000); // the handler finishes while dlqd is down: its ack is kept
    await d.restart();
    await waitFor("the first job succeeded", async () => (await client.get("rs", first.id)).status === "succeeded", 20000, 100);
    const second = await client.enqueue("rs", { ms: 0 });
    await waitFor("the second job succeeded", async () => (await client.get("rs", second.id)).status === "succeeded", 20000, 100);
    await worker.stop();
    await running;
    assert.deepEqual(ran, [first.id, second.id]);
    assert.equal((await client.get("rs", first.id)).attempts, 1, "the kept ack counted, nothing ran twice");
  });

  it("a 503 from dlqd: the worker backs off and carries on", async () => {
    const d = await startDlqd();
    const proxy = await startProxy(d.url);
    const client = new Client({ url: d.url });
    let refusals = 0;
    proxy.intercept = (s) => {
      if (s.url.endsWith("/claim") && refusals < 6) {
        refusals++;
        return { status: 503, body: { type: "https://dlq.dev/problems/database-unavailable", status: 503, detail: "down" } };
      }
      return undefined;
    };
    const m = await client.enqueue("u", "x", { jobType: "t" });
    const worker = newWorker({ queue: "u", url: proxy.url, handleSignals: false, logger: recordingLogger() });
    worker.handle("t", () => {});
    const running = worker.run();
    await waitFor("succeeded after the refusals", async () => (await client.get("u", m.id)).status === "succeeded", 30000, 100);
    await worker.stop();
    await running;
    assert.equal(refusals, 6);
    await proxy.close();
  });

  it("run() refuses a worker with no handlers; stop() before run() ends it at once", async () => {
    const w = newWorker({ queue: "q", url: "http://127.0.0.1:1", handleSignals: false });
    assert.throws(() => w.run(), /handler/);
    const w2 = newWorker({ queue: "q", url: "http://127.0.0.1:1", handleSignals: false, logger: recordingLogger() });
    w2.handle("t", () => {});
    void w2.stop();
    await w2.run();
    assert.throws(() => new Worker({ queue: "q", concurrency: 0 }), RangeError);
    assert.throws(() => new Worker({ queue: "q", waitSeconds: 61 }), RangeError);
  });
});

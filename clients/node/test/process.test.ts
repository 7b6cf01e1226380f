// Workers in their own processes: SIGTERM with jobs running (each succeeds or is released), a
// second signal exits at once, kill -9 (the jobs come back when their leases end), and the
// e-mail example run once.

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { Client } from "../src/index.js";
import type { Job } from "../src/index.js";
import { packageRoot, recordingLogger, startDlqd, waitFor, watchUnhandled, newWorker, stopWorkers } from "./helpers.js";
import { startChild } from "./child.js";

const unhandled = watchUnhandled();
after(async () => {
  await stopWorkers();
  assert.deepEqual(unhandled, [], "no unhandled rejections");
});

describe("processes", { concurrency: true, timeout: 60000 }, () => {
  it("SIGTERM with 8 running: the quick ones succeed, the rest are released, the parked claim closed, exit 0", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const plans = [
      ...Array.from({ length: 4 }, () => ({ sleep_ms: 700 })),
      ...Array.from({ length: 2 }, () => ({ sleep_ms: 60000 })), // end on their signal
      ...Array.from({ length: 2 }, () => ({ sleep_ms: 60000, ignore_signal: true })),
    ];
    const ids = (await client.enqueueBatch("term", plans.map((p) => ({ payload: p })))).map((m) => m.id);
    const child = startChild({ DLQ_URL: d.url, QUEUE: "term", CONCURRENCY: "10", SHUTDOWN_TIMEOUT: "2" });
    await child.waitEvent("8 running", () => child.events.filter((e) => e.event === "start").length === 8);
    const t0 = Date.now();
    child.proc.kill("SIGTERM");
    const { code } = await child.exit();
    const took = Date.now() - t0;
    assert.equal(code, 0, child.output());
    assert.ok(took >= 1900 && took < 6000, `shutdown took ${took} ms with a 2 s shutdown timeout`);
    const after = await Promise.all(ids.map((id) => client.get("term", id)));
    assert.deepEqual(
      after.map((m) => m.status),
      ["succeeded", "succeeded", "succeeded", "succeeded", "pending", "pending", "pending", "pending"],
    );
    for (const m of after.slice(4)) {
      assert.equal(m.retry_count, 0, "a release is no failure");
      assert.equal(m.retry_after, null, "due again at once");
      const h = await client.attempts("term", m.id);
      assert.deepEqual(
        h.map((a) => a.outcome),
        ["released"],
      );
    }
    assert.equal(child.events.filter((e) => e.event === "aborted").length, 4, "the cancelled ones saw their signal");
    assert.equal((await client.stats("term")).processing, 0);
    // The parked claim for the two free slots was closed: a new message is claimable at once.
    const fresh = await client.enqueue("term", "x", { jobType: "other" });
    assert.equal((await client.claim("term", { jobTypes: ["other"], max: 1, waitSeconds: 5 })).messages[0]?.id, fresh.id);
  });

  it("a second signal exits at once", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    await client.enqueue("twice", { sleep_ms: 60000, ignore_signal: true });
    const child = startChild({ DLQ_URL: d.url, QUEUE: "twice", SHUTDOWN_TIMEOUT: "30" });
    await child.waitEvent("running", (e) => e.event === "start");
    child.proc.kill("SIGINT");
    await child.waitEvent("stopping", (e) => e.event === "log" && /shutting down/.test(e.message));
    const t0 = Date.now();
    child.proc.kill("SIGTERM");
    const { code } = await child.exit();
    assert.equal(code, 143);
    assert.ok(Date.now() - t0 < 2000);
  });

  it("kill -9: the jobs come back after their 2 s lease and another worker finishes them", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const ids = (await client.enqueueBatch("k9", Array.from({ length: 3 }, () => ({ payload: { sleep_ms: 60000 } })))).map((m) => m.id);
    const child = startChild({ DLQ_URL: d.url, QUEUE: "k9", VISIBILITY: "2", CONCURRENCY: "4" });
    await child.waitEvent("3 running", () => child.events.filter((e) => e.event === "start").length === 3);
    child.proc.kill("SIGKILL");
    await child.exit();
    const killedAt = Date.now();
    await waitFor("leases reaped", async () => (await Promise.all(ids.map((id) => client.get("k9", id)))).every((m) => m.status === "pending"), 6000, 100);
    const back = Date.now() - killedAt;
    assert.ok(back < 4500, `back after ${back} ms (lease 2 s, reaper ≤ 1 s)`);
    for (const id of ids) {
      const m = await client.get("k9", id);
      assert.equal(m.lease_expiries, 1);
      assert.equal(m.retry_count, 0, "an expiry is not a handler failure");
    }
    const worker = newWorker({ queue: "k9", url: d.url, handleSignals: false, logger: recordingLogger() });
    const ran: number[] = [];
    worker.defaultHandler = (job: Job) => {
      ran.push(job.id);
    };
    const running = worker.run();
    await waitFor("all succeeded", async () => (await client.stats("k9")).succeeded === 3, 10000, 100);
    await worker.stop();
    await running;
    assert.deepEqual(ran.sort((a, b) => a - b), ids);
    const h = await client.attempts("k9", ids[0]);
    assert.deepEqual(
      h.map((a) => a.outcome),
      ["lease_expired", "succeeded"],
    );
  });

  it("the e-mail example: three jobs, one without `to`, SIGTERM → exit 0", async () => {
    const d = await startDlqd();
    const client = new Client({ url: d.url });
    const a = await client.enqueue("mail-ex", { to: "alice@example.com", subject: "hello" }, { jobType: "send_email" });
    const b = await client.enqueue("mail-ex", { to: "bob@example.com", subject: "hi" }, { jobType: "send_email" });
    const c = await client.enqueue("mail-ex", { subject: "nobody" }, { jobType: "send_email" });
    const child = startChild({ DLQ_URL: d.url, DLQ_QUEUE: "mail-ex" }, path.join(packageRoot, "dist", "examples", "email-worker.js"));
    await waitFor("two sent, one dead", async () => {
      const s = await client.stats("mail-ex");
      return s.succeeded === 2 && s.dead === 1;
    });
    const dead = await client.get("mail-ex", c.id);
    assert.equal(dead.error_class, "invalid_input");
    assert.equal(dead.dead_reason, "non_retryable");
    assert.equal(dead.retry_count, 1, "dead on its first failure");
    assert.match(dead.last_error!, /^InvalidInput: /);
    assert.equal((await client.get("mail-ex", a.id)).status, "succeeded");
    assert.equal((await client.get("mail-ex", b.id)).status, "succeeded");
    assert.match(child.output(), /sent to alice@example\.com/);
    assert.match(child.output(), /sent to bob@example\.com/);
    child.proc.kill("SIGTERM");
    const { code } = await child.exit();
    assert.equal(code, 0, child.output());
  });
});

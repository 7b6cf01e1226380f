// Exceptions → fail bodies: the shared vectors (as built, and as a Worker sends them through a
// recording proxy), what dlqd makes of each kind, the size cuts, and a refused fail resent bare.

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { Client, EffectNotDone, Fail, InvalidInput, NonRetryable, Snooze, Throttled, UncertainEffect, cutUtf8, outcomeOf } from "../src/index.js";
import type { Job } from "../src/index.js";
import { recordingLogger, startDlqd, startProxy, vectors, waitFor, watchUnhandled, newWorker, stopWorkers } from "./helpers.js";

const unhandled = watchUnhandled();
after(async () => {
  await stopWorkers();
  assert.deepEqual(unhandled, [], "no unhandled rejections");
});

/** Builds what a vector's `raise` describes. */
function raise(r: Record<string, any>): Error {
  switch (r.kind) {
    case "Fail":
      return new Fail(r.message, { errorClass: r.error_class, retryable: r.retryable, retryIn: r.retry_in, fingerprint: r.fingerprint });
    case "NonRetryable":
      return new NonRetryable(r.message);
    case "InvalidInput":
      return new InvalidInput(r.message);
    case "Throttled":
      return new Throttled(r.message, r.retry_in);
    case "Snooze":
      return new Snooze(r.seconds);
    case "EffectNotDone":
      return new EffectNotDone(r.message, { errorClass: r.error_class, retryable: r.retryable, retryIn: r.retry_in, fingerprint: r.fingerprint });
    case "UncertainEffect":
      return new UncertainEffect(r.key, {
        key: r.key, state: "started", description: null, result: null, attempt: r.attempt,
        recorded_at: "2026-01-01T00:00:00.000Z", resolved_by: null,
      });
    case "TimeoutError": {
      const e = new Error(r.message);
      e.name = "TimeoutError";
      return e;
    }
    case "Error":
      return r.cause ? new Error(r.message, { cause: raise(r.cause) }) : new Error(r.message);
    default:
      throw new Error(`unknown vector kind ${r.kind}`);
  }
}

/** Members listed must match exactly, stack must be there, and nothing else may be sent. */
function checkFailBody(sent: Record<string, unknown>, expected: Record<string, unknown>, what: string): void {
  for (const [k, v] of Object.entries(expected)) assert.deepEqual(sent[k], v, `${what}: ${k}`);
  assert.equal(typeof sent.stack, "string", `${what}: stack`);
  const allowed = new Set([...Object.keys(expected), "stack", "lease_id"]);
  for (const k of Object.keys(sent)) assert.ok(allowed.has(k), `${what}: unexpected member ${k}`);
}

describe("failures", { concurrency: true, timeout: 60000 }, () => {
  it("the shared exception vectors build the listed bodies", () => {
    for (const v of vectors().exceptions) {
      const outcome = outcomeOf(raise(v.raise));
      if (v.release) {
        assert.deepEqual(outcome, { kind: "release", delaySeconds: v.release.delay_seconds });
      } else {
        assert.equal(outcome.kind, "fail");
        if (outcome.kind === "fail") checkFailBody(outcome.body as unknown as Record<string, unknown>, v.fail!, v.raise.kind);
      }
    }
  });

  it("names, cause chains and cuts", () => {
    class SmtpError extends Error {}
    const chained = new SmtpError("refused", { cause: new TypeError("bad header", { cause: "socket closed" }) });
    const o = outcomeOf(chained);
    assert.equal(o.kind, "fail");
    if (o.kind !== "fail") return;
    assert.equal(o.body.error, "SmtpError: refused");
    assert.equal(o.body.cause, 'TypeError: bad header <- Error: socket closed');
    const dom = outcomeOf(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    assert.equal(dom.kind === "fail" && dom.body.error_class, "timeout");
    assert.equal(outcomeOf("just a string").kind === "fail" && (outcomeOf("just a string") as any).body.error, "Error: just a string");
    // A cycle ends the chain.
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    assert.equal((outcomeOf(a) as any).body.cause, "Error: b");
    // Cuts on UTF-8 boundaries: "é" is two bytes, "€" three.
    assert.equal(cutUtf8("éé", 3), "é");
    assert.equal(cutUtf8("a€", 3), "a");
    assert.equal(cutUtf8("a€", 4), "a€");
    const huge = new Error("x");
    huge.stack = "€".repeat(10000);
    const hugeCause = new Error("top", { cause: new Error("é".repeat(5000)) });
    const hb = (outcomeOf(huge) as any).body;
    assert.ok(Buffer.byteLength(hb.stack) <= 16384 && Buffer.byteLength(hb.stack) > 16380);
    assert.ok(!hb.stack.includes("\ufffd"));
    const cb = (outcomeOf(hugeCause) as any).body;
    assert.ok(Buffer.byteLength(cb.cause) <= 4096 && Buffer.byteLength(cb.cause) > 4092);
    assert.equal(Buffer.byteLength((outcomeOf(new Error("ü".repeat(1000))) as any).body.error) <= 1000, true);
    // Checked when the Fail is made: the class, the fingerprint, retryIn; seconds round up.
    assert.throws(() => new Fail("x", { fingerprint: "no spaces allowed" }), RangeError);
    assert.throws(() => new Fail("x", { fingerprint: "a".repeat(129) }), RangeError);
    assert.throws(() => new Fail("x", { errorClass: "flaky" }), RangeError);
    assert.throws(() => new Throttled("x", 604801), RangeError);
    assert.throws(() => new Snooze(-1), RangeError);
    assert.equal((outcomeOf(new Fail("x", { fingerprint: "A-z_0.9:x" })) as any).body.fingerprint, "A-z_0.9:x");
    assert.equal((outcomeOf(new Fail("x", { errorClass: "uncertain_effect" })) as any).body.error_class, "uncertain_effect");
    assert.equal(new Throttled("x", 12.2).retryIn, 13);
    const short = new Throttled(12);
    assert.deepEqual([short.message, short.retryIn], ["throttled", 12]);
    assert.equal(new Snooze(1.5).seconds, 2);
    // A Fail without retryable leaves it to the queue's policy.
    assert.equal("retryable" in (outcomeOf(new Fail("x", { errorClass: "auth" })) as any).body, false);
  });

  it("each exception kind as a worker sends it, and what dlqd makes of it", async () => {
    const d = await startDlqd();
    const proxy = await startProxy(d.url);
    const client = new Client({ url: d.url });
    const cases = [
      ...vectors().exceptions.map((v) => ({ raise: v.raise, fail: v.fail, release: v.release, maxRetries: 5 })),
      { raise: { kind: "Error", message: "last try" }, fail: { error: "Error: last try", error_class: "unknown", retryable: true }, release: undefined, maxRetries: 1 },
    ];
    const expected: Record<string, { status: string; error_class: string | null; dead_reason: string | null }> = {
      Fail: { status: "pending", error_class: "throttled", dead_reason: null },
      NonRetryable: { status: "dead", error_class: "unknown", dead_reason: "non_retryable" },
      InvalidInput: { status: "dead", error_class: "invalid_input", dead_reason: "non_retryable" },
      Throttled: { status: "pending", error_class: "throttled", dead_reason: null },
      TimeoutError: { status: "pending", error_class: "timeout", dead_reason: null },
      Error: { status: "pending", error_class: "unknown", dead_reason: null },
      Snooze: { status: "pending", error_class: null, dead_reason: null },
      EffectNotDone: { status: "dead", error_class: "invalid_input", dead_reason: "non_retryable" },
      UncertainEffect: { status: "dead", error_class: "uncertain_effect", dead_reason: "non_retryable" },
    };
    const ids: number[] = [];
    for (let i = 0; i < cases.length; i++) ids.push((await client.enqueue("x", { i }, { jobType: "v", maxRetries: cases[i].maxRetries })).id);
    const log = recordingLogger();
    const worker = newWorker({ queue: "x", url: proxy.url, concurrency: 4, handleSignals: false, logger: log });
    worker.handle("v", (job: Job<{ i: number }>) => {
      throw raise(cases[job.payload.i].raise);
    });
    const running = worker.run();
    const settled = (id: number) => proxy.seen.find((s) => s.done && (s.url === `/queues/x/messages/${id}/fail` || s.url === `/queues/x/messages/${id}/release`));
    await waitFor("every failure delivered", () => ids.every(settled));
    await worker.stop();
    await running;
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      const what = `${c.raise.kind} #${i}`;
      const req = settled(ids[i])!;
      const m = await client.get("x", ids[i]);
      if (c.release) {
        assert.ok(req.url.endsWith("/release"), what);
        assert.equal(req.body.delay_seconds, c.release.delay_seconds);
        assert.equal(m.status, "pending");
        assert.equal(m.retry_count, 0, "a snooze is no failure");
        assert.ok(Date.parse(m.retry_after!) > Date.now() + 10e3);
        const h = await client.attempts("x", ids[i]);
        assert.equal(h[0].outcome, "released");
        continue;
      }
      assert.ok(req.url.endsWith("/fail"), what);
      checkFailBody(req.body, c.fail!, what);
      assert.equal(typeof req.body.lease_id, "string");
      const want = c.maxRetries === 1 ? { status: "dead", error_class: "unknown", dead_reason: "retries_exhausted" } : expected[c.raise.kind];
      assert.deepEqual({ status: m.status, error_class: m.error_class, dead_reason: m.dead_reason }, want, what);
      assert.equal(m.last_error, c.fail!.error);
      const h = await client.attempts("x", ids[i]);
      assert.equal(h[0].outcome, "failed");
      assert.ok(typeof h[0].stack === "string" && h[0].stack.length > 0, `${what}: stack stored`);
      if (c.fail!.cause) assert.equal(h[0].cause, c.fail!.cause);
      if (c.fail!.retry_in) {
        const due = Date.parse(m.retry_after!) - Date.now();
        assert.ok(due > (c.fail!.retry_in as number) * 1000 - 3000 && due <= (c.fail!.retry_in as number) * 1000, `${what}: retry_in`);
      }
    }
    // Each handler ran once: no failure was sent twice.
    for (const id of ids) assert.equal(proxy.seen.filter((s) => s.url.startsWith(`/queues/x/messages/${id}/`)).length, 1);
    await proxy.close();
  });

  it("a fail refused 422 is resent with lease_id, error and error_class only", async () => {
    const d = await startDlqd();
    const proxy = await startProxy(d.url);
    const client = new Client({ url: d.url });
    const m = await client.enqueue("r", "x", { jobType: "t" });
    // A dlqd with other limits: it refuses the first fail as too large.
    let refused = false;
    proxy.intercept = (s) => {
      if (!s.url.endsWith("/fail") || refused) return undefined;
      refused = true;
      return { status: 422, body: { type: "https://dlq.dev/problems/validation-failed", status: 422, detail: "stack is too long", errors: [{ field: "stack", message: "stack is too long", code: "too_long" }] } };
    };
    const log = recordingLogger();
    const worker = newWorker({ queue: "r", url: proxy.url, handleSignals: false, logger: log });
    worker.handle("t", () => {
      throw new Throttled("slow down", 60, { cause: new Error("429 from the API") });
    });
    const running = worker.run();
    const fails = () => proxy.seen.filter((s) => s.url === `/queues/r/messages/${m.id}/fail` && s.done);
    await waitFor("two fails", () => fails().length === 2);
    await worker.stop();
    await running;
    const [first, second] = fails();
    assert.equal(first.body.retry_in, 60);
    assert.equal(first.body.cause, "Error: 429 from the API");
    assert.deepEqual(Object.keys(second.body).sort(), ["error", "error_class", "lease_id"]);
    assert.deepEqual(second.body.error, "Throttled: slow down");
    const after = await client.get("r", m.id);
    assert.equal(after.error_class, "throttled");
    assert.equal(after.retry_count, 1);
    assert.ok(log.lines.some((l) => l.level === "warn" && /422/.test(l.message)));
    await proxy.close();
  });
});

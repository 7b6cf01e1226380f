// job.effect against a real dlqd (issue 36): a side effect runs once across a failure after it,
// EffectNotDone clears its key, a key left `started` is uncertain (check decides, or the job dies
// uncertain_effect), limits are checked before sending, a lost lease while recording, and
// Client.recordEffect's answers.

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { Client, EffectNotDone, InvalidStateError, Job, LeaseLostError, UncertainEffect, ValidationError } from "../src/index.js";
import type { ClaimedMessage, Effect } from "../src/index.js";
import { newWorker, recordingLogger, startDlqd, startProxy, stopWorkers, waitFor, watchUnhandled } from "./helpers.js";
import type { Proxy } from "./helpers.js";

const unhandled = watchUnhandled();
after(async () => {
  await stopWorkers();
  assert.deepEqual(unhandled, [], "no unhandled rejections");
});

// A failed attempt comes back after 0.1 s instead of 2 s.
const CONFIG = { defaults: { backoff: { initial_seconds: 0.1, max_seconds: 0.2 } } };
const CHARGE = { charge: "ch_1", cents: 4200 };

class SmtpError extends Error {}

/** dlqd with a recording proxy and a client straight to it. */
async function setup(): Promise<{ proxy: Proxy; client: Client }> {
  const d = await startDlqd({ config: CONFIG });
  return { proxy: await startProxy(d.url), client: new Client({ url: d.url }) };
}

/** Runs a worker (through the proxy) with `handler` until the message reaches `status`. */
async function work(proxy: Proxy, client: Client, queue: string, id: number, status: string, handler: (job: Job<any>) => unknown) {
  const worker = newWorker({ queue, url: proxy.url, concurrency: 1, waitSeconds: 1, startupDelay: 0, handleSignals: false, logger: recordingLogger() });
  worker.defaultHandler = handler;
  const running = worker.run();
  await waitFor(status, async () => (await client.get(queue, id)).status === status, 5000, 20);
  await worker.stop();
  await running;
  return client.get(queue, id);
}

/** The effect records sent for one message: [state, result]. */
function records(proxy: Proxy, id: number): [string, string | undefined][] {
  return proxy.seen.filter((s) => s.url.endsWith(`/messages/${id}/effects`)).map((s) => [s.body.state, s.body.result]);
}

/** A Job made from a claim of our own (no worker), its records sent by `client`. */
async function handJob(client: Client, queue: string, effects?: Effect[]): Promise<Job> {
  await client.enqueue(queue, "x");
  const message: ClaimedMessage = (await client.claim(queue, { max: 1 })).messages[0];
  if (effects) message.effects = effects;
  return new Job(message, new AbortController().signal, {
    extend: async () => {},
    saveCheckpoint: async () => {},
    recordEffect: (key, state, description, result) => client.recordEffect(queue, message.id, message.lease_id, key, state, { description, result }),
  });
}

/** A message whose first attempt recorded `started` by raw calls, then failed. */
async function startedByHand(client: Client, queue: string): Promise<number> {
  const { id } = await client.enqueue(queue, "x");
  const claimed = (await client.claim(queue, { max: 1 })).messages[0];
  assert.deepEqual(claimed.effects, []);
  const rec = await client.recordEffect(queue, id, claimed.lease_id, "charge:9", "started", { description: "charge the card" });
  assert.deepEqual([rec.key, rec.state, rec.result, rec.attempt], ["charge:9", "started", null, 1]);
  await client.fail(queue, id, claimed.lease_id, { error: "worker crashed", retryable: true });
  return id;
}

describe("effects", { concurrency: true, timeout: 60000 }, () => {
  it("a side effect runs once across a failure after it; the retry gets the stored value", async () => {
    const { proxy, client } = await setup();
    const { id } = await client.enqueue("once", "order 42");
    const calls: string[] = [];
    const seen: [number, unknown, unknown, readonly Effect[]][] = [];
    const m = await work(proxy, client, "once", id, "succeeded", async (job) => {
      const value = await job.effect("charge:42", async () => (calls.push("charge"), { ...CHARGE }), { description: "charge the card 42.00" });
      const again = await job.effect("charge:42", () => calls.push("again")); // same run: stored
      seen.push([job.attempt, value, again, job.effects]);
      if (job.attempt === 1) throw new SmtpError("the receipt e-mail failed after the charge");
    });
    assert.equal(m.status, "succeeded");
    assert.deepEqual(calls, ["charge"]);
    assert.deepEqual(
      seen.map(([a, v, g]) => [a, v, g]),
      [
        [1, CHARGE, CHARGE],
        [2, CHARGE, CHARGE],
      ],
    );
    const [effect] = seen[1][3];
    const { recorded_at, ...rest } = effect;
    assert.deepEqual(rest, { key: "charge:42", state: "done", description: "charge the card 42.00", result: JSON.stringify(CHARGE), attempt: 1, resolved_by: null });
    assert.equal(typeof recorded_at, "string");
    assert.equal(seen[1][3].length, 1);
    assert.deepEqual(records(proxy, id), [
      ["started", undefined],
      ["done", JSON.stringify(CHARGE)],
    ]);
    assert.deepEqual(
      (await client.attempts("once", id)).map((a) => a.outcome),
      ["failed", "succeeded"],
    );
    await proxy.close();
  });

  it("EffectNotDone clears the key: the next attempt calls fn again", async () => {
    const { proxy, client } = await setup();
    const { id } = await client.enqueue("notdone", "x");
    const calls: number[] = [];
    const keys: string[][] = [];
    await work(proxy, client, "notdone", id, "succeeded", async (job) => {
      const sent = await job.effect("mail:welcome", () => {
        calls.push(job.attempt);
        if (job.attempt === 1) throw new EffectNotDone("the provider refused the request: nothing sent");
        return "sent";
      });
      assert.equal(sent, "sent");
      keys.push(job.effects.map((e) => e.key));
    });
    assert.deepEqual(calls, [1, 2]);
    assert.deepEqual(keys, [["mail:welcome"]]);
    assert.deepEqual(records(proxy, id), [
      ["started", undefined],
      ["cleared", undefined],
      ["started", undefined],
      ["done", '"sent"'],
    ]);
    const [first] = await client.attempts("notdone", id);
    assert.deepEqual([first.outcome, first.error_class], ["failed", "unknown"]);
    assert.match(first.error ?? "", /^EffectNotDone: the provider refused/);
    await proxy.close();
  });

  it("a key left started fails the job uncertain_effect, not retryable, without check", async () => {
    const { proxy, client } = await setup();
    const { id } = await client.enqueue("uncertain", "x");
    const calls: number[] = [];
    const m = await work(proxy, client, "uncertain", id, "dead", async (job) => {
      await job.effect(
        "charge:7",
        async () => {
          calls.push(job.attempt);
          throw new Error("the connection broke: charged or not, nobody knows");
        },
        { description: "charge the card" },
      );
    });
    assert.deepEqual(calls, [1]);
    assert.deepEqual([m.error_class, m.dead_reason], ["uncertain_effect", "non_retryable"]);
    const entries = await client.attempts("uncertain", id);
    assert.deepEqual(
      entries.map((e) => [e.outcome, e.error_class]),
      [
        ["failed", "unknown"],
        ["failed", "uncertain_effect"],
      ],
    );
    assert.equal(entries[1].error, 'UncertainEffect: uncertain effect "charge:7": it was started by an earlier attempt (1) and may have happened; check the side effect, then replay with resolve_effects');
    // The stack starts at the handler's call, so dlqd's fingerprint frame is the handler's line.
    assert.match(entries[1].stack?.split("\n")[1] ?? "", /effects\.test\.js/);
    const fails = proxy.seen.filter((s) => s.url.endsWith(`/messages/${id}/fail`));
    assert.equal(fails[fails.length - 1].body.retryable, false);
    assert.deepEqual(records(proxy, id), [["started", undefined]]);
    await proxy.close();
  });

  it("check: a value is recorded done without calling fn; undefined calls fn", async () => {
    const { proxy, client } = await setup();
    const checked = await startedByHand(client, "checked");
    const rechecked = await startedByHand(client, "rechecked");
    const calls: string[] = [];
    const seen: unknown[] = [];
    await work(proxy, client, "checked", checked, "succeeded", async (job) => {
      assert.deepEqual(
        job.effects.map((e) => e.state),
        ["started"],
      );
      seen.push(
        await job.effect("charge:9", () => (calls.push("fn"), { charge: "ch_new" }), {
          description: "charge the card",
          check: async () => (calls.push("check"), { charge: "ch_9" }),
        }),
      );
    });
    assert.deepEqual(calls, ["check"]);
    assert.deepEqual(seen.slice(), [{ charge: "ch_9" }]);
    assert.deepEqual(records(proxy, checked), [["done", '{"charge":"ch_9"}']]);
    calls.length = 0;
    await work(proxy, client, "rechecked", rechecked, "succeeded", async (job) => {
      seen.push(
        await job.effect<number>("charge:9", () => (calls.push("fn"), 9), {
          check: () => {
            calls.push("check");
            return undefined;
          },
        }),
      );
    });
    assert.deepEqual(calls, ["check", "fn"]);
    assert.deepEqual(seen[1], 9);
    assert.deepEqual(records(proxy, rechecked), [
      ["started", undefined],
      ["done", "9"],
    ]);
    await proxy.close();
  });

  it("a replay resolves started keys: done skips fn, forget runs it again", async () => {
    const { proxy, client } = await setup();
    const { id } = await client.enqueue("resolve", "x");
    const { lease_id } = (await client.claim("resolve", { max: 1 })).messages[0];
    for (const key of ["charge", "mail"]) await client.recordEffect("resolve", id, lease_id, key, "started");
    await client.fail("resolve", id, lease_id, { error: "crashed", error_class: "uncertain_effect" });
    assert.equal((await client.get("resolve", id)).status, "dead");
    await client.replay("resolve", id, { reason: "charge found in the provider's dashboard", resolveEffects: { charge: "done", mail: "forget" } });
    const calls: string[] = [];
    const seen: unknown[] = [];
    await work(proxy, client, "resolve", id, "succeeded", async (job) => {
      seen.push(job.effects.map((e) => [e.key, e.state, e.result, e.resolved_by !== null]));
      seen.push(await job.effect("charge", () => calls.push("charge")));
      seen.push(await job.effect("mail", () => (calls.push("mail"), "sent")));
    });
    assert.deepEqual(calls.slice(), ["mail"]);
    assert.deepEqual(seen.slice(), [[["charge", "done", null, true]], undefined, "sent"]);
    await proxy.close();
  });

  it("limits are checked before sending; a value too big to record leaves the key started", async () => {
    const { proxy, client } = await setup();
    const c = new Client({ url: proxy.url });
    const job = await handJob(c, "limits");
    const calls: string[] = [];
    for (const key of ["", "é".repeat(65), 42 as unknown as string]) {
      await assert.rejects(job.effect(key, () => calls.push("fn")), ValidationError);
    }
    await assert.rejects(job.effect("k", () => calls.push("fn"), { description: "d".repeat(513) }), ValidationError);
    await assert.rejects(c.recordEffect("limits", job.id, job.leaseId, "k".repeat(129), "started"), ValidationError);
    await assert.rejects(c.recordEffect("limits", job.id, job.leaseId, "k", "finished" as "done"), ValidationError);
    assert.equal(calls.length, 0);
    assert.deepEqual(
      proxy.seen.filter((s) => s.url.endsWith("/effects")),
      [],
    );
    assert.equal(await job.effect("é".repeat(64), () => "ok"), "ok"); // 128 bytes is fine
    // fn ran, its value cannot be recorded: the key stays started, uncertain from now on.
    await assert.rejects(job.effect("big", () => "x".repeat(4095)), ValidationError); // 4,097 bytes as JSON
    await assert.rejects(job.effect("big", () => calls.push("fn")), (err: Error) => err instanceof UncertainEffect && /earlier in this attempt/.test(err.message) && err.errorClass === "uncertain_effect" && err.retryable === false);
    await assert.rejects(job.effect("bigint", () => BigInt(1)), TypeError);
    assert.deepEqual(calls, []);
    await proxy.close();
  });

  it("recordEffect's answers: a cleared absent key, a resent done, invalid-state, lease-lost, 100 keys", async () => {
    const d = await startDlqd({ config: CONFIG });
    const client = new Client({ url: d.url });
    const job = await handJob(client, "answers");
    const rec = (key: string, state: "started" | "done" | "cleared", result?: string) => client.recordEffect("answers", job.id, job.leaseId, key, state, { description: "d", result });
    assert.equal((await rec("gone", "cleared")).state, "cleared");
    assert.equal((await rec("k", "done", '{"a":1}')).result, '{"a":1}');
    assert.equal((await rec("k", "done", '{"a":1}')).state, "done");
    await assert.rejects(rec("k", "started"), InvalidStateError);
    await assert.rejects(rec("k", "cleared"), InvalidStateError);
    await assert.rejects(client.recordEffect("answers", job.id, `${"0".repeat(32)}-${job.id}`, "k2", "started"), LeaseLostError);
    for (let n = 0; n < 99; n++) await rec(`key-${n}`, "started");
    await assert.rejects(rec("one-too-many", "started"), (err: unknown) => err instanceof ValidationError && err.errors.some((e) => e.field === "key" && e.code === "limit"));
  });

  it("a lost lease while recording rejects with LeaseLostError and aborts the signal; nothing is sent after", async () => {
    const { proxy, client } = await setup();
    const { id } = await client.enqueue("lost", "x");
    const calls: string[] = [];
    let outcome: unknown;
    let aborted: unknown;
    const worker = newWorker({ queue: "lost", url: proxy.url, concurrency: 1, waitSeconds: 1, startupDelay: 0, handleSignals: false, logger: recordingLogger() });
    worker.defaultHandler = async (job: Job) => {
      await client.release("lost", job.id, job.leaseId, { delaySeconds: 60 }); // another worker's now, say
      try {
        await job.effect("charge", () => calls.push("fn"));
      } catch (err) {
        outcome = err;
      }
      aborted = job.signal.reason;
      throw outcome;
    };
    const running = worker.run();
    await waitFor("the refusal", () => outcome !== undefined, 5000);
    await worker.stop();
    await running;
    assert.ok(outcome instanceof LeaseLostError);
    assert.ok(aborted instanceof LeaseLostError);
    assert.deepEqual(calls, []);
    assert.equal(proxy.seen.filter((s) => s.url.endsWith(`/messages/${id}/fail`)).length, 0, "no fail sent for a lost lease");
    await proxy.close();
  });

  it("a key an operator resolved returns undefined; one key runs one call at a time", async () => {
    const d = await startDlqd({ config: CONFIG });
    const client = new Client({ url: d.url });
    const resolved: Effect = { key: "charge", state: "done", description: null, result: null, attempt: 1, recorded_at: "2025-01-01T00:00:00Z", resolved_by: "alice" };
    const job = await handJob(client, "resolved", [resolved]);
    assert.equal(
      await job.effect("charge", () => {
        throw new Error("fn called");
      }),
      undefined,
    );
    const calls: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const slow = async () => {
      calls.push("fn");
      await gate;
      return "once";
    };
    const both = Promise.all([job.effect("mail", slow), job.effect("mail", slow)]);
    await waitFor("the first fn", () => calls.length > 0, 5000);
    open();
    assert.deepEqual(await both, ["once", "once"]);
    assert.deepEqual(calls, ["fn"]);
    assert.throws(() => ((job.effects as Effect[]).push(resolved)), TypeError);
  });
});

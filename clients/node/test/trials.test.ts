// Trial runs against a real dlqd (issue 36): only a handler that opted in ({ trials: true }) gets
// them, from a second claim loop; job.effect causes nothing and reports would-effects; the answer
// goes to the trial's routes only (never an ack, never the message's routes); a throw or a Snooze
// fails the trial; heartbeats extend the trial's lease; shutdown gives nothing back; ordinary jobs
// keep flowing and the two loops together respect `concurrency`.

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { Client, InvalidInput, Snooze } from "../src/index.js";
import type { Job, Message, Trial } from "../src/index.js";
import { newWorker, recordingLogger, sleep, startDlqd, startProxy, stopWorkers, waitFor, watchUnhandled } from "./helpers.js";
import type { Proxy, Seen } from "./helpers.js";

const unhandled = watchUnhandled();
after(async () => {
  await stopWorkers();
  assert.deepEqual(unhandled, [], "no unhandled rejections");
});

class Declined extends Error {}

/** dlqd with a recording proxy (the worker's way in) and a client straight to it. */
async function setup(): Promise<{ proxy: Proxy; client: Client }> {
  const d = await startDlqd();
  return { proxy: await startProxy(d.url), client: new Client({ url: d.url }) };
}

/** A dead message of `jobType` (its one attempt failed), with `effects` ({key: result JSON})
 * recorded done by that attempt. */
async function dead(client: Client, queue: string, effects: Record<string, string> = {}, jobType = "charge"): Promise<Message> {
  const m = await client.enqueue(queue, { order: 42 }, { jobType, maxRetries: 1 });
  const [claimed] = (await client.claim(queue, { max: 1, jobTypes: [jobType] })).messages;
  assert.equal(claimed.id, m.id);
  for (const [key, result] of Object.entries(effects)) await client.recordEffect(queue, m.id, claimed.lease_id, key, "done", { description: `did ${key}`, result });
  await client.fail(queue, m.id, claimed.lease_id, { error: "boom", retryable: true });
  const d = await client.get(queue, m.id);
  assert.equal(d.status, "dead");
  return d;
}

function worker(proxy: Proxy, queue: string, concurrency: number, extra: Record<string, unknown> = {}) {
  return newWorker({ queue, url: proxy.url, concurrency, waitSeconds: 1, startupDelay: 0, handleSignals: false, logger: recordingLogger(), ...extra });
}

async function ended(client: Client, queue: string, id: number, trialId: number, timeoutMs = 5000): Promise<Trial> {
  return (await waitFor<Trial | undefined>(
    `trial ${trialId} to end`,
    async () => {
      const t = await client.trial(queue, id, trialId);
      return t.status !== "pending" && t.status !== "running" ? t : undefined;
    },
    timeoutMs,
    20,
  ))!;
}

function path(s: Seen): string {
  return s.url.split("?")[0];
}

/** A trial's lease (…-t<id>) is never sent to a message route, /effects, /ack or a claim's ack. */
function assertTrialLeasesStayOnTrialRoutes(proxy: Proxy): void {
  for (const s of proxy.seen) {
    const body = s.body && typeof s.body === "object" ? s.body : {};
    const leases = [body.lease_id, ...((body.items ?? body.ack ?? []) as { lease_id?: string }[]).map((i) => i.lease_id)];
    if (leases.some((l) => typeof l === "string" && l.includes("-t"))) assert.match(path(s), /\/trials\//, `a trial's lease sent to ${s.method} ${s.url}`);
  }
}

function claims(proxy: Proxy, trials: boolean): any[] {
  return proxy.seen.filter((s) => path(s).endsWith("/claim") && Boolean(s.body?.trials) === trials).map((s) => s.body);
}

describe("trial runs", { concurrency: true, timeout: 60000 }, () => {
  it("a trial never reaches a handler that did not opt in", async () => {
    const { proxy, client } = await setup();
    const m = await dead(client, "plain");
    const trial = await client.startTrial("plain", m.id, { reason: "would it work now?" });
    assert.equal(trial.status, "pending");
    const calls: number[] = [];
    const w = worker(proxy, "plain", 2);
    w.handle("charge", (job) => void calls.push(job.id)); // no { trials: true }
    const running = w.run();
    await sleep(1500);
    await w.stop();
    await running;
    assert.deepEqual(calls, []);
    assert.equal((await client.trial("plain", m.id, trial.trial_id)).status, "pending");
    assert.ok(claims(proxy, false).length > 0);
    assert.deepEqual(claims(proxy, true), []);
    await proxy.close();
  });

  it("an opted-in handler runs the trial: job.effect calls no fn and reports would-effects; the message is left as it was", async () => {
    const { proxy, client } = await setup();
    const m = await dead(client, "tried", { "receipt:42": '{"receipt":"r_1"}' });
    const other = await client.enqueue("tried", "pending meanwhile", { jobType: "mail" });
    const trial = await client.startTrial("tried", m.id, { payload: { order: 42, cents: 100 } });
    assert.equal(trial.payload_edited, true);
    const calls: string[] = [];
    const seen: unknown[] = [];
    const w = worker(proxy, "tried", 2, { visibilityTimeout: 1 });
    w.handle(
      "charge",
      async (job: Job<any>) => {
        seen.push([job.trial, job.payload, job.attempt, job.message.status]);
        seen.push(await job.effect("receipt:42", () => calls.push("receipt"))); // done
        seen.push(await job.effect("charge:42", () => calls.push("charge"), { description: "charge 1.00", check: () => calls.push("check") }));
        seen.push(await job.effect("charge:42", () => calls.push("charge"))); // once
        seen.push(await job.effect("mail:42", () => calls.push("mail")));
        await job.saveCheckpoint("charged"); // in memory only
        seen.push(job.checkpoint);
        seen.push(job.wouldEffects.map((e) => e.key));
        await sleep(1200); // past a 1 s lease: heartbeats must renew the trial's
      },
      { trials: true },
    );
    w.handle("mail", (job) => void calls.push(`mail job ${job.id}`));
    const running = w.run();
    const done = await ended(client, "tried", m.id, trial.trial_id);
    await waitFor("the mail job", async () => (await client.get("tried", other.id)).status === "succeeded", 5000, 20);
    await w.stop();
    await running;
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    assert.deepEqual(done.would_effects, [
      { key: "charge:42", description: "charge 1.00" },
      { key: "mail:42", description: null },
    ]);
    assert.equal(done.error, null);
    assert.deepEqual(seen, [[trial.trial_id, { order: 42, cents: 100 }, 1, "dead"], { receipt: "r_1" }, undefined, undefined, undefined, "charged", ["charge:42", "mail:42"]]);
    assert.deepEqual(calls, [`mail job ${other.id}`]);
    // The message is as it was; its history gained one `trial` entry.
    const now = await client.get("tried", m.id);
    for (const key of ["status", "attempts", "retry_count", "checkpoint", "last_error", "updated_at", "payload"] as const) assert.deepEqual(now[key], m[key], key);
    const last = (await client.attempts("tried", m.id)).at(-1)!;
    assert.deepEqual([last.outcome, last.attempt, last.trial?.trial_id, last.trial?.status], ["trial", 1, trial.trial_id, "succeeded"]);
    // What went where.
    const trialClaims = claims(proxy, true);
    assert.ok(trialClaims.length > 0);
    assert.ok(trialClaims.every((b) => JSON.stringify(b.job_types) === '["charge"]' && b.ack === undefined));
    const base = `/queues/tried/messages/${m.id}`;
    const to = (suffix: string) => proxy.seen.filter((s) => path(s) === `${base}${suffix}`);
    assert.deepEqual(to("/effects"), []);
    assert.deepEqual(to("/extend"), []);
    const beats = to(`/trials/${trial.trial_id}/extend`);
    assert.ok(beats.length > 0);
    assert.ok(beats.every((s) => s.body.checkpoint === undefined));
    assert.equal(to(`/trials/${trial.trial_id}/succeed`).length, 1);
    assertTrialLeasesStayOnTrialRoutes(proxy);
    await proxy.close();
  });

  it("a throwing handler fails the trial with its error and class", async () => {
    const { proxy, client } = await setup();
    const m = await dead(client, "throwing");
    const trial = await client.startTrial("throwing", m.id);
    const w = worker(proxy, "throwing", 2);
    w.handle(
      "charge",
      async (job) => {
        await job.effect("charge:7", () => undefined, { description: "charge 7.00" });
        throw new InvalidInput("the card cannot be charged", { cause: new Declined("card expired") });
      },
      { trials: true },
    );
    const running = w.run();
    const done = await ended(client, "throwing", m.id, trial.trial_id);
    await w.stop();
    await running;
    assert.deepEqual([done.status, done.error, done.error_class, done.cause], ["failed", "InvalidInput: the card cannot be charged", "invalid_input", "Declined: card expired"]);
    assert.match(done.stack ?? "", /InvalidInput: the card cannot be charged\n\s+at /);
    assert.deepEqual(done.would_effects, [{ key: "charge:7", description: "charge 7.00" }]);
    assert.equal((await client.get("throwing", m.id)).status, "dead");
    assert.deepEqual(
      (await client.attempts("throwing", m.id)).map((a) => a.outcome),
      ["failed", "trial"],
    );
    assert.deepEqual(
      proxy.seen.filter((s) => path(s) === `/queues/throwing/messages/${m.id}/fail`),
      [],
    );
    assertTrialLeasesStayOnTrialRoutes(proxy);
    await proxy.close();
  });

  it("Snooze fails the trial", async () => {
    const { proxy, client } = await setup();
    const m = await dead(client, "snoozing");
    const trial = await client.startTrial("snoozing", m.id);
    const w = worker(proxy, "snoozing", 2);
    w.handle(
      "charge",
      () => {
        throw new Snooze(30);
      },
      { trials: true },
    );
    const running = w.run();
    const done = await ended(client, "snoozing", m.id, trial.trial_id);
    await w.stop();
    await running;
    assert.equal(done.status, "failed");
    assert.match(done.error ?? "", /snoozed during a trial/);
    assert.deepEqual(
      proxy.seen.filter((s) => path(s).endsWith("/release")),
      [],
    );
    assert.equal((await client.get("snoozing", m.id)).status, "dead");
    await proxy.close();
  });

  it("shutdown gives a running trial nothing back: its signal aborts and it expires on dlqd", async () => {
    const { proxy, client } = await setup();
    const m = await dead(client, "shutdown");
    const trial = await client.startTrial("shutdown", m.id);
    let started = false;
    const reasons: unknown[] = [];
    const w = worker(proxy, "shutdown", 2, { shutdownTimeout: 0.3 });
    w.handle(
      "charge",
      async (job) => {
        started = true;
        await new Promise<void>((resolve) => job.signal.addEventListener("abort", () => resolve(), { once: true }));
        reasons.push((job.signal.reason as Error).name);
      },
      { trials: true },
    );
    const running = w.run();
    await waitFor("the trial to start", () => started, 5000, 20);
    await w.stop();
    await running;
    await waitFor("the handler to see the abort", () => reasons.length > 0, 5000, 20);
    await sleep(100);
    assert.deepEqual(reasons, ["ShutdownError"]);
    assert.equal((await client.trial("shutdown", m.id, trial.trial_id)).status, "running");
    assert.deepEqual(
      proxy.seen.filter((s) => /\/trials\/\d+\/(succeed|fail)$/.test(path(s)) || path(s).endsWith("/release")),
      [],
    );
    assertTrialLeasesStayOnTrialRoutes(proxy);
    await proxy.close();
  });

  it("a batch of trials runs side by side; an idle trials claim holds one slot", async () => {
    const { proxy, client } = await setup();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await dead(client, "batch")).id);
    let now = 0;
    let most = 0;
    const w = worker(proxy, "batch", 4);
    w.handle(
      "charge",
      async () => {
        most = Math.max(most, ++now);
        await sleep(300);
        now--;
      },
      { trials: true },
    );
    const running = w.run();
    await sleep(200); // both loops parked
    const trials = await client.startTrials(ids, { reason: "try the sample" });
    assert.deepEqual(
      trials.map((t) => t.message_id),
      ids,
    );
    const done: Trial[] = [];
    for (const [i, t] of trials.entries()) done.push(await ended(client, "batch", ids[i], t.trial_id));
    await w.stop();
    await running;
    assert.deepEqual(
      done.map((t) => t.status),
      ["succeeded", "succeeded", "succeeded"],
    );
    assert.ok(most >= 2, `trials ran one after the other (${most})`);
    const trialClaims = claims(proxy, true);
    assert.ok(trialClaims.filter((b) => b.wait_seconds > 0).every((b) => b.max === 1));
    assert.ok(trialClaims.some((b) => b.wait_seconds === 0 && b.max > 1));
    await proxy.close();
  });

  for (const [name, concurrency, mails, charges] of [
    ["ordinary jobs still run beside trials, within concurrency", 3, 12, 8],
    ["with concurrency 1 the two loops take turns", 1, 3, 2],
  ] as const) {
    it(name, async () => {
      const { proxy, client } = await setup();
      const queue = `mixed${concurrency}`;
      const m = await dead(client, queue);
      const items = [...Array(mails).keys()].map((i) => ({ payload: String(i), jobType: "mail" })).concat([...Array(charges).keys()].map((i) => ({ payload: String(i), jobType: "charge" })));
      const enqueued = await client.enqueueBatch(queue, items);
      const trial = await client.startTrial(queue, m.id);
      let now = 0;
      let most = 0;
      const ran: string[] = [];
      // Slots held by claims in flight, plus handlers running: never more than `concurrency`.
      let held = 0;
      let mostHeld = 0;
      const c = new Client({ url: proxy.url });
      const claim = c.claim.bind(c);
      c.claim = async (q, options = {}, call) => {
        held += options.max ?? 1;
        mostHeld = Math.max(mostHeld, held + now);
        try {
          return await claim(q, options, call);
        } finally {
          held -= options.max ?? 1;
        }
      };
      const busy = async (job: Job) => {
        most = Math.max(most, ++now);
        ran.push(`${job.jobType}${job.trial !== undefined ? " trial" : ""}`);
        await sleep(50);
        now--;
      };
      const w = newWorker({ queue, client: c, concurrency, waitSeconds: 1, startupDelay: 0, handleSignals: false, logger: recordingLogger() });
      w.handle("charge", busy, { trials: true });
      w.handle("mail", busy);
      const running = w.run();
      await waitFor("every job", async () => (await client.stats(queue)).succeeded === enqueued.length, 8000, 20);
      const done = await ended(client, queue, m.id, trial.trial_id);
      await w.stop();
      await running;
      c.close();
      assert.equal(done.status, "succeeded");
      assert.ok(most <= concurrency, `${most} handlers at once`);
      assert.ok(mostHeld <= concurrency, `${mostHeld} slots held at once`);
      assert.deepEqual(ran.sort(), [...Array(charges).fill("charge"), "charge trial", ...Array(mails).fill("mail")].sort());
      await proxy.close();
    });
  }

  it("the client's trial calls: a claim with trials needs job types; answers under a gone lease are lease-lost", async () => {
    const { proxy, client } = await setup();
    const m = await dead(client, "calls");
    await assert.rejects(client.claim("calls", { trials: true }), { name: "ValidationError" });
    const trial = await client.startTrial("calls", m.id);
    const again = await client.startTrial("calls", m.id);
    assert.equal(again.trial_id, trial.trial_id); // one open trial per message
    const [claimed] = (await client.claim("calls", { trials: true, jobTypes: ["charge"], max: 2 })).messages;
    assert.equal(claimed.trial_id, trial.trial_id);
    assert.equal((await client.extendTrial("calls", m.id, trial.trial_id, claimed.lease_id, { seconds: 5 })).status, "running");
    const failed = await client.failTrial("calls", m.id, trial.trial_id, claimed.lease_id, { error: "Error: nope", error_class: "unknown", would_effects: [{ key: "k", description: null }] });
    assert.deepEqual([failed.status, failed.would_effects], ["failed", [{ key: "k", description: null }]]);
    await assert.rejects(client.succeedTrial("calls", m.id, trial.trial_id, claimed.lease_id), { name: "LeaseLostError" });
    await assert.rejects(client.fail("calls", m.id, claimed.lease_id, { error: "x" }), { name: "LeaseLostError" });
    await assert.rejects(client.trial("calls", m.id, 999), { name: "NotFoundError" });
    await proxy.close();
  });
});

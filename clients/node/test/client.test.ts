// Client against a real dlqd: every call with its options, every error kind; the shared problem
// vectors against a scripted server; and each call's retry rule (what is resent, what is not).

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import {
  Client,
  ConflictError,
  DlqError,
  ForbiddenError,
  InvalidStateError,
  LeaseLostError,
  NotFoundError,
  PayloadTooLargeError,
  TransportError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from "../src/index.js";
import * as lib from "../src/index.js";
import { freePort, hashToken, sleep, startDlqd, startFake, vectors, watchUnhandled } from "./helpers.js";

const unhandled = watchUnhandled();
after(() => assert.deepEqual(unhandled, [], "no unhandled rejections"));

describe("client", { concurrency: true, timeout: 60000 }, () => {
  it("enqueue with every option, get, list, stats, queues", async () => {
    const d = await startDlqd();
    const c = new Client({ url: d.url });
    const a = await c.enqueue("mail", { to: "a@example.com" }, { maxRetries: 5, jobType: "send", priority: 7, idempotencyKey: "k-1" });
    assert.equal(a.payload, '{"to":"a@example.com"}');
    assert.equal(a.max_retries, 5);
    assert.equal(a.job_type, "send");
    assert.equal(a.priority, 7);
    assert.equal(a.idempotency_key, "k-1");
    assert.equal(a.status, "pending");
    const again = await c.enqueue("mail", "other", { idempotencyKey: "k-1" });
    assert.equal(again.id, a.id, "a held idempotency key returns the holder");
    const delayed = await c.enqueue("mail", "later", { delaySeconds: 3600 });
    assert.ok(delayed.retry_after !== null && Date.parse(delayed.retry_after) > Date.now() + 3500e3);
    const runAt = new Date(Date.now() + 7200e3);
    const scheduled = await c.enqueue("mail", "at", { runAt });
    assert.ok(Math.abs(Date.parse(scheduled.retry_after!) - runAt.getTime()) < 1000);
    const text = await c.enqueue("mail", "plain text");
    assert.equal(text.payload, "plain text", "strings are sent as they are");

    assert.deepEqual((await c.get("mail", a.id)).id, a.id);
    assert.equal((await c.get("mail", String(a.id))).id, a.id);
    const page = await c.list("mail", { status: "pending", limit: 2, offset: 1, order: "desc" });
    assert.equal(page.count, 2);
    assert.deepEqual(
      page.messages.map((m) => m.id),
      [scheduled.id, delayed.id],
    );
    assert.equal((await c.list("mail", { jobType: "send" })).count, 1);
    const stats = await c.stats("mail");
    assert.equal(stats.ready, 2);
    assert.equal(stats.scheduled, 2);
    await c.enqueue("zzz", "x");
    assert.deepEqual(
      (await c.queues()).map((q) => [q.queue, q.ready]),
      [
        ["mail", 2],
        ["zzz", 1],
      ],
    );
  });

  it("queues and attempts read every page", async () => {
    const fake = await startFake((req, _body, _n, res) => {
      const url = new URL(req.url!, "http://x");
      res.writeHead(200, { "Content-Type": "application/json" });
      if (url.pathname === "/queues") {
        const after = url.searchParams.get("after");
        res.end(JSON.stringify(after === null ? { queues: [{ queue: "a" }, { queue: "b" }], next_after: "b" } : { queues: [{ queue: "c" }], next_after: null }));
      } else {
        const after = Number(url.searchParams.get("after") ?? 0);
        const page = after === 0 ? [{ attempt: 1 }, { attempt: 2 }] : after === 2 ? [{ attempt: 3 }] : [];
        res.end(JSON.stringify({ attempts: page, count: page.length, next_after: after === 0 ? 2 : null }));
      }
    });
    const c = new Client({ url: fake.url });
    assert.deepEqual(
      (await c.queues()).map((q) => q.queue),
      ["a", "b", "c"],
    );
    assert.deepEqual(
      (await c.attempts("q", 5)).map((a) => a.attempt),
      [1, 2, 3],
    );
    assert.deepEqual(
      fake.requests.map((r) => r.url),
      ["/queues", "/queues?after=b", "/queues/q/messages/5/attempts", "/queues/q/messages/5/attempts?after=2"],
    );
    await fake.close();
  });

  it("enqueueBatch, claim, ack, succeed, extend, release, fail, attempts, deadLetters, replay", async () => {
    const d = await startDlqd();
    const c = new Client({ url: d.url });
    const batch = await c.enqueueBatch("w", [
      { payload: { n: 1 }, jobType: "t", maxRetries: 1 },
      { payload: { n: 2 }, jobType: "t" },
      { payload: "three", jobType: "u", idempotencyKey: "three" },
      { payload: "four", jobType: "t" },
    ]);
    assert.equal(batch.length, 4);
    assert.deepEqual(
      batch.map((m) => m.payload),
      ['{"n":1}', '{"n":2}', "three", "four"],
    );
    const empty = await c.claim("w", { jobTypes: ["nope"], max: 5 });
    assert.deepEqual(empty, { claimed: false, messages: [] });
    const got = await c.claim("w", { jobTypes: ["t"], max: 2, visibilityTimeout: 60, worker: "tester:1" });
    assert.equal(got.claimed, true);
    assert.deepEqual(
      got.messages.map((m) => m.id),
      [batch[0].id, batch[1].id],
    );
    const [m1, m2] = got.messages;
    assert.match(m1.lease_id, /^[0-9a-f]{32}-\d+$/);

    const ext = await c.extend("w", m2.id, m2.lease_id, { seconds: 120, checkpoint: "half" });
    assert.equal(ext.checkpoint, "half");
    assert.ok(Date.parse(ext.lease_expires_at!) > Date.now() + 100e3);
    const released = await c.release("w", m2.id, m2.lease_id, { delaySeconds: 30 });
    assert.equal(released.status, "pending");
    assert.ok(Date.parse(released.retry_after!) > Date.now() + 25e3);

    const failed = await c.fail("w", m1.id, m1.lease_id, { error: "boom", error_class: "transient", stack: "Error: boom\n    at x (/a.js:1:2)", cause: "disk full", fingerprint: "boom.disk" });
    assert.equal(failed.status, "dead");
    assert.equal(failed.dead_reason, "retries_exhausted");
    const hist = await c.attempts("w", m1.id);
    assert.equal(hist.length, 1);
    assert.equal(hist[0].outcome, "failed");
    assert.equal(hist[0].worker, "tester:1");
    assert.equal(hist[0].cause, "disk full");

    const dead = await c.deadLetters({ queue: "w", errorClass: "transient", limit: 10 });
    assert.deepEqual(
      dead.messages.map((m) => m.id),
      [m1.id],
    );
    assert.equal((await c.deadLetters({ queue: "w", deadReason: "non_retryable" })).count, 0);

    const preview = await c.replay("w", m1.id, { dryRun: true, reason: "look" });
    assert.equal(preview.dry_run, true);
    assert.equal(preview.message.status, "pending");
    assert.equal((await c.get("w", m1.id)).status, "dead", "a dry run changes nothing");
    const replayed = await c.replay("w", m1.id, { reason: "fixed", payload: { n: 10 } });
    assert.equal(replayed.status, "pending");
    assert.equal(replayed.replay_count, 1);
    assert.equal((await c.get("w", m1.id)).payload, '{"n":10}');

    const next = await c.claim("w", { max: 10, jobTypes: ["t", "u"], ack: [] });
    assert.deepEqual(next.acked, []);
    const ids = next.messages.map((m) => m.id).sort((x, y) => x - y);
    assert.deepEqual(ids, [m1.id, batch[2].id, batch[3].id]);
    const byId = new Map(next.messages.map((m) => [m.id, m]));
    const results = await c.ack("w", [
      { id: m1.id, lease_id: byId.get(m1.id)!.lease_id },
      { id: batch[2].id, lease_id: "0".repeat(32) + "-" + batch[2].id },
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 409],
    );
    const done = await c.succeed("w", batch[2].id, byId.get(batch[2].id)!.lease_id);
    assert.equal(done.status, "succeeded");
    // An ack riding on a claim.
    const rode = await c.claim("w", { max: 1, ack: [{ id: batch[3].id, lease_id: byId.get(batch[3].id)!.lease_id }] });
    assert.deepEqual(rode.acked, [{ id: batch[3].id, status: 200, error: null }]);
    assert.equal((await c.get("w", batch[3].id)).status, "succeeded");
  });

  it("every error kind from a real dlqd", async () => {
    const d = await startDlqd();
    const c = new Client({ url: d.url });
    const v = await c.enqueue("e", "x").catch((e) => e);
    assert.ok(!(v instanceof Error));
    const invalid = await c.enqueue("e", "").catch((e) => e);
    assert.ok(invalid instanceof ValidationError);
    assert.equal(invalid.status, 422);
    assert.equal(invalid.slug, "validation-failed");
    assert.equal(invalid.errors[0].field, "payload");
    const missing = await c.get("e", 999999).catch((e) => e);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.slug, "message-not-found");
    assert.ok(missing.requestId);
    const badQueue = await c.stats("bad name!").catch((e) => e);
    assert.ok(badQueue instanceof NotFoundError);
    const m = await c.enqueue("e", "y", { maxRetries: 1, idempotencyKey: "K" });
    const state = await c.replay("e", m.id).catch((e) => e);
    assert.ok(state instanceof InvalidStateError);
    assert.equal(state.slug, "invalid-state");
    const lost = await c.extend("e", m.id, "f".repeat(32) + "-" + m.id).catch((e) => e);
    assert.ok(lost instanceof LeaseLostError);
    assert.equal(lost.status, 409);
    // Idempotency conflict: the dead holder's key is taken by a new message.
    const { messages } = await c.claim("e", { max: 10 });
    const mine = messages.find((x) => x.id === m.id)!;
    await c.fail("e", m.id, mine.lease_id, { error: "x" });
    await c.enqueue("e", "z", { idempotencyKey: "K" });
    const conflict = await c.replay("e", m.id).catch((e) => e);
    assert.ok(conflict instanceof ConflictError);
    assert.equal(conflict.slug, "idempotency-conflict");
    const big = await c.enqueue("e", "x".repeat(1100000)).catch((e) => e);
    assert.ok(big instanceof PayloadTooLargeError);
    assert.equal(big.status, 413);
    // Checked before sending.
    const cp = await c.extend("e", m.id, mine.lease_id, { checkpoint: "é".repeat(2049) }).catch((e) => e);
    assert.ok(cp instanceof ValidationError);
    assert.equal(cp.errors[0].field, "checkpoint");
    const fp = await c.fail("e", m.id, mine.lease_id, { error: "x", fingerprint: "has space" }).catch((e) => e);
    assert.ok(fp instanceof ValidationError);
    assert.equal(fp.errors[0].field, "fingerprint");
  });

  it("401 and 403 with tokens, DLQ_URL and DLQ_TOKEN from the environment", async () => {
    const d = await startDlqd({
      config: {
        auth: {
          tokens: [
            { name: "prod", token_sha256: hashToken("producer-secret"), roles: ["producer"] },
            { name: "ops", token_sha256: hashToken("admin-secret"), roles: ["admin"] },
          ],
        },
      },
    });
    const anon = await new Client({ url: d.url }).enqueue("a", "x").catch((e) => e);
    assert.ok(anon instanceof UnauthorizedError);
    assert.equal(anon.slug, "unauthorized");
    const wrong = await new Client({ url: d.url, token: "nope" }).get("a", 1).catch((e) => e);
    assert.ok(wrong instanceof UnauthorizedError);
    const producer = new Client({ url: d.url, token: "producer-secret" });
    const m = await producer.enqueue("a", "x");
    const forbidden = await producer.get("a", m.id).catch((e) => e);
    assert.ok(forbidden instanceof ForbiddenError);
    assert.equal(forbidden.status, 403);
    const saved = { url: process.env.DLQ_URL, token: process.env.DLQ_TOKEN };
    process.env.DLQ_URL = d.url;
    process.env.DLQ_TOKEN = "admin-secret";
    const fromEnv = new Client();
    if (saved.url === undefined) delete process.env.DLQ_URL;
    else process.env.DLQ_URL = saved.url;
    if (saved.token === undefined) delete process.env.DLQ_TOKEN;
    else process.env.DLQ_TOKEN = saved.token;
    assert.equal(fromEnv.url, d.url);
    assert.equal((await fromEnv.get("a", m.id)).id, m.id);
  });

  it("the shared problem vectors raise the named errors", async () => {
    const { problems } = vectors();
    let current = problems[0];
    const fake = await startFake((_req, _body, _n, res) => {
      const isText = typeof current.body === "string";
      res.writeHead(current.status, { "Content-Type": isText ? "text/html" : "application/problem+json" });
      res.end(isText ? (current.body as string) : JSON.stringify(current.body));
    });
    const c = new Client({ url: fake.url, retries: 0 });
    for (const v of problems) {
      current = v;
      const err = await c.get("q", 1).catch((e) => e);
      const cls = (lib as Record<string, unknown>)[v.error] as new (...a: never[]) => Error;
      assert.equal(typeof cls, "function", `${v.error} is exported`);
      assert.ok(err instanceof cls, `${v.status} ${v.slug} → ${v.error}, got ${err?.name}`);
      assert.ok(err instanceof DlqError);
      assert.equal(err.name, v.error);
      assert.equal(err.status, v.status);
      assert.equal(err.slug, v.slug);
      if (typeof v.body === "object" && v.body !== null && "detail" in v.body) assert.equal(err.detail, (v.body as { detail: string }).detail);
      else assert.ok(typeof err.detail === "string" && err.detail !== "");
      if (v.errors) assert.deepEqual((err as ValidationError).errors, v.errors);
    }
    await fake.close();
  });

  it("retries: reads and keyed enqueues are resent after a broken connection, plain enqueues are not", async () => {
    // Each path's first request has its connection destroyed; later ones are answered.
    const firstSeen = new Set<string>();
    const fake = await startFake((req, _body, _n, res) => {
      const key = `${req.method} ${req.url}`;
      if (!firstSeen.has(key)) {
        firstSeen.add(key);
        req.socket.destroy();
        return;
      }
      res.writeHead(req.method === "POST" ? 201 : 200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ id: 1, queue: "q", payload: "x", status: "pending" }));
    });
    const c = new Client({ url: fake.url });
    assert.equal((await c.get("r", 1)).id, 1);
    assert.equal(fake.requests.filter((r) => r.url === "/queues/r/messages/1").length, 2);
    const plain = await c.enqueue("plain", "x").catch((e) => e);
    assert.ok(plain instanceof TransportError);
    assert.equal(plain.sent, true);
    assert.equal(fake.requests.filter((r) => r.url === "/queues/plain/messages").length, 1, "an enqueue without a key is sent once");
    assert.equal((await c.enqueue("keyed", "x", { idempotencyKey: "k" })).id, 1);
    assert.equal(fake.requests.filter((r) => r.url === "/queues/keyed/messages").length, 2);
    const replay = await c.replay("rp", 1).catch((e) => e);
    assert.ok(replay instanceof TransportError);
    assert.equal(fake.requests.filter((r) => r.url === "/queues/rp/messages/1/replay").length, 1);
    await fake.close();
  });

  it("retries: an answer is never retried by the client, a 503 neither", async () => {
    const fake = await startFake((_req, _body, _n, res) => {
      res.writeHead(503, { "Content-Type": "application/problem+json" });
      res.end(JSON.stringify({ type: "https://dlq.dev/problems/shutting-down", status: 503, detail: "shutting down" }));
    });
    const c = new Client({ url: fake.url });
    const read = await c.get("g", 5).catch((e) => e);
    assert.ok(read instanceof UnavailableError);
    assert.equal(read.slug, "shutting-down");
    const ack = await c.ack("g", [{ id: 1, lease_id: "l" }]).catch((e) => e);
    assert.ok(ack instanceof UnavailableError);
    assert.equal(fake.requests.length, 2, "one request each");
    await fake.close();
  });

  it("retries: a refused connection (nothing sent) is retried even for a plain enqueue", async () => {
    const port = await freePort();
    const c = new Client({ url: `http://127.0.0.1:${port}` });
    const started = Date.now();
    const late = sleep(100).then(() =>
      startFake((_req, _body, _n, res) => {
        res.writeHead(201, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ id: 7 }));
      }, port),
    );
    const m = await c.enqueue("q", "x");
    assert.equal(m.id, 7);
    const fake = await late;
    assert.equal(fake.requests.length, 1);
    assert.ok(Date.now() - started >= 100);
    await fake.close();
  });

  it("a TransportError when dlqd cannot be reached, after the retries", async () => {
    const port = await freePort();
    const c = new Client({ url: `http://127.0.0.1:${port}`, retries: 2 });
    const err = await c.stats("q").catch((e) => e);
    assert.ok(err instanceof TransportError);
    assert.ok(err instanceof DlqError);
    assert.equal(err.name, "TransportError");
    assert.equal(err.status, 0);
    assert.equal(err.code, "ECONNREFUSED");
    assert.equal(err.sent, false);
  });

  it("a claim is cancelled by its signal, and dlqd gives back what it held for it", async () => {
    const d = await startDlqd();
    const c = new Client({ url: d.url });
    const ac = new AbortController();
    const parked = c.claim("lp", { waitSeconds: 30, max: 1 }, { signal: ac.signal });
    await sleep(300);
    ac.abort();
    const err = await parked.catch((e) => e);
    assert.equal(err.name, "AbortError");
    const m = await c.enqueue("lp", "x");
    const got = await c.claim("lp", { max: 1 });
    assert.deepEqual(
      got.messages.map((x) => x.id),
      [m.id],
      "the cancelled claim took nothing",
    );
  });
});

// The anonymous SQS front (neither auth.tokens nor sqs.access_keys: any signature or none) through
// the pinned @aws-sdk/client-sqs: queues, messages and their attributes and digests, batches,
// delays, long polls, expiry and receive counts, receipt handles, errors, purge and tags.

import { describe, it } from "node:test";
import * as assert from "node:assert/strict";
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  ListQueuesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { ACCOUNT, REGION, client, codeOf, dlqApi, md5Hex, md5OfAttributes, queueUrl, rawSqs, refused, sleep, uniqueName, useDlqd } from "./harness.js";

const T = { timeout: 30000 };
const NON_EXISTENT = { type: "QueueDoesNotExist", status: 400, code: "AWS.SimpleQueueService.NonExistentQueue" };
const HANDLE_INVALID = { type: "ReceiptHandleIsInvalid", status: 404, code: codeOf("ReceiptHandleIsInvalid") };

async function create(sqs, name, extra = {}) {
  return (await sqs.send(new CreateQueueCommand({ QueueName: name, ...extra }))).QueueUrl;
}

async function attributes(sqs, url) {
  return (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }))).Attributes ?? {};
}

/** ready / in flight / delayed, from GetQueueAttributes. */
async function counts(sqs, url) {
  const a = await attributes(sqs, url);
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    notVisible: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

async function receive(sqs, url, input = {}) {
  return (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0, ...input }))).Messages ?? [];
}

/** Receives until `n` messages were seen (each receive keeps what it got in flight). */
async function receiveN(sqs, url, n, input = {}, deadlineMs = 8000) {
  const got = [];
  const end = Date.now() + deadlineMs;
  while (got.length < n && Date.now() < end) got.push(...(await receive(sqs, url, { MaxNumberOfMessages: 10, WaitTimeSeconds: 1, ...input })));
  return got;
}

const ALL = { AttributeNames: ["All"], MessageSystemAttributeNames: ["All"] };

/** MessageAttributes as plain values, BinaryValue as a Buffer, for deepEqual. */
function plain(attrs) {
  const out = {};
  for (const [k, v] of Object.entries(attrs ?? {})) {
    out[k] = { DataType: v.DataType };
    if (v.StringValue !== undefined) out[k].StringValue = v.StringValue;
    if (v.BinaryValue !== undefined) out[k].BinaryValue = Buffer.from(v.BinaryValue);
  }
  return out;
}

function pick(attrs, names) {
  return Object.fromEntries(names.map((n) => [n, attrs[n]]));
}

export function anonymousFront(db) {
  describe(`anonymous SQS front (${db})`, { concurrency: true }, () => {
    const ctx = useDlqd(db);

    it("CreateQueue answers the queue URL; a repeat, GetQueueUrl and GetQueueAttributes agree", T, async () => {
      const sqs = client(ctx);
      const name = uniqueName("created");
      const before = Math.floor(Date.now() / 1000);
      const made = await sqs.send(new CreateQueueCommand({ QueueName: name }));
      assert.equal(made.QueueUrl, queueUrl(ctx, name));
      assert.equal(made.$metadata.httpStatusCode, 200);
      assert.ok(made.$metadata.requestId, "x-amzn-RequestId on a success");
      assert.equal(await create(sqs, name), made.QueueUrl, "CreateQueue of an existing queue with no attributes");
      assert.equal(await create(sqs, name, { Attributes: { VisibilityTimeout: "30" } }), made.QueueUrl, "matching effective attributes");
      await refused(sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "45" } })), {
        type: "QueueNameExists",
        status: 400,
        code: "QueueAlreadyExists",
      });
      assert.equal((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl, made.QueueUrl);
      const a = await attributes(sqs, made.QueueUrl);
      assert.equal(a.QueueArn, `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`);
      assert.equal(a.VisibilityTimeout, "30");
      assert.equal(a.DelaySeconds, "0");
      assert.equal(a.ReceiveMessageWaitTimeSeconds, "0");
      assert.equal(a.ApproximateNumberOfMessages, "0");
      assert.equal(a.ApproximateNumberOfMessagesNotVisible, "0");
      assert.equal(a.ApproximateNumberOfMessagesDelayed, "0");
      const createdAt = Number(a.CreatedTimestamp);
      assert.ok(createdAt >= before - 2 && createdAt <= Date.now() / 1000 + 2, `CreatedTimestamp in epoch seconds: ${a.CreatedTimestamp}`);
      assert.ok(Number.isInteger(Number(a.LastModifiedTimestamp)), `LastModifiedTimestamp: ${a.LastModifiedTimestamp}`);
    });

    it("a message sent through SQS is a dlq message: MessageId is its id in decimal", T, async () => {
      const sqs = client(ctx);
      const name = uniqueName("ids");
      const url = await create(sqs, name);
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "seen by dlq" }));
      assert.match(sent.MessageId, /^[1-9][0-9]*$/);
      const shown = await dlqApi(ctx, `/queues/${name}/messages/${sent.MessageId}`);
      assert.equal(shown.status, 200, JSON.stringify(shown.body));
      assert.equal(shown.body.id, Number(sent.MessageId));
      assert.equal(shown.body.queue, name);
    });

    it("ListQueues pages with MaxResults and NextToken, filtered by QueueNamePrefix, in byte order", T, async () => {
      const sqs = client(ctx);
      const prefix = uniqueName("list");
      // Byte order puts "C" before "a".
      const names = ["e", "a", "C", "b", "d"].map((s) => `${prefix}-${s}`);
      for (const n of names) await create(sqs, n);
      const expected = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))).map((n) => queueUrl(ctx, n));
      assert.equal(expected[0], queueUrl(ctx, `${prefix}-C`));

      const pages = [];
      let token;
      do {
        const page = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix, MaxResults: 2, NextToken: token }));
        pages.push(page.QueueUrls ?? []);
        token = page.NextToken;
        assert.ok(pages.length <= 5, "paging ends");
      } while (token);
      assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
      assert.deepEqual(pages.flat(), expected);

      const none = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: `${prefix}-zz` }));
      assert.deepEqual(none.QueueUrls ?? [], []);
      assert.equal(none.NextToken, undefined);

      // Unfiltered, one page: every queue once, in byte order, ours among them.
      const all = (await sqs.send(new ListQueuesCommand({ MaxResults: 1000 }))).QueueUrls ?? [];
      const allNames = all.map((u) => u.slice(u.lastIndexOf("/") + 1));
      for (let i = 1; i < allNames.length; i++) assert.ok(Buffer.compare(Buffer.from(allNames[i - 1]), Buffer.from(allNames[i])) < 0, `byte order at ${i}: ${allNames[i - 1]} ${allNames[i]}`);
      for (const u of expected) assert.ok(all.includes(u), `${u} listed`);

      await refused(sqs.send(new ListQueuesCommand({ MaxResults: 1001 })), { type: "InvalidParameterValue", status: 400 });
    });

    it("DeleteQueue removes the queue with its messages, audited; the name is free at once", T, async () => {
      const sqs = client(ctx);
      const name = uniqueName("deleted");
      const url = await create(sqs, name);
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "one" }));
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "two" }));
      await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
      await refused(sqs.send(new GetQueueUrlCommand({ QueueName: name })), NON_EXISTENT);
      await refused(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "three" })), NON_EXISTENT);
      assert.deepEqual((await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? [], []);
      await refused(sqs.send(new DeleteQueueCommand({ QueueUrl: url })), NON_EXISTENT);

      // Other attributes than before: a kept registry row would answer QueueNameExists.
      assert.equal(await create(sqs, name, { Attributes: { DelaySeconds: "3" } }), url);
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0, delayed: 0 }, "the old messages went with the queue");
      assert.equal((await attributes(sqs, url)).DelaySeconds, "3");

      const audit = await dlqApi(ctx, `/audit?action=purge&queue=${name}`);
      assert.equal(audit.status, 200);
      const entries = audit.body.entries.filter((e) => e.filter?.sqs_action === "DeleteQueue");
      assert.ok(entries.length >= 1, JSON.stringify(audit.body));
      for (const e of entries) assert.equal(e.queue, name);
      assert.equal(entries.reduce((n, e) => n + e.details.purged, 0), 2, JSON.stringify(entries));
    });

    it("String, Number and Binary attributes round-trip with exact MD5OfMessageBody and MD5OfMessageAttributes", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("attrs"));
      const body = "héllo wörld ✓ 𝄞 <&> \"quoted\"\ttab\nline\rreturn";
      const attrs = {
        "attr.s": { DataType: "String", StringValue: "naïve ✓ 𝄞" },
        "attr.n": { DataType: "Number", StringValue: "-12.50" },
        "attr.b": { DataType: "Binary", BinaryValue: Uint8Array.from([0, 1, 2, 127, 128, 254, 255]) },
        kind: { DataType: "String.custom", StringValue: "order" },
        count: { DataType: "Number.int", StringValue: "42" },
      };
      const expectedAll = md5OfAttributes(attrs);
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageAttributes: attrs }));
      assert.equal(sent.MD5OfMessageBody, md5Hex(Buffer.from(body, "utf8")));
      assert.equal(sent.MD5OfMessageAttributes, expectedAll);

      const [all] = await receive(sqs, url, { MessageAttributeNames: ["All"], ...ALL, VisibilityTimeout: 30 });
      assert.ok(all, "received");
      assert.equal(all.MessageId, sent.MessageId);
      assert.equal(all.Body, body);
      assert.equal(all.MD5OfBody, sent.MD5OfMessageBody);
      assert.deepEqual(plain(all.MessageAttributes), plain(attrs));
      assert.equal(all.MD5OfMessageAttributes, expectedAll);

      // The digest covers the attributes returned: a prefix, then names.
      const again = async (names) => {
        const [m] = await receive(sqs, url, { WaitTimeSeconds: 2, VisibilityTimeout: 30, ...(names ? { MessageAttributeNames: names } : {}) });
        assert.ok(m, `received again (${names})`);
        await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }));
        return m;
      };
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: all.ReceiptHandle, VisibilityTimeout: 0 }));
      const prefixed = await again(["attr.*"]);
      assert.deepEqual(plain(prefixed.MessageAttributes), plain(pick(attrs, ["attr.s", "attr.n", "attr.b"])));
      assert.equal(prefixed.MD5OfMessageAttributes, md5OfAttributes(pick(attrs, ["attr.s", "attr.n", "attr.b"])));
      const named = await again(["kind", "count"]);
      assert.deepEqual(plain(named.MessageAttributes), plain(pick(attrs, ["kind", "count"])));
      assert.equal(named.MD5OfMessageAttributes, md5OfAttributes(pick(attrs, ["kind", "count"])));
      const bare = await again(undefined);
      assert.equal(bare.MessageAttributes, undefined, "no attributes unless asked for");
      assert.equal(bare.MD5OfMessageAttributes, undefined, "no attribute digest without attributes");
      assert.equal(bare.MD5OfBody, sent.MD5OfMessageBody);
    });

    it("SendMessageBatch: one bad entry fails alone; 11 entries and twin Ids refuse the whole request", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("batch"));
      const attrs = { n: { DataType: "Number", StringValue: "7" }, b: { DataType: "Binary", BinaryValue: Uint8Array.from([9, 0, 9]) } };
      const out = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: "ok-1", MessageBody: "first" },
            { Id: "bad", MessageBody: "a\u0000b" },
            { Id: "ok_2", MessageBody: "second ✓", MessageAttributes: attrs },
          ],
        }),
      );
      assert.deepEqual((out.Successful ?? []).map((e) => e.Id).sort(), ["ok-1", "ok_2"]);
      const ok = ["ok-1", "ok_2"].map((id) => out.Successful.find((e) => e.Id === id));
      assert.equal(ok[0].MD5OfMessageBody, md5Hex("first"));
      assert.equal(ok[1].MD5OfMessageBody, md5Hex(Buffer.from("second ✓", "utf8")));
      assert.equal(ok[1].MD5OfMessageAttributes, md5OfAttributes(attrs));
      for (const e of ok) assert.match(e.MessageId, /^[1-9][0-9]*$/);
      assert.notEqual(ok[0].MessageId, ok[1].MessageId);
      assert.equal(out.Failed?.length, 1, JSON.stringify(out.Failed));
      const [failed] = out.Failed;
      assert.equal(failed.Id, "bad");
      assert.equal(failed.SenderFault, true);
      assert.equal(failed.Code, "InvalidMessageContents");
      assert.ok(failed.Message, "a message for the failed entry");

      const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `m${i}`, MessageBody: `n${i}` }));
      await refused(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: eleven })), {
        type: "TooManyEntriesInBatchRequest",
        status: 400,
        code: "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
      });
      await refused(
        sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: "twin", MessageBody: "x" }, { Id: "other", MessageBody: "y" }, { Id: "twin", MessageBody: "z" }] })),
        { type: "BatchEntryIdsNotDistinct", status: 400, code: "AWS.SimpleQueueService.BatchEntryIdsNotDistinct" },
      );
      assert.deepEqual(await counts(sqs, url), { visible: 2, notVisible: 0, delayed: 0 }, "only the two good entries were stored");
      const got = await receiveN(sqs, url, 2, { MessageAttributeNames: ["All"] });
      assert.deepEqual(got.map((m) => m.Body).sort(), ["first", "second ✓"]);
      const second = got.find((m) => m.Body === "second ✓");
      assert.equal(second.MessageId, ok[1].MessageId);
      assert.equal(second.MD5OfMessageAttributes, md5OfAttributes(attrs));
    });

    // Arrival is measured from a clock read before the send, so a stalled test process can make a
    // message look late but never early.
    it("DelaySeconds on a message: not received before it is due, received after", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("delay-msg"));
      const t0 = Date.now();
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "later", DelaySeconds: 3 }));
      assert.deepEqual(await receive(sqs, url), [], "nothing right after the send");
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0, delayed: 1 });
      const got = await receiveN(sqs, url, 1, {}, 8000);
      const at = Date.now() - t0;
      assert.deepEqual(got.map((m) => m.Body), ["later"]);
      assert.ok(at >= 2800 && at < 6000, `received ${at} ms after the send (delay 3 s)`);
    });

    it("DelaySeconds of the queue applies to messages without one; a message's 0 overrides it", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("delay-queue"), { Attributes: { DelaySeconds: "3" } });
      assert.equal((await attributes(sqs, url)).DelaySeconds, "3");
      const t0 = Date.now();
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "queue-delayed" }));
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "now", DelaySeconds: 0 }));
      const first = await receive(sqs, url, { MaxNumberOfMessages: 10 });
      assert.deepEqual(first.map((m) => m.Body), ["now"], "only the message with DelaySeconds 0 at once");
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 1, delayed: 1 });
      const got = await receiveN(sqs, url, 1, {}, 8000);
      const at = Date.now() - t0;
      assert.deepEqual(got.map((m) => m.Body), ["queue-delayed"]);
      assert.ok(at >= 2800 && at < 6000, `received ${at} ms after the send (queue delay 3 s)`);
    });

    it("an empty long poll of WaitTimeSeconds 5 answers empty after about 5 s", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("empty-poll"));
      const t0 = Date.now();
      const got = await receive(sqs, url, { WaitTimeSeconds: 5 });
      const took = Date.now() - t0;
      assert.deepEqual(got, []);
      assert.ok(took >= 4900 && took < 7000, `empty long poll took ${took} ms`);
    });

    it("a receive waiting 10 s gets a message sent 0.5 s after it started within 1 s of the send", T, async () => {
      const sqs = client(ctx);
      const producer = client(ctx);
      const url = await create(sqs, uniqueName("wake"));
      const t0 = Date.now();
      const waiting = receive(sqs, url, { WaitTimeSeconds: 10 });
      await sleep(500);
      await producer.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "wake up" }));
      const sentAt = Date.now();
      const got = await waiting;
      const now = Date.now();
      assert.equal(got[0]?.Body, "wake up");
      assert.ok(now - sentAt < 1000, `woke ${now - sentAt} ms after the send`);
      assert.ok(now - t0 >= 450, `the receive waited for the send (${now - t0} ms)`);
    });

    it("an unfinished receive expires and comes back with ApproximateReceiveCount 1, 2, 3 (and 4: no death)", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("expiry"));
      const sendAt = Date.now();
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "again and again" }));
      const seen = [];
      // Times from before the previous receive was sent: its lease began later, so a stalled test
      // process can only make the gap look longer.
      let previousStart;
      for (let n = 1; n <= 4; n++) {
        const start = Date.now();
        const [m] = await receive(sqs, url, { ...ALL, VisibilityTimeout: 1, WaitTimeSeconds: n === 1 ? 0 : 5 });
        assert.ok(m, `receive ${n}`);
        assert.equal(m.MessageId, sent.MessageId);
        assert.equal(m.Attributes.ApproximateReceiveCount, String(n), `receive ${n}`);
        if (n > 1) {
          const gap = Date.now() - previousStart;
          assert.ok(gap >= 950, `receive ${n} only after the 1 s timeout ran out (${gap} ms)`);
          assert.ok(Date.now() - start < 4500, `receive ${n} within about a second of the expiry (${Date.now() - start} ms)`);
        }
        if (n === 1) assert.deepEqual(await receive(sqs, url), [], "invisible while the timeout runs");
        previousStart = start;
        seen.push(m);
      }
      const sentTs = Number(seen[0].Attributes.SentTimestamp);
      assert.ok(Math.abs(sentTs - sendAt) < 2000, `SentTimestamp ${sentTs} (epoch ms) near ${sendAt}`);
      const first = seen[0].Attributes.ApproximateFirstReceiveTimestamp;
      assert.ok(Number(first) >= sentTs - 1 && Number(first) <= Date.now(), `ApproximateFirstReceiveTimestamp ${first}`);
      for (const m of seen) assert.equal(m.Attributes.ApproximateFirstReceiveTimestamp, first, "the first receive stays the first");
      assert.equal(new Set(seen.map((m) => m.ReceiptHandle)).size, 4, "a new handle per receive");
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: seen[3].ReceiptHandle }));
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0, delayed: 0 });
    });

    it("a stale receipt handle: DeleteMessage succeeds and changes nothing, ChangeMessageVisibility is ReceiptHandleIsInvalid", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("stale"));
      const other = await create(sqs, uniqueName("stale-other"));
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "keep me" }));
      const [first] = await receive(sqs, url, { VisibilityTimeout: 1 });
      assert.ok(first, "first receive");
      const [second] = await receive(sqs, url, { VisibilityTimeout: 30, WaitTimeSeconds: 5 });
      assert.ok(second, "received again after the expiry");
      assert.notEqual(second.ReceiptHandle, first.ReceiptHandle);

      const deleted = await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first.ReceiptHandle }));
      assert.equal(deleted.$metadata.httpStatusCode, 200);
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 1, delayed: 0 }, "the stale delete changed nothing");
      await refused(sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 30 })), HANDLE_INVALID);

      // The current handle still holds it: release it and it is received a third time.
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: second.ReceiptHandle, VisibilityTimeout: 0 }));
      const [third] = await receive(sqs, url, { ...ALL, VisibilityTimeout: 30, WaitTimeSeconds: 2 });
      assert.equal(third?.MessageId, sent.MessageId);
      assert.equal(third.Attributes.ApproximateReceiveCount, "3");

      await refused(sqs.send(new DeleteMessageCommand({ QueueUrl: other, ReceiptHandle: third.ReceiptHandle })), HANDLE_INVALID);
      await refused(sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: "not-a-receipt-handle" })), HANDLE_INVALID);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: third.ReceiptHandle }));
      const repeat = await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: third.ReceiptHandle }));
      assert.equal(repeat.$metadata.httpStatusCode, 200, "a repeated delete succeeds");
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0, delayed: 0 });
    });

    it("typed errors through the SDK: name and code from x-amzn-query-error, status, request id", T, async () => {
      const sqs = client(ctx);
      const name = uniqueName("errors");
      const url = await create(sqs, name);
      await refused(sqs.send(new GetQueueUrlCommand({ QueueName: uniqueName("missing") })), NON_EXISTENT);
      await refused(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl(ctx, uniqueName("missing")), MessageBody: "x" })), NON_EXISTENT);
      await refused(sqs.send(new SendMessageCommand({ QueueUrl: `${ctx.url}/123456789012/${name}`, MessageBody: "x" })), NON_EXISTENT);
      for (const bad of ["has.dot", "x".repeat(65), "q.fifo", "sp ace"]) {
        await refused(sqs.send(new CreateQueueCommand({ QueueName: bad })), { type: "InvalidParameterValue", status: 400 });
      }
      await refused(sqs.send(new CreateQueueCommand({ QueueName: uniqueName("attr"), Attributes: { NoSuchAttribute: "1" } })), {
        type: "InvalidAttributeName",
        status: 400,
      });
      await refused(sqs.send(new CreateQueueCommand({ QueueName: uniqueName("attr"), Attributes: { VisibilityTimeout: "43201" } })), {
        type: "InvalidAttributeValue",
        status: 400,
      });
      await refused(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "bad \u0001 control" })), { type: "InvalidMessageContents", status: 400 });
      await refused(sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 11 })), { type: "InvalidParameterValue", status: 400 });
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0, delayed: 0 }, "refusals stored nothing");
    });

    it("raw answers: x-amzn-query-error, __type, x-amzn-RequestId = X-Request-Id, 405 and 404 beside the front", T, async () => {
      const missing = await rawSqs(ctx, "GetQueueUrl", { QueueName: uniqueName("missing") });
      assert.equal(missing.status, 400, missing.text);
      assert.match(missing.headers.get("content-type") ?? "", /^application\/x-amz-json-1\.0/);
      assert.equal(missing.headers.get("x-amzn-query-error"), "AWS.SimpleQueueService.NonExistentQueue;Sender");
      const rid = missing.headers.get("x-amzn-requestid");
      assert.ok(rid, "x-amzn-RequestId");
      assert.equal(rid, missing.headers.get("x-request-id"));
      assert.equal(missing.body.__type, "com.amazonaws.sqs#QueueDoesNotExist");
      assert.equal(typeof missing.body.message, "string");

      // Anonymous: no signature at all is fine; the queue URL's path is a route too.
      const name = uniqueName("raw");
      const made = await rawSqs(ctx, "CreateQueue", { QueueName: name });
      assert.equal(made.status, 200, made.text);
      assert.equal(made.body.QueueUrl, queueUrl(ctx, name));
      assert.ok(made.headers.get("x-amzn-requestid"));
      const viaPath = await rawSqs(ctx, "GetQueueAttributes", { QueueUrl: made.body.QueueUrl, AttributeNames: ["QueueArn"] }, { path: `/${ACCOUNT}/${name}` });
      assert.equal(viaPath.status, 200, viaPath.text);
      assert.equal(viaPath.body.Attributes.QueueArn, `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`);

      const cases = [
        [{ target: "AmazonSQS.NoSuchAction" }, {}, 400, "UnknownOperationException", "UnknownOperationException;Sender"],
        [{}, { QueueUrl: made.body.QueueUrl, Label: "l", AWSAccountIds: [ACCOUNT], Actions: ["SendMessage"] }, 400, "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation;Sender", "AddPermission"],
        [{}, "[1, 2]", 400, "SerializationException", "SerializationException;Sender", "ListQueues"],
        [{}, { QueueName: 42 }, 400, "SerializationException", "SerializationException;Sender", "GetQueueUrl"],
      ];
      for (const [opts, body, status, type, header, action] of cases) {
        const r = await rawSqs(ctx, action ?? "x", body, opts);
        assert.equal(r.status, status, `${type}: ${r.text}`);
        assert.equal(r.body?.__type, `com.amazonaws.sqs#${type}`, r.text);
        assert.equal(r.headers.get("x-amzn-query-error"), header);
        assert.ok(r.headers.get("x-amzn-requestid"), `${type}: x-amzn-RequestId`);
      }

      const get = await rawSqs(ctx, "ListQueues", undefined, { method: "GET" });
      assert.equal(get.status, 405, get.text);
      assert.match(get.headers.get("allow") ?? "", /^POST$/);
      const getPath = await rawSqs(ctx, "ListQueues", undefined, { method: "GET", path: `/${ACCOUNT}/${name}` });
      assert.equal(getPath.status, 405, getPath.text);
      const foreign = await rawSqs(ctx, "GetQueueAttributes", { QueueUrl: made.body.QueueUrl }, { path: `/999999999999/${name}` });
      assert.equal(foreign.status, 404, foreign.text);
      assert.match(foreign.headers.get("content-type") ?? "", /^application\/problem\+json/);
    });

    it("PurgeQueue deletes pending and in-flight messages sent before it, audited as purge", T, async () => {
      const sqs = client(ctx);
      const name = uniqueName("purge");
      const url = await create(sqs, name);
      for (const b of ["p1", "p2", "p3"]) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: b }));
      const inFlight = await receive(sqs, url, { VisibilityTimeout: 30 });
      assert.equal(inFlight.length, 1);
      assert.deepEqual(await counts(sqs, url), { visible: 2, notVisible: 1, delayed: 0 });
      const purged = await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
      assert.equal(purged.$metadata.httpStatusCode, 200);
      assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0, delayed: 0 });
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "after the purge" }));
      assert.deepEqual((await receive(sqs, url, { WaitTimeSeconds: 2 })).map((m) => m.Body), ["after the purge"]);

      // Batches of at most 1,000, each its own entry: summed, they hold the three messages.
      const audit = await dlqApi(ctx, `/audit?action=purge&queue=${name}`);
      assert.equal(audit.status, 200, JSON.stringify(audit.body));
      const entries = audit.body.entries;
      assert.ok(entries.length >= 1, JSON.stringify(audit.body));
      for (const entry of entries) {
        const shown = JSON.stringify(entry);
        assert.equal(entry.action, "purge", shown);
        assert.equal(entry.queue, name, shown);
        assert.equal(entry.actor, "anonymous", shown);
        assert.equal(entry.filter.sqs_action, "PurgeQueue", shown);
        assert.ok(entry.filter.before, `filter.before: ${shown}`);
        assert.deepEqual(Object.keys(entry.details.by_status).sort(), ["pending", "processing"], shown);
        assert.equal(entry.details.by_status.pending + entry.details.by_status.processing, entry.details.purged, shown);
      }
      const sum = (f) => entries.reduce((n, e) => n + f(e), 0);
      assert.equal(sum((e) => e.details.purged), 3, JSON.stringify(entries));
      assert.equal(sum((e) => e.details.by_status.pending), 2, JSON.stringify(entries));
      assert.equal(sum((e) => e.details.by_status.processing), 1, JSON.stringify(entries));
      await refused(sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl(ctx, uniqueName("missing")) })), NON_EXISTENT);
    });

    it("tags: CreateQueue's tags, TagQueue, ListQueueTags, UntagQueue", T, async () => {
      const sqs = client(ctx);
      const url = await create(sqs, uniqueName("tags"), { tags: { team: "core" } });
      const tags = async () => (await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags ?? {};
      assert.deepEqual(await tags(), { team: "core" });
      await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { env: "test", team: "platform" } }));
      assert.deepEqual(await tags(), { env: "test", team: "platform" });
      await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["team"] }));
      assert.deepEqual(await tags(), { env: "test" });
      await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["env", "never-set"] }));
      assert.deepEqual(await tags(), {});
      await refused(sqs.send(new TagQueueCommand({ QueueUrl: queueUrl(ctx, uniqueName("missing")), Tags: { a: "b" } })), NON_EXISTENT);
    });
  });
}

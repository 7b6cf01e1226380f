// SQS dead-letter queues and redrive (issue 39, docs/sqs.md "Dead-letter queues" and "Move tasks
// are batch replay runs") through the pinned SDK and sqs-consumer: a RedrivePolicy ends a message
// at maxReceiveCount; its dead-letter queue counts, receives, hides and (DeleteMessage) dismisses
// it; message move tasks are the desk's replay runs (rate, one at a time, cancel, a second task
// for the rest); the refusals of the move-task actions.

import { describe, it } from "node:test";
import * as assert from "node:assert/strict";
import {
  CancelMessageMoveTaskCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import { ACCOUNT, REGION, client, dlqApi, queueUrl, refused, uniqueName, useDlqd, waitFor } from "./harness.js";
import { consume } from "./consumer.js";

const T = { timeout: 30000 };
const NOT_FOUND = { type: "ResourceNotFoundException", status: 404 };
const INVALID = { type: "InvalidParameterValue", status: 400 };

const arnOf = (name) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;

/** A dead-letter queue and a source whose RedrivePolicy names it (VisibilityTimeout 1). */
async function redrivePair(ctx, sqs, stem, maxReceiveCount) {
  const dlq = uniqueName(`${stem}-dlq`);
  const src = uniqueName(stem);
  await sqs.send(new CreateQueueCommand({ QueueName: dlq }));
  await sqs.send(
    new CreateQueueCommand({
      QueueName: src,
      Attributes: {
        VisibilityTimeout: "1",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(dlq), maxReceiveCount }),
      },
    }),
  );
  return { dlq, src, dlqUrl: queueUrl(ctx, dlq), srcUrl: queueUrl(ctx, src) };
}

async function attributes(sqs, url) {
  return (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }))).Attributes ?? {};
}

/** ready / in flight, from GetQueueAttributes. */
async function counts(sqs, url) {
  const a = await attributes(sqs, url);
  return { visible: Number(a.ApproximateNumberOfMessages), notVisible: Number(a.ApproximateNumberOfMessagesNotVisible) };
}

async function receive(sqs, url, input = {}) {
  return (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0, ...input }))).Messages ?? [];
}

/** The desk's dead letters stamped with `dlq` (GET /dlq?dead_letter_queue=). */
async function deadLetters(ctx, dlq) {
  const r = await dlqApi(ctx, `/dlq?dead_letter_queue=${dlq}&limit=100`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.messages;
}

/** Waits until the desk shows `n` dead letters stamped with `dlq`. */
function untilDead(ctx, dlq, n, timeoutMs = 8000) {
  return waitFor(`${n} dead letters of ${dlq}`, async () => {
    const got = await deadLetters(ctx, dlq);
    return got.length === n ? got : undefined;
  }, timeoutMs, 100);
}

/**
 * `n` messages on a source with maxReceiveCount 1, each received once and left to die: their
 * leases (1 s) run out and the expiry ends them. Answers the pair and the MessageIds in send order.
 */
async function deadLettersOf(ctx, sqs, stem, n) {
  const pair = await redrivePair(ctx, sqs, stem, 1);
  const ids = [];
  for (let i = 0; i < n; i += 10) {
    const entries = Array.from({ length: Math.min(10, n - i) }, (_, j) => ({ Id: `m${i + j}`, MessageBody: `${stem} ${i + j}` }));
    const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: pair.srcUrl, Entries: entries }));
    assert.equal(out.Successful?.length, entries.length, JSON.stringify(out.Failed));
    const byId = new Map(out.Successful.map((s) => [s.Id, s.MessageId]));
    ids.push(...entries.map((e) => byId.get(e.Id)));
  }
  let received = 0;
  const end = Date.now() + 5000;
  while (received < n && Date.now() < end) received += (await receive(sqs, pair.srcUrl, { MaxNumberOfMessages: 10, VisibilityTimeout: 1 })).length;
  assert.equal(received, n, "every message received once");
  await untilDead(ctx, pair.dlq, n);
  return { ...pair, ids };
}

async function moveTasks(sqs, dlq, MaxResults) {
  return (await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf(dlq), MaxResults }))).Results ?? [];
}

/** Receives from `url` until `n` messages were seen (each receive keeps what it got in flight). */
async function receiveN(sqs, url, n, input = {}, deadlineMs = 8000) {
  const got = [];
  const end = Date.now() + deadlineMs;
  while (got.length < n && Date.now() < end) got.push(...(await receive(sqs, url, { MaxNumberOfMessages: 10, WaitTimeSeconds: 1, ...input })));
  return got;
}

export function redriveSuite(db) {
  describe(`dead-letter queues and move tasks (${db})`, { concurrency: true }, () => {
    const ctx = useDlqd(db);

    it("a message received maxReceiveCount times dies into its DLQ: counted, received, hidden, shown again, dismissed by DeleteMessage", T, async () => {
      const sqs = client(ctx);
      const { dlq, src, dlqUrl, srcUrl } = await redrivePair(ctx, sqs, "redrive", 2);
      assert.deepEqual((await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlqUrl }))).queueUrls, [srcUrl]);
      const tenant = { tenant: { DataType: "String", StringValue: "acme" } };
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: srcUrl, MessageBody: "poison pill", MessageAttributes: tenant }));

      // Two receives, each left to run out; the second expiry ends it instead of showing it again.
      const [first] = await receive(sqs, srcUrl, { MessageSystemAttributeNames: ["ApproximateReceiveCount"] });
      assert.equal(first?.Attributes?.ApproximateReceiveCount, "1");
      const [second] = await receive(sqs, srcUrl, { MessageSystemAttributeNames: ["ApproximateReceiveCount"], WaitTimeSeconds: 5 });
      assert.equal(second?.MessageId, sent.MessageId, "back after the first expiry");
      assert.equal(second.Attributes.ApproximateReceiveCount, "2");
      const [dead] = await untilDead(ctx, dlq, 1);
      assert.equal(dead.id, Number(sent.MessageId));
      assert.equal(dead.queue, src, "a dead letter stays in its own queue on the desk");
      assert.equal(dead.dead_reason, "max_receive_count");
      assert.deepEqual(await receive(sqs, srcUrl), [], "gone from the source");
      assert.deepEqual(await counts(sqs, srcUrl), { visible: 0, notVisible: 0 });

      // The DLQ counts it and returns it with its source, the count it died with, body and attributes.
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 1, notVisible: 0 });
      const [got] = await receive(sqs, dlqUrl, { MessageSystemAttributeNames: ["All"], MessageAttributeNames: ["All"], VisibilityTimeout: 30 });
      assert.ok(got, "the DLQ's receive returns the dead letter");
      assert.equal(got.MessageId, sent.MessageId);
      assert.equal(got.Body, "poison pill");
      assert.equal(got.Attributes.DeadLetterQueueSourceArn, arnOf(src));
      assert.equal(got.Attributes.ApproximateReceiveCount, "2");
      assert.deepEqual(got.MessageAttributes, tenant);
      assert.equal(got.MD5OfMessageAttributes, sent.MD5OfMessageAttributes);

      // Hidden for the visibility timeout; ChangeMessageVisibility 0 shows it again.
      assert.deepEqual(await receive(sqs, dlqUrl), [], "hidden while received");
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 0, notVisible: 1 });
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: dlqUrl, ReceiptHandle: got.ReceiptHandle, VisibilityTimeout: 0 }));
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 1, notVisible: 0 });
      const [again] = await receive(sqs, dlqUrl, { AttributeNames: ["All"], VisibilityTimeout: 30 });
      assert.equal(again?.MessageId, sent.MessageId, "shown again after ChangeMessageVisibility 0");
      assert.equal(again.Attributes.DeadLetterQueueSourceArn, arnOf(src));
      assert.equal(again.Attributes.ApproximateReceiveCount, "2");
      assert.notEqual(again.ReceiptHandle, got.ReceiptHandle);

      // The first receive's handle is stale: its delete succeeds and dismisses nothing.
      await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: got.ReceiptHandle }));
      assert.equal((await deadLetters(ctx, dlq)).length, 1, "a stale handle's delete left the letter");
      // The current one dismisses it (the anonymous front is admin).
      await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: again.ReceiptHandle }));
      assert.deepEqual(await deadLetters(ctx, dlq), []);
      const shown = await dlqApi(ctx, `/queues/${src}/messages/${sent.MessageId}`);
      assert.equal(shown.status, 200, JSON.stringify(shown.body));
      assert.equal(shown.body.status, "dismissed");
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 0, notVisible: 0 });
      assert.deepEqual(await receive(sqs, dlqUrl), []);
      const audit = await dlqApi(ctx, "/audit?action=dismiss&limit=100");
      assert.equal(audit.status, 200, JSON.stringify(audit.body));
      const entries = audit.body.entries.filter((e) => e.filter?.dead_letter_queue === dlq);
      assert.deepEqual(
        entries.map((e) => [e.actor, e.reason, e.message_ids, e.details?.sqs_action]),
        [["anonymous", "deleted through SQS", [Number(sent.MessageId)], "DeleteMessage"]],
      );
      assert.deepEqual((await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlqUrl }))).queueUrls, [srcUrl]);
    });

    it("ChangeMessageVisibility 0 at maxReceiveCount ends the message at once; DeleteMessageBatch on the DLQ dismisses", T, async () => {
      const sqs = client(ctx);
      const { dlq, src, dlqUrl, srcUrl } = await redrivePair(ctx, sqs, "release", 1);
      const sent = [];
      for (const body of ["r1", "r2"]) sent.push((await sqs.send(new SendMessageCommand({ QueueUrl: srcUrl, MessageBody: body }))).MessageId);
      const got = await receive(sqs, srcUrl, { MaxNumberOfMessages: 10, VisibilityTimeout: 30 });
      assert.equal(got.length, 2);
      for (const m of got) await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: srcUrl, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }));
      // Dead in the release's own transaction: no lease reaper to wait for.
      const dead = await deadLetters(ctx, dlq);
      assert.deepEqual(dead.map((m) => String(m.id)).sort(), [...sent].sort());
      for (const m of dead) assert.equal(m.dead_reason, "max_receive_count", JSON.stringify(m));
      assert.deepEqual(await receive(sqs, srcUrl), []);
      const letters = await receive(sqs, dlqUrl, { MaxNumberOfMessages: 10, MessageSystemAttributeNames: ["DeadLetterQueueSourceArn", "ApproximateReceiveCount"] });
      assert.deepEqual(letters.map((m) => m.MessageId).sort(), [...sent].sort());
      for (const m of letters) assert.deepEqual(m.Attributes, { DeadLetterQueueSourceArn: arnOf(src), ApproximateReceiveCount: "1" });
      const out = await sqs.send(
        new DeleteMessageBatchCommand({ QueueUrl: dlqUrl, Entries: letters.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }),
      );
      assert.deepEqual((out.Successful ?? []).map((e) => e.Id).sort(), ["d0", "d1"], JSON.stringify(out.Failed));
      assert.deepEqual(await deadLetters(ctx, dlq), []);
      for (const id of sent) assert.equal((await dlqApi(ctx, `/queues/${src}/messages/${id}`)).body.status, "dismissed");
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 0, notVisible: 0 });
    });

    it("a move task at 5/s moves 10 dead letters back: RUNNING, one at a time, COMPLETED; same MessageIds, receive count from 1", T, async () => {
      const sqs = client(ctx);
      const { dlq, srcUrl, dlqUrl, ids } = await deadLettersOf(ctx, sqs, "move", 10);
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 10, notVisible: 0 });
      assert.deepEqual(await moveTasks(sqs, dlq), [], "no task yet");

      const startedAt = Date.now();
      const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(dlq), MaxNumberOfMessagesPerSecond: 5 }));
      assert.ok(TaskHandle, "a TaskHandle");
      const [running] = await moveTasks(sqs, dlq);
      assert.equal(running?.Status, "RUNNING", JSON.stringify(running));
      assert.equal(running.TaskHandle, TaskHandle);
      assert.equal(running.SourceArn, arnOf(dlq));
      assert.equal(running.ApproximateNumberOfMessagesToMove, 10);
      assert.equal(running.MaxNumberOfMessagesPerSecond, 5);
      assert.ok(running.ApproximateNumberOfMessagesMoved < 10, JSON.stringify(running));
      assert.ok(Math.abs(running.StartedTimestamp - startedAt) < 5000, `StartedTimestamp ${running.StartedTimestamp} (epoch ms) near ${startedAt}`);
      const second = await refused(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(dlq), MaxNumberOfMessagesPerSecond: 5 })), INVALID);
      assert.match(second.message, /There is already a task running/);

      const done = await waitFor("the task COMPLETED", async () => {
        const [t] = await moveTasks(sqs, dlq);
        return t?.Status === "COMPLETED" ? t : undefined;
      }, 10000, 100);
      const took = Date.now() - startedAt;
      // The first letter goes at once, then one every 0.2 s: the tenth no earlier than 1.8 s.
      assert.ok(took >= 1600, `10 letters at 5/s took ${took} ms`);
      assert.equal(done.ApproximateNumberOfMessagesMoved, 10);
      assert.equal(done.ApproximateNumberOfMessagesToMove, 10);
      assert.equal(done.TaskHandle, undefined, "a finished task has no TaskHandle");
      assert.deepEqual(await deadLetters(ctx, dlq), []);
      assert.deepEqual(await counts(sqs, dlqUrl), { visible: 0, notVisible: 0 });

      const back = await receiveN(sqs, srcUrl, 10, { MessageSystemAttributeNames: ["All"], VisibilityTimeout: 30 });
      assert.deepEqual(back.map((m) => m.MessageId).sort(), [...ids].sort(), "the same MessageIds, each once");
      for (const m of back) {
        assert.equal(m.Attributes.ApproximateReceiveCount, "1", `${m.MessageId}: the receive count starts again`);
        assert.equal(m.Attributes.DeadLetterQueueSourceArn, undefined, "no longer a dead letter");
        assert.equal(m.Body, `move ${ids.indexOf(m.MessageId)}`);
      }

      // The desk shows the run: the move task's filter, rate and reason.
      const runs = await dlqApi(ctx, "/dlq/replays?limit=100");
      assert.equal(runs.status, 200, JSON.stringify(runs.body));
      const mine = runs.body.replays.filter((r) => r.filter?.dead_letter_queue === dlq);
      assert.equal(mine.length, 1, JSON.stringify(runs.body.replays));
      const run = mine[0];
      assert.deepEqual(run.filter, { dead_letter_queue: dlq });
      assert.equal(run.status, "done", JSON.stringify(run));
      assert.equal(run.matched, 10);
      assert.equal(run.replayed, 10);
      assert.equal(run.rate_per_second, 5);
      assert.equal(run.delay_seconds, 0);
      assert.equal(run.keep_order, true);
      assert.equal(run.reason, "SQS StartMessageMoveTask");
      assert.equal(run.actor, "anonymous");
      const audit = await dlqApi(ctx, "/audit?action=batch_replay&limit=100");
      assert.equal(audit.status, 200, JSON.stringify(audit.body));
      const started = audit.body.entries.filter((e) => e.filter?.dead_letter_queue === dlq);
      assert.deepEqual(started.map((e) => [e.actor, e.reason, e.details?.task_handle, e.details?.matched]), [["anonymous", "SQS StartMessageMoveTask", TaskHandle, 10]]);
    });

    it("a move task at 1/s is cancelled after its first letters; a second task at 50/s moves the rest", T, async () => {
      const sqs = client(ctx);
      const n = 5;
      const { dlq, srcUrl, ids } = await deadLettersOf(ctx, sqs, "cancel", n);
      const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(dlq), MaxNumberOfMessagesPerSecond: 1 }));
      await waitFor("a first letter moved", async () => (await moveTasks(sqs, dlq))[0]?.ApproximateNumberOfMessagesMoved >= 1, 5000, 50);
      const cancelled = await sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }));
      const moved = cancelled.ApproximateNumberOfMessagesMoved;
      assert.ok(moved >= 1 && moved < n, `moved before the cancel: ${moved}`);
      const [c] = await moveTasks(sqs, dlq);
      assert.equal(c?.Status, "CANCELLED", JSON.stringify(c));
      assert.equal(c.TaskHandle, undefined);
      assert.equal(c.ApproximateNumberOfMessagesMoved, moved);
      assert.equal(c.ApproximateNumberOfMessagesToMove, n);
      await refused(sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle })), NOT_FOUND);
      // Nothing moves after the cancel.
      await new Promise((r) => setTimeout(r, 1200));
      assert.equal((await deadLetters(ctx, dlq)).length, n - moved, "the rest stayed dead after the cancel");
      assert.equal((await moveTasks(sqs, dlq))[0].ApproximateNumberOfMessagesMoved, moved);

      await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(dlq), MaxNumberOfMessagesPerSecond: 50 }));
      const done = await waitFor("the second task COMPLETED", async () => {
        const [t] = await moveTasks(sqs, dlq);
        return t?.Status === "COMPLETED" ? t : undefined;
      }, 8000, 100);
      assert.equal(done.ApproximateNumberOfMessagesToMove, n - moved);
      assert.equal(done.ApproximateNumberOfMessagesMoved, n - moved);
      assert.equal((await moveTasks(sqs, dlq)).length, 1, "MaxResults defaults to 1");
      assert.deepEqual((await moveTasks(sqs, dlq, 10)).map((t) => t.Status), ["COMPLETED", "CANCELLED"], "newest first");
      assert.deepEqual(await deadLetters(ctx, dlq), []);
      const back = await receiveN(sqs, srcUrl, n, { MessageSystemAttributeNames: ["ApproximateReceiveCount"], VisibilityTimeout: 30 });
      assert.deepEqual(back.map((m) => m.MessageId).sort(), [...ids].sort());
      for (const m of back) assert.equal(m.Attributes.ApproximateReceiveCount, "1");
      const runs = (await dlqApi(ctx, "/dlq/replays?limit=100")).body.replays.filter((r) => r.filter?.dead_letter_queue === dlq);
      assert.deepEqual(runs.map((r) => [r.status, r.replayed]), [["done", n - moved], ["cancelled", moved]]);
      const audit = await dlqApi(ctx, "/audit?action=batch_replay_cancel&limit=100");
      assert.equal(audit.status, 200, JSON.stringify(audit.body));
      assert.equal(audit.body.entries.filter((e) => e.filter?.dead_letter_queue === dlq).length, 1, JSON.stringify(audit.body.entries));
    });

    it("sqs-consumer with a throwing handler: the message dies into the DLQ after 2 receives", T, async () => {
      const sqs = client(ctx);
      const { dlq, src, dlqUrl, srcUrl } = await redrivePair(ctx, sqs, "consumer-redrive", 2);
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: srcUrl, MessageBody: "always fails" }));
      const receiveCounts = [];
      const errors = await consume(
        {
          queueUrl: srcUrl,
          sqs: client(ctx),
          batchSize: 10,
          waitTimeSeconds: 1,
          visibilityTimeout: 1,
          messageSystemAttributeNames: ["ApproximateReceiveCount"],
          handleMessage: async (m) => {
            receiveCounts.push(m.Attributes?.ApproximateReceiveCount);
            throw new Error("handler failed on purpose");
          },
        },
        async () => (await deadLetters(ctx, dlq)).length === 1,
        10000,
      );
      assert.deepEqual(receiveCounts, ["1", "2"]);
      assert.deepEqual(errors.map((e) => e.event), ["processing_error", "processing_error"]);
      const [dead] = await deadLetters(ctx, dlq);
      assert.equal(dead.id, Number(sent.MessageId));
      assert.equal(dead.queue, src);
      assert.equal(dead.dead_reason, "max_receive_count");
      const [got] = await receive(sqs, dlqUrl, { MessageSystemAttributeNames: ["All"] });
      assert.equal(got?.MessageId, sent.MessageId);
      assert.equal(got.Body, "always fails");
      assert.equal(got.Attributes.DeadLetterQueueSourceArn, arnOf(src));
      assert.equal(got.Attributes.ApproximateReceiveCount, "2");
    });

    it("move-task refusals: unknown or malformed TaskHandle, unknown SourceArn, a queue no policy names", T, async () => {
      const sqs = client(ctx);
      const plain = uniqueName("no-policy");
      await sqs.send(new CreateQueueCommand({ QueueName: plain }));
      const missing = uniqueName("missing");
      const handle = (o) => Buffer.from(JSON.stringify(o)).toString("base64");
      for (const TaskHandle of [
        "not-a-task-handle",
        handle({ taskId: "999999", sourceArn: arnOf(plain) }),
        handle({ taskId: "1", sourceArn: arnOf(missing) }),
        handle({ taskId: "x", sourceArn: arnOf(plain) }),
        handle({ sourceArn: arnOf(plain) }),
        Buffer.from("[1, 2]").toString("base64"),
      ]) {
        await refused(sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle })), NOT_FOUND);
      }
      await refused(sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf(missing) })), NOT_FOUND);
      await refused(sqs.send(new ListMessageMoveTasksCommand({ SourceArn: "arn:aws:sqs:eu-west-1:123456789012:elsewhere" })), NOT_FOUND);
      await refused(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(missing) })), NOT_FOUND);
      const err = await refused(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(plain) })), INVALID);
      assert.match(err.message, /Dead Letter Queue|RedrivePolicy/);
      assert.deepEqual(await moveTasks(sqs, plain), [], "a refused start started nothing");
    });
  });
}

// sqs-consumer (the pinned 11.6.0, on the pinned SDK) against the anonymous front: a batch of
// messages each handled once and deleted, and a handler that throws, whose message comes back
// only after its visibility timeout.

import { describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { Consumer } from "sqs-consumer";
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { client, uniqueName, useDlqd, waitFor } from "./harness.js";

const T = { timeout: 30000 };

async function empty(sqs, url) {
  const a = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }))).Attributes ?? {};
  return a.ApproximateNumberOfMessages === "0" && a.ApproximateNumberOfMessagesNotVisible === "0" && a.ApproximateNumberOfMessagesDelayed === "0";
}

/** Runs a consumer until `done()` holds, then stops it (aborting its poll); returns its errors. */
export async function consume(options, done, timeoutMs) {
  const errors = [];
  let running = true;
  const consumer = Consumer.create(options);
  for (const event of ["error", "processing_error", "timeout_error"]) {
    consumer.on(event, (err, message) => {
      if (running) errors.push({ event, err, message });
    });
  }
  consumer.start();
  try {
    await waitFor("the consumer to finish", done, timeoutMs, 100);
  } finally {
    running = false;
    consumer.stop({ abort: true });
  }
  return errors;
}

export function consumerSuite(db) {
  describe(`sqs-consumer (${db})`, { concurrency: true }, () => {
    const ctx = useDlqd(db);

    it("50 messages are each handled once and deleted", T, async () => {
      const sqs = client(ctx);
      const url = (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("consumer") }))).QueueUrl;
      const bodies = Array.from({ length: 50 }, (_, i) => `job-${i}`);
      for (let i = 0; i < 50; i += 10) {
        const out = await sqs.send(
          new SendMessageBatchCommand({ QueueUrl: url, Entries: bodies.slice(i, i + 10).map((b, j) => ({ Id: `e${i + j}`, MessageBody: b })) }),
        );
        assert.equal(out.Successful?.length, 10, JSON.stringify(out.Failed));
      }
      const handled = new Map();
      const errors = await consume(
        {
          queueUrl: url,
          sqs: client(ctx),
          batchSize: 10,
          waitTimeSeconds: 1,
          visibilityTimeout: 30,
          handleMessage: async (m) => {
            handled.set(m.Body, (handled.get(m.Body) ?? 0) + 1);
          },
        },
        async () => handled.size === 50 && (await empty(sqs, url)),
        20000,
      );
      assert.deepEqual(errors.map((e) => `${e.event}: ${e.err?.message}`), []);
      assert.deepEqual([...handled.keys()].sort(), [...bodies].sort());
      for (const [body, n] of handled) assert.equal(n, 1, `${body} handled ${n} times`);
    });

    it("a throwing handler's message comes back after the visibility timeout, then is deleted", T, async () => {
      const sqs = client(ctx);
      const url = (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("throwing") }))).QueueUrl;
      await sqs.send(
        new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: "boom", MessageBody: "boom" }, { Id: "fine", MessageBody: "fine" }] }),
      );
      const deliveries = [];
      // The consumer polls one receive at a time; a message's lease began after the last poll
      // started, so gaps measured from there cannot look shorter than they were.
      let polledAt = 0;
      const errors = await consume(
        {
          queueUrl: url,
          sqs: client(ctx),
          batchSize: 10,
          waitTimeSeconds: 1,
          visibilityTimeout: 1,
          messageSystemAttributeNames: ["ApproximateReceiveCount"],
          preReceiveMessageCallback: async () => {
            polledAt = Date.now();
          },
          handleMessage: async (m) => {
            const count = m.Attributes?.ApproximateReceiveCount;
            deliveries.push({ body: m.Body, count, at: Date.now(), polledAt });
            if (m.Body === "boom" && count === "1") throw new Error("handler failed on purpose");
          },
        },
        async () => deliveries.filter((d) => d.body === "boom").length >= 2 && (await empty(sqs, url)),
        15000,
      );
      const boom = deliveries.filter((d) => d.body === "boom");
      assert.deepEqual(boom.map((d) => d.count), ["1", "2"]);
      const gap = boom[1].at - boom[0].polledAt;
      assert.ok(gap >= 950, `back only after the visibility timeout of 1 s (${gap} ms after the receive began)`);
      assert.ok(boom[1].at - boom[0].at < 5000, `back within a few seconds (${boom[1].at - boom[0].at} ms)`);
      assert.deepEqual(deliveries.filter((d) => d.body === "fine").map((d) => d.count), ["1"]);
      assert.deepEqual(errors.map((e) => [e.event, e.message?.Body]), [["processing_error", "boom"]]);
    });
  });
}

// What the suites rely on in the pinned SDK, against a scripted server (no dlqd): the client that
// harness.js makes checks MD5OfBody itself, and names a query-compatible error after the code in
// x-amzn-query-error (its __type kept where the SDK has no model for it).

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import * as http from "node:http";
import { GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { client, md5Hex, refused } from "./harness.js";

describe("the pinned @aws-sdk/client-sqs", () => {
  let answer = () => ({ status: 200, headers: {}, body: {} });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const a = answer(req);
      res.writeHead(a.status, { "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "req-1", ...a.headers });
      res.end(JSON.stringify(a.body));
    });
  });
  const ctx = { clients: [] };
  const listening = new Promise((r) => server.listen(0, "127.0.0.1", () => r()));
  after(() => {
    for (const c of ctx.clients) c.destroy();
    server.close();
  });
  const sqs = async () => {
    await listening;
    ctx.url = `http://127.0.0.1:${server.address().port}`;
    return client(ctx);
  };

  it("refuses a received message whose MD5OfBody is wrong, and a send whose MD5OfMessageBody is", async () => {
    const c = await sqs();
    answer = () => ({ status: 200, headers: {}, body: { Messages: [{ MessageId: "1", ReceiptHandle: "h", Body: "body", MD5OfBody: md5Hex("other") }] } });
    await assert.rejects(c.send(new ReceiveMessageCommand({ QueueUrl: `${ctx.url}/000000000000/q` })), /Invalid MD5 checksum/);
    answer = () => ({ status: 200, headers: {}, body: { Messages: [{ MessageId: "1", ReceiptHandle: "h", Body: "body", MD5OfBody: md5Hex("body") }] } });
    assert.equal((await c.send(new ReceiveMessageCommand({ QueueUrl: `${ctx.url}/000000000000/q` }))).Messages[0].Body, "body");
    answer = () => ({ status: 200, headers: {}, body: { MessageId: "1", MD5OfMessageBody: md5Hex("other") } });
    await assert.rejects(c.send(new SendMessageCommand({ QueueUrl: `${ctx.url}/000000000000/q`, MessageBody: "body" })), /InvalidChecksumError/);
  });

  it("names an error after its query code and keeps status, Type and request id", async () => {
    const c = await sqs();
    answer = () => ({
      status: 400,
      headers: { "x-amzn-query-error": "AWS.SimpleQueueService.NonExistentQueue;Sender" },
      body: { __type: "com.amazonaws.sqs#QueueDoesNotExist", message: "no such queue" },
    });
    const err = await refused(c.send(new GetQueueUrlCommand({ QueueName: "q" })), { type: "QueueDoesNotExist", status: 400, code: "AWS.SimpleQueueService.NonExistentQueue" });
    assert.equal(err.__type, "com.amazonaws.sqs#QueueDoesNotExist");
    // Without the header the code is missing, and refused() says so.
    answer = () => ({ status: 400, headers: {}, body: { __type: "com.amazonaws.sqs#QueueDoesNotExist", message: "no such queue" } });
    await assert.rejects(refused(c.send(new GetQueueUrlCommand({ QueueName: "q" })), { type: "QueueDoesNotExist", status: 400, code: "AWS.SimpleQueueService.NonExistentQueue" }), /query code/);
  });
});

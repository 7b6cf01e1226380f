// The SQS front with sqs.access_keys configured (SigV4 only): the good key, a wrong secret, an
// unknown key, no signature, the wrong region, a clock 20 minutes off either way (refused) and
// 2 minutes behind (accepted), and a key whose role does not reach the action.

import { describe, it } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { ACCOUNT, REGION, client, codeOf, dlqApi, queueUrl, rawSqs, refused, uniqueName, useDlqd } from "./harness.js";

const T = { timeout: 30000 };
const MINUTE = 60000;

function keyId() {
  return "AKIA" + randomBytes(12).toString("hex").toUpperCase().slice(0, 16);
}

function secret() {
  return randomBytes(30).toString("base64");
}

/** The secret file: mode 0600, one trailing newline (which dlqd strips). */
function secretFile(dir, name, value) {
  const file = path.join(dir, `${name}.sqs-secret`);
  fs.writeFileSync(file, value + "\n", { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

export function keyedFront(db) {
  describe(`SQS front with access keys (${db})`, { concurrency: true }, () => {
    const ops = { name: "ops", id: keyId(), secret: secret() };
    const feeder = { name: "feeder", id: keyId(), secret: secret() };
    const ctx = useDlqd(db, (dir) => ({
      sqs: {
        region: REGION,
        account_id: ACCOUNT,
        access_keys: [
          { name: ops.name, access_key_id: ops.id, secret_file: secretFile(dir, ops.name, ops.secret), roles: ["admin"] },
          { name: feeder.name, access_key_id: feeder.id, secret_file: secretFile(dir, feeder.name, feeder.secret), roles: ["producer"] },
        ],
      },
    }));
    const as = (key, overrides = {}) => client(ctx, { credentials: { accessKeyId: key.id, secretAccessKey: key.secret }, ...overrides });
    const SIGNATURE = { type: "SignatureDoesNotMatch", status: 403, code: codeOf("SignatureDoesNotMatch") };

    /** A refused CreateQueue must leave no queue behind. */
    async function nothingCreated(name) {
      await refused(as(ops).send(new GetQueueUrlCommand({ QueueName: name })), {
        type: "QueueDoesNotExist",
        status: 400,
        code: "AWS.SimpleQueueService.NonExistentQueue",
      });
    }

    it("the good key works: create, send, receive, delete; its name is the actor of a purge", T, async () => {
      const sqs = as(ops);
      const name = uniqueName("keyed");
      const url = (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl;
      assert.equal(url, queueUrl(ctx, name));
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "signed" }));
      const got = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 2 }))).Messages ?? [];
      assert.deepEqual(got.map((m) => m.Body), ["signed"]);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: got[0].ReceiptHandle }));
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "to purge" }));
      await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
      const audit = await dlqApi(ctx, `/audit?action=purge&queue=${name}`);
      assert.equal(audit.status, 200, JSON.stringify(audit.body));
      const entries = audit.body.entries;
      assert.ok(entries.length >= 1, JSON.stringify(audit.body));
      for (const e of entries) assert.deepEqual([e.actor, e.filter?.sqs_action], ["ops", "PurgeQueue"], JSON.stringify(e));
      assert.equal(entries.reduce((n, e) => n + e.details.purged, 0), 1, JSON.stringify(entries));
    });

    it("a wrong secret is SignatureDoesNotMatch and changes nothing", T, async () => {
      const name = uniqueName("wrong-secret");
      await refused(as({ id: ops.id, secret: ops.secret + "x" }).send(new CreateQueueCommand({ QueueName: name })), SIGNATURE);
      await nothingCreated(name);
    });

    it("an unknown access key id is InvalidClientTokenId", T, async () => {
      const name = uniqueName("unknown-key");
      await refused(as({ id: keyId(), secret: ops.secret }).send(new CreateQueueCommand({ QueueName: name })), {
        type: "InvalidClientTokenId",
        status: 403,
        code: codeOf("InvalidClientTokenId"),
      });
      await nothingCreated(name);
    });

    it("a signature for another region is SignatureDoesNotMatch", T, async () => {
      const name = uniqueName("region");
      await refused(as(ops, { region: "eu-west-1" }).send(new CreateQueueCommand({ QueueName: name })), SIGNATURE);
      await nothingCreated(name);
    });

    it("an unsigned request, or one with a Bearer token, is MissingAuthenticationToken (403, never 401)", T, async () => {
      const name = uniqueName("unsigned");
      for (const headers of [{}, { Authorization: "Bearer some-token" }]) {
        const r = await rawSqs(ctx, "CreateQueue", { QueueName: name }, { headers });
        assert.equal(r.status, 403, r.text);
        assert.equal(r.body?.__type, "com.amazonaws.sqs#MissingAuthenticationToken", r.text);
        assert.match(r.headers.get("x-amzn-query-error") ?? "", /^(AWS\.SimpleQueueService\.)?MissingAuthenticationToken;Sender$/);
        assert.ok(r.headers.get("x-amzn-requestid"), "x-amzn-RequestId");
        assert.equal(r.headers.get("www-authenticate"), null, "no Bearer challenge on the SQS front");
      }
      await nothingCreated(name);
    });

    it("a clock 20 minutes ahead or behind is refused; 2 minutes behind is accepted", T, async () => {
      for (const offset of [20 * MINUTE, -20 * MINUTE]) {
        const name = uniqueName("skew");
        // One attempt: the SDK would otherwise correct its clock from the answer and retry.
        await refused(as(ops, { systemClockOffset: offset }).send(new CreateQueueCommand({ QueueName: name })), SIGNATURE);
        await nothingCreated(name);
      }
      const name = uniqueName("skew-ok");
      const made = await as(ops, { systemClockOffset: -2 * MINUTE }).send(new CreateQueueCommand({ QueueName: name }));
      assert.equal(made.QueueUrl, queueUrl(ctx, name));
    });

    it("a producer key may send but not create a queue (AccessDenied)", T, async () => {
      const name = uniqueName("producer");
      const url = (await as(ops).send(new CreateQueueCommand({ QueueName: name }))).QueueUrl;
      const sent = await as(feeder).send(new SendMessageCommand({ QueueUrl: url, MessageBody: "from the feeder" }));
      assert.match(sent.MessageId, /^[1-9][0-9]*$/);
      const other = uniqueName("producer-new");
      await refused(as(feeder).send(new CreateQueueCommand({ QueueName: other })), { type: "AccessDenied", status: 403, code: codeOf("AccessDenied") });
      await nothingCreated(other);
      await refused(as(feeder).send(new ReceiveMessageCommand({ QueueUrl: url })), { type: "AccessDenied", status: 403, code: codeOf("AccessDenied") });
    });
  });
}

'use strict';
// SQS adapter for the side-by-side benchmark harness (../shared/bench, driver/driver.js): drives
// dlqd's SQS front (docs/sqs.md, JSON 1.0 protocol) through the pinned @aws-sdk/client-sqs
// (3.930.0, the same pin as tests/sqs). scripts/bench-sqs.sh copies it into a copy of the harness as
// driver/adapters/sqs.js and registers the system `dlq-sqs` with it; the SDK comes from
// scripts/bench-sqs/package-lock.json (NODE_PATH points at that install).
//
// Mapping onto the harness's workloads, request for request against the `dlq` adapter
// (driver/adapters/http.js) run with DLQ_WORKER=plain:
//   prepare (W1/W3/warm-up)  CreateQueue {QueueName}   (a queue is QueueDoesNotExist to SQS until then)
//   enqueue                  SendMessage {QueueUrl, MessageBody: payload}           (dlq: POST .../messages)
//   claim                    ReceiveMessage {MaxNumberOfMessages 1, WaitTimeSeconds 0} (dlq: POST .../claim,
//                            no wait_seconds: the dlq adapter never waits, an empty claim sleeps 1 ms)
//   ack                      DeleteMessage {QueueUrl, ReceiptHandle}               (dlq: POST .../succeed)
//   depth (W2 remaining, W3 backlog)  GetQueueAttributes ApproximateNumberOfMessages + ...NotVisible
//                            + ...Delayed = dlq's stats ready + processing + scheduled
// W4 (retry to dead) is not mapped: it needs a redrive policy (issue 39); bench-sqs.sh skips W4.
//
// Transport: one SQSClient over a node:http keep-alive Agent with HTTP_SOCKETS sockets (default 16,
// the harness's HTTP clients' connection count); depth polls use a second client with 1 socket (as the
// dlq adapter's `ctl`). Anonymous front (dlqd without auth.tokens and sqs.access_keys): the SDK signs
// with dummy credentials, region us-east-1. SDK retries off (maxAttempts 1), as the harness's HTTP
// clients do not retry, so every failure is counted. The SDK's MD5 checks of SendMessage and
// ReceiveMessage answers stay on (its default, what a real client pays; driver CPU): SQS_MD5=0 turns
// them off.
// Env: HTTP_SOCKETS (16), SQS_WAIT_SECONDS (0: WaitTimeSeconds of the W3 workers' receives; W2 and
// W4-style non-blocking receives always send 0), SQS_EMPTY_SLEEP_MS (falls back to DLQ_EMPTY_SLEEP_MS,
// then 1), SQS_VISIBILITY_TIMEOUT (unset: the queue's, 30 s), SQS_MD5 (1).
const http = require('node:http');

module.exports = async function create({ url, log = () => {} }) {
  const env = process.env;
  const {
    SQSClient, CreateQueueCommand, SendMessageCommand, ReceiveMessageCommand, DeleteMessageCommand,
    GetQueueAttributesCommand,
  } = require('@aws-sdk/client-sqs');
  let sdkVersion = '?';
  try { sdkVersion = require('@aws-sdk/client-sqs/package.json').version; } catch { /* exports map */ }

  const base = new URL(url);
  if (base.hostname !== '127.0.0.1' && base.hostname !== 'localhost') throw new Error(`sqs adapter: ${url} is not loopback`);
  const origin = base.origin;
  const sockets = Number(env.HTTP_SOCKETS || 16);
  const waitSeconds = Number(env.SQS_WAIT_SECONDS || 0);
  const md5 = env.SQS_MD5 !== '0';
  const visibility = env.SQS_VISIBILITY_TIMEOUT === undefined || env.SQS_VISIBILITY_TIMEOUT === '' ? undefined : Number(env.SQS_VISIBILITY_TIMEOUT);
  if (!Number.isInteger(waitSeconds) || waitSeconds < 0 || waitSeconds > 20) throw new Error(`SQS_WAIT_SECONDS must be 0..20 (got '${env.SQS_WAIT_SECONDS}')`);

  const agents = [];
  const makeClient = (n) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: n, maxFreeSockets: n });
    agents.push(agent);
    const cfg = {
      endpoint: origin,
      region: 'us-east-1',
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
      maxAttempts: 1,
      requestHandler: { httpAgent: agent },
    };
    if (!md5) cfg.md5 = false;
    return new SQSClient(cfg);
  };
  const main = makeClient(sockets);
  const ctl = makeClient(1);

  const urls = new Map(); // queue name -> QueueUrl (from CreateQueue)
  const loopbackUrl = (u) => { const x = new URL(u); return x.hostname === '127.0.0.1' || x.hostname === 'localhost'; };
  async function queueUrl(q) {
    let u = urls.get(q);
    if (u) return u;
    const r = await ctl.send(new CreateQueueCommand({ QueueName: q }));
    u = r.QueueUrl;
    // dlqd names itself by the bound address (sqs.public_url unset): http://127.0.0.1:<port>/000000000000/<q>
    if (!u || !loopbackUrl(u)) throw new Error(`CreateQueue ${q}: unexpected QueueUrl ${u}`);
    urls.set(q, u);
    return u;
  }

  const ad = {
    meta: {
      client: `@aws-sdk/client-sqs ${sdkVersion} SQSClient (node:http Agent keepAlive maxSockets ${sockets}, maxAttempts 1, MD5 checks ${md5 ? 'on' : 'off'}; Node ${process.version})`,
      server: `dlqd SQS front (JSON 1.0) at ${origin}`,
      setting: 'anonymous front (no auth.tokens, no sqs.access_keys); dummy SigV4 credentials, region us-east-1',
      notes: `sqs adapter: CreateQueue per queue, then enqueue = SendMessage, claim = ReceiveMessage MaxNumberOfMessages 1 WaitTimeSeconds ${waitSeconds} (W3; W2 0)${visibility === undefined ? '' : ` VisibilityTimeout ${visibility}`}, ack = DeleteMessage (ReceiptHandle); depth = GetQueueAttributes ApproximateNumberOfMessages + NotVisible + Delayed; W4 not mapped (needs redrive, issue 39)`,
    },
    emptySleepMs: Number(env.SQS_EMPTY_SLEEP_MS || env.DLQ_EMPTY_SLEEP_MS || 1),
    supportsW4: false,
    w4SkipReason: 'sqs adapter: W4 needs a redrive policy (issue 39)',
    async prepare(q) { await queueUrl(q); },
    async producer(q) {
      const QueueUrl = await queueUrl(q);
      return {
        async enqueue(payload) {
          const r = await main.send(new SendMessageCommand({ QueueUrl, MessageBody: payload }));
          if (!r.MessageId) throw new Error('SendMessage: no MessageId');
          return r.MessageId;
        },
      };
    },
    async consumer(q) {
      const QueueUrl = await queueUrl(q);
      return {
        async claim({ block } = {}) {
          const input = { QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: block ? waitSeconds : 0 };
          if (visibility !== undefined) input.VisibilityTimeout = visibility;
          const r = await main.send(new ReceiveMessageCommand(input));
          const m = r.Messages && r.Messages[0];
          if (!m) return null;
          if (r.Messages.length > 1) throw new Error(`ReceiveMessage: ${r.Messages.length} messages for MaxNumberOfMessages 1`);
          if (!m.ReceiptHandle) throw new Error('ReceiveMessage: message without ReceiptHandle');
          return { id: m.MessageId, payload: m.Body, lease: m.ReceiptHandle };
        },
        async ack(m) {
          await main.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.lease }));
        },
      };
    },
    async depth(q) {
      const r = await ctl.send(new GetQueueAttributesCommand({
        QueueUrl: await queueUrl(q),
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }));
      const a = r.Attributes || {};
      const v = Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
      return Number.isFinite(v) ? v : null;
    },
    async deadCount() { return null; },
    async close() {
      main.destroy();
      ctl.destroy();
      for (const a of agents) a.destroy();
    },
  };
  log(`sqs adapter: ${ad.meta.client}`);
  return ad;
};

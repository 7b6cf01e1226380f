import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
// dlqd's CPU per enqueue-claim-ack cycle at one fixed rate, through dlq's own API or the SQS
// front (docs/sqs.md, "Benchmark"): node matched-rate.mjs {api|sqs} <cycles per second> [tag].
// Needs `npm ci` in this folder; DLQD names the binary (default build/release/app/dlqd). Linux
// only (reads /proc/<pid>/stat). Prints one JSON line.
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const { SQSClient, CreateQueueCommand, SendMessageCommand, ReceiveMessageCommand, DeleteMessageCommand } = require('@aws-sdk/client-sqs');
const { NodeHttpHandler } = require('@smithy/node-http-handler');

const [mode, Rs, tag = 'run'] = process.argv.slice(2);
if (!['api', 'sqs'].includes(mode) || !(Number(Rs) > 0)) {
  console.error('usage: node matched-rate.mjs {api|sqs} <cycles per second> [tag]');
  process.exit(2);
}
const dlqd = process.env.DLQD ?? path.resolve(here, '..', '..', 'build', 'release', 'app', 'dlqd');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dlq-matched-'));
const R = Number(Rs), LOOPS = 8, WARM = 1000, WIN = 20000;
const HZ = 100;
const PAYLOAD = 'x'.repeat(200);
const db = path.join(dir, `${tag}-${mode}-${R}.db`);

const child = spawn(dlqd, ['--db', `sqlite://${db}`, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
let errTail = '';
child.stderr.on('data', d => { errTail = (errTail + d).slice(-2000); });
const base = await new Promise((res, rej) => {
  let buf = '';
  const t = setTimeout(() => rej(new Error('no listen line; stderr: ' + errTail)), 10000);
  child.stdout.on('data', d => { buf += d; const m = buf.match(/dlqd listening on (http:\/\/[^\s]+)/); if (m) { clearTimeout(t); res(m[1]); } });
  child.on('exit', c => rej(new Error('dlqd exited ' + c + ' ' + errTail)));
});
const u = new URL(base);
const cpu = () => { const s = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) / HZ; };

const agent = new http.Agent({ keepAlive: true, maxSockets: LOOPS * 2 });
function req(method, path, obj) {
  return new Promise((res, rej) => {
    const body = obj === undefined ? undefined : JSON.stringify(obj);
    const r = http.request({ host: u.hostname, port: u.port, method, path, agent, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : { 'content-length': 0 } }, resp => {
      let t = ''; resp.setEncoding('utf8'); resp.on('data', d => t += d); resp.on('end', () => res({ status: resp.statusCode, text: t }));
    });
    r.on('error', rej); if (body) r.write(body); r.end();
  });
}
let cycle;
if (mode === 'api') {
  const q = '/queues/bench';
  cycle = async () => {
    const e = await req('POST', `${q}/messages`, { payload: PAYLOAD }); if (e.status !== 201) throw new Error('enqueue ' + e.status + e.text);
    const c = await req('POST', `${q}/claim`); if (c.status !== 200) throw new Error('claim ' + c.status + c.text);
    const j = JSON.parse(c.text); if (!j.claimed) return false;
    const m = j.message;
    const s = await req('POST', `${q}/messages/${m.id}/succeed`, { lease_id: m.lease_id }); if (s.status !== 200) throw new Error('succeed ' + s.status + s.text);
    return true;
  };
} else {
  const client = new SQSClient({ region: 'us-east-1', endpoint: base, credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    requestHandler: new NodeHttpHandler({ httpAgent: agent }) });
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'bench' }));
  cycle = async () => {
    await client.send(new SendMessageCommand({ QueueUrl, MessageBody: PAYLOAD }));
    const r = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }));
    const m = r.Messages?.[0]; if (!m) return false;
    await client.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    return true;
  };
}
const sleep = ms => new Promise(r => setTimeout(r, ms));
const t0 = performance.now() + 200;
const winStart = t0 + WARM, winEnd = winStart + WIN;
let done = 0, empty = 0, cpu0, cpu1;
setTimeout(() => { cpu0 = cpu(); }, Math.max(0, winStart - performance.now()));
setTimeout(() => { cpu1 = cpu(); }, Math.max(0, winEnd - performance.now()));
const period = LOOPS * 1000 / R;
async function loop(k) {
  for (let i = 0; ; i++) {
    const due = t0 + (i * LOOPS + k) * 1000 / R;
    if (due >= winEnd) return;
    const now = performance.now(); if (due > now) await sleep(due - now);
    const ok = await cycle();
    const fin = performance.now();
    if (fin >= winStart && fin < winEnd) { if (ok) done++; else empty++; }
  }
}
await Promise.all(Array.from({ length: LOOPS }, (_, k) => loop(k)));
const lateEnd = performance.now();
// cpu1 may include a little tail after winEnd; use actual elapsed span
const span = (lateEnd - winStart) / 1000;
const doneAll = done; // cycles finished in [winStart, winEnd)
child.kill('SIGTERM');
await new Promise(r => child.on('exit', r));
fs.rmSync(dir, { recursive: true, force: true });
const cpuS = cpu1 - cpu0;
console.log(JSON.stringify({ mode, R, achieved: +(doneAll / (WIN / 1000)).toFixed(1), done: doneAll, empty, cpu_s: +cpuS.toFixed(2), span_s: +span.toFixed(2), us_per_cycle: +(cpuS * 1e6 / doneAll).toFixed(1), cpu_pct: +(100 * cpuS / span).toFixed(1) }));
process.exit(0);

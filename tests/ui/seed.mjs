// Seeds a fresh dlqd over HTTP for the UI test, and writes what it made to $DLQ_UI_SEED.
// Queues: emails (many dead send_email of two causes, more than one page), billing (charge_card,
// not idempotent), reports (ready, scheduled, processing, succeeded, dead for several reasons),
// webhooks (a lease that expired), exports (a big batch for the slow, paused replay run), images
// (two messages retrying, three never tried: the queue's own lists).
// Every cause is an incident; the emails' second cause died over the last 20 hours (X-Now).
import { writeFileSync } from 'node:fs';

const base = process.env.DLQ_UI_BASE;
const token = process.env.DLQ_UI_ADMIN_TOKEN;
export const SECRET = 'sk_live_UI_SEEDED_SECRET_7f3a9c';

async function call(method, path, body, expect, now) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...(now ? { 'X-Now': now } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10000),
  });
  const text = await res.text();
  if (expect !== undefined ? res.status !== expect : !res.ok) {
    throw new Error(`${method} ${path} -> ${res.status} ${text}`);
  }
  return text ? JSON.parse(text) : null;
}

async function enqueue(queue, items) {
  const r = await call('POST', `/queues/${queue}/messages/batch`, { messages: items }, 201);
  return r.messages;
}

// Claims exactly the given ids (they must be the only due messages of their job types) and fails each.
async function claimAll(queue, n, jobTypes, worker, visibility = 300) {
  const got = [];
  while (got.length < n) {
    const r = await call('POST', `/queues/${queue}/claim`,
      { max: Math.min(100, n - got.length), worker, job_types: jobTypes, visibility_timeout: visibility });
    if (!r.claimed) throw new Error(`claim ${queue}: nothing due, got ${got.length}/${n}`);
    got.push(...r.messages);
  }
  return got;
}
// `at` (an RFC 3339 time, X-Now) makes the failure, and so the death, happen then.
const fail = (m, body, at) => call('POST', `/queues/${m.queue}/messages/${m.id}/fail`, { lease_id: m.lease_id, ...body }, undefined, at);
const succeed = (m) => call('POST', `/queues/${m.queue}/messages/${m.id}/succeed`, { lease_id: m.lease_id });

const payload = (obj) => JSON.stringify(obj);
const seed = { secret: SECRET, queues: {} };

// webhooks: one message whose lease expires (max_lease_expiries 1) -> dead lease_expired.
await enqueue('webhooks', [{ payload: payload({ url: 'http://127.0.0.1:1/hook', event: 'order.paid' }), job_type: 'deliver_webhook' }]);
const [hook] = await claimAll('webhooks', 1, ['deliver_webhook'], 'worker-hooks', 1);
const leaseStarted = Date.now();

// emails: 45 dead send_email (transient, retries exhausted at the first failure) + 5 non_retryable.
// The 45 are two causes: 33 temporary failures now, and 12 refused connections, 4 of them
// 20 hours ago, 3 7 hours ago and 5 now (the sparkline of the incidents page).
const hoursAgo = (n) => new Date(Date.now() - n * 3600 * 1000).toISOString();
const relayDeaths = [...Array(4).fill(20), ...Array(3).fill(7), ...Array(5).fill(0)];
const emailItems = [];
for (let i = 0; i < 50; i++) {
  emailItems.push({
    payload: payload({ to: `user${i}@example.com`, template: 'welcome', smtp: { user: 'mailer', password: SECRET } }),
    job_type: 'send_email', max_retries: 1,
  });
}
await enqueue('emails', emailItems);
const emails = await claimAll('emails', 50, ['send_email'], 'worker-mail-1');
for (const [i, m] of emails.entries()) {
  if (i < 33) await fail(m, { error: `SMTP 451 temporary failure for user${i}`, error_class: 'transient' });
  else if (i < 45) {
    const ago = relayDeaths[i - 33];
    await fail(m, { error: `connection to relay 10.0.0.${i} refused`, error_class: 'transient' }, ago ? hoursAgo(ago) : undefined);
  } else await fail(m, { error: 'mailbox does not exist', error_class: 'invalid_input' });
}

// emails: one message with a long history: three attempts on two workers, then dead.
const [story] = await enqueue('emails', [{
  payload: payload({ to: 'vip@example.com', template: 'invoice', api_key: SECRET, amount: 42 }),
  job_type: 'send_invoice', max_retries: 3, idempotency_key: 'invoice-2026-0042',
}]);
{
  let [m] = await claimAll('emails', 1, ['send_invoice'], 'worker-mail-1');
  await fail(m, { error: 'connection reset by peer', error_class: 'transient', retry_in: 0, checkpoint: 'pdf_rendered' });
  [m] = await claimAll('emails', 1, ['send_invoice'], 'worker-mail-2');
  await fail(m, { error: 'SMTP server timed out after 30 s', error_class: 'timeout', retry_in: 0 });
  [m] = await claimAll('emails', 1, ['send_invoice'], 'worker-mail-2');
  await fail(m, { error: 'quota exceeded', error_class: 'throttled', cause: 'provider rate limit', stack: 'at send (mail.js:10)\nat run (worker.js:88)' });
}

// billing: charge_card (configured idempotent: false), 6 dead (timeout), 2 succeeded.
const billItems = [];
for (let i = 0; i < 8; i++) {
  billItems.push({ payload: payload({ customer: `cus_${i}`, cents: 1000 + i, card_number: '4242424242424242' }),
    job_type: 'charge_card', max_retries: 1, idempotency_key: `charge-${i}` });
}
await enqueue('billing', billItems);
const bills = await claimAll('billing', 8, ['charge_card'], 'worker-billing');
for (const [i, m] of bills.entries()) {
  if (i < 6) await fail(m, { error: `gateway timeout charging cus_${i}`, error_class: 'timeout' });
  else await succeed(m);
}

// reports: 3 ready, 2 scheduled, 1 processing, 2 succeeded, 3 dead auth (non_retryable),
// 1 dead retry_window_exceeded (the queue's window is 1 s, the backoff 2 s).
const rep = (i) => ({ payload: payload({ report: `r${i}`, token: SECRET }), job_type: 'build_report' });
await enqueue('reports', [rep(1), rep(2), rep(3), rep(4), rep(5), rep(6), rep(7)]);
const reps = await claimAll('reports', 7, ['build_report'], 'worker-reports');
for (const m of reps.slice(0, 3)) await fail(m, { error: 'warehouse refused the credentials', error_class: 'auth' });
await fail(reps[3], { error: 'warehouse busy', error_class: 'transient' });
await succeed(reps[4]);
await succeed(reps[5]);
// reps[6] stays processing (lease 300 s).
await enqueue('reports', [rep(8), rep(9), rep(10)]);
await enqueue('reports', [{ ...rep(11), delay_seconds: 3600 }, { ...rep(12), delay_seconds: 3600 }]);

// exports: 30 dead export_csv for the slow batch replay (paused and resumed by the test).
const expItems = [];
for (let i = 0; i < 30; i++) expItems.push({ payload: payload({ export: i }), job_type: 'export_csv', max_retries: 1 });
await enqueue('exports', expItems);
const exps = await claimAll('exports', 30, ['export_csv'], 'worker-exports');
for (const m of exps) await fail(m, { error: 'disk full', error_class: 'unknown', retryable: false });

// images: two resize_image that failed once and are due again in an hour (retrying), then one
// resize_image and two make_thumbnail never tried; pending 5 in all.
const retrying = [];
for (const n of [1, 2]) {
  await enqueue('images', [{ payload: payload({ image: `retry-${n}.png` }), job_type: 'resize_image', max_retries: 3 }]);
  const [m] = await claimAll('images', 1, ['resize_image'], 'worker-images');
  await fail(m, { error: `image server timed out (${n})`, error_class: 'timeout', retry_in: 3600 });
  retrying.push(m.id);
}
const fresh = await enqueue('images', [{ payload: payload({ image: 'a.png' }), job_type: 'resize_image' },
  { payload: payload({ image: 'b.png' }), job_type: 'make_thumbnail' }, { payload: payload({ image: 'c.png' }), job_type: 'make_thumbnail' }]);
seed.images = { retrying: retrying.map((id) => id), fresh: fresh.map((m) => m.id) };

// Wait for the reaper to kill the webhook lease (<= 1 s after expiry).
for (;;) {
  const m = await call('GET', `/queues/webhooks/messages/${hook.id}`);
  if (m.status === 'dead') break;
  if (Date.now() - leaseStarted > 15000) throw new Error(`webhook lease not reaped: ${JSON.stringify(m)}`);
  await new Promise((r) => setTimeout(r, 200));
}

const queues = await call('GET', '/queues');
for (const q of queues.queues) seed.queues[q.queue] = q;
const expect = { emails: { dead: 51 }, billing: { dead: 6, succeeded: 2 },
  reports: { ready: 3, scheduled: 2, processing: 1, succeeded: 2, dead: 4 }, webhooks: { dead: 1 }, exports: { dead: 30 },
  images: { ready: 3, scheduled: 2, dead: 0 } };
for (const [q, counts] of Object.entries(expect)) {
  for (const [k, v] of Object.entries(counts)) {
    if (seed.queues[q]?.[k] !== v) throw new Error(`seed: ${q}.${k} is ${seed.queues[q]?.[k]}, expected ${v}`);
  }
}
// The incidents: one per cause, the two causes of send_email among them.
const { incidents } = await call('GET', '/dlq/incidents?limit=100');
const cause = (title) => incidents.find((i) => i.title === title);
const smtp = cause('SMTP <n> temporary failure for user<n>');
const relay = cause('connection to relay <ip> refused');
if (incidents.length !== 9 || smtp?.dead !== 33 || relay?.dead !== 12) {
  throw new Error(`seed: incidents ${JSON.stringify(incidents.map((i) => [i.title, i.dead]))}`);
}
const hourly = (i) => i.per_hour.map((c, k) => [k, c]).filter(([, c]) => c);
if (JSON.stringify(hourly(relay).map(([k, c]) => [47 - k, c])) !== '[[20,4],[7,3],[0,5]]') {
  throw new Error(`seed: the relay's hours ${JSON.stringify(relay.per_hour)}`);
}
seed.incidents = { count: incidents.length, smtp: smtp.fingerprint, relay: relay.fingerprint };
seed.story = { queue: 'emails', id: story.id };
seed.hook = { queue: 'webhooks', id: hook.id };
seed.dead_total = 51 + 6 + 4 + 1 + 30;
writeFileSync(process.env.DLQ_UI_SEED, JSON.stringify(seed, null, 2));
console.log(`seed: ${seed.dead_total} dead messages in ${queues.queues.length} queues, ${incidents.length} incidents`);

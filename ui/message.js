// Message detail: redacted payload, the attempt history as a timeline, replays, actions.
import { h, dl, timeEl, badge, prettyPayload, bdi } from './dom.js';
import { api } from './api.js';
import { setTitle, navigate, showError, adminOnly } from './app.js';
import { replayOneDialog, dismissOneDialog } from './dialogs.js';

// History entries per request: the first page, then each "Show more".
const HISTORY_PAGE = 100;

export async function renderMessage(main, ctx) {
  const [, queue, id] = ctx.match;
  setTitle(`Message #${id}`);
  const base = `/queues/${encodeURIComponent(queue)}/messages/${id}`;
  const [m, hist] = await Promise.all([api('GET', base), api('GET', `${base}/attempts`, { query: { limit: HISTORY_PAGE } })]);
  if (!ctx.isCurrent()) return;
  const reload = () => navigate(`/m/${queue}/${id}`);

  main.append(
    h('p', { class: 'crumbs' }, h('a', { href: `#/dlq?queue=${encodeURIComponent(queue)}` }, `← Dead letters in ${queue}`)),
    h('div', { class: 'page-head' },
      h('h1', null, `Message #${m.id} `, h('span', { class: 'sub' }, `in ${m.queue}`), ' ', badge(m.status, 'status')),
      h('div', { class: 'head-actions' }, adminOnly(
        h('button', { type: 'button', class: 'primary', id: 'msg-replay', disabled: !(m.status === 'dead' || m.status === 'dismissed'),
          onclick: () => replayOneDialog(m, reload) }, 'Replay…'),
        h('button', { type: 'button', id: 'msg-dismiss', disabled: m.status !== 'dead', onclick: () => dismissOneDialog(m, reload) }, 'Dismiss…')))));

  main.append(h('div', { class: 'cols' },
    h('section', { class: 'panel', 'aria-labelledby': 'sum-h' }, h('h2', { id: 'sum-h' }, 'Summary'),
      dl([
        ['Status', badge(m.status, 'status')],
        ['Job type', m.job_type],
        ['Error class', badge(m.error_class, 'class')],
        ['Dead reason', badge(m.dead_reason, 'reason')],
        ['Last error', m.last_error ? h('span', { class: 'err' }, m.last_error) : null],
        ['Attempts', `${m.attempts} (retry count ${m.retry_count} of ${m.max_retries} in this life; lease expiries ${m.lease_expiries})`],
        ['Idempotency key', m.idempotency_key ? h('code', { id: 'msg-idem' }, m.idempotency_key) : null],
        ['Checkpoint', m.checkpoint ? h('code', { id: 'msg-checkpoint' }, m.checkpoint) : null],
        ['Priority', String(m.priority)],
        ['Created', timeEl(m.created_at)],
        ['First attempt', timeEl(m.first_attempt_at)],
        ['Last attempt', timeEl(m.last_attempt_at)],
        ['Dead at', timeEl(m.dead_at)],
        ['Due', m.retry_after ? timeEl(m.retry_after) : null],
        ['Lease expires', m.lease_expires_at ? timeEl(m.lease_expires_at) : null],
        ['Updated', timeEl(m.updated_at)],
      ])),
    h('section', { class: 'panel', 'aria-labelledby': 'payload-h' }, h('h2', { id: 'payload-h' }, 'Payload'),
      h('p', { class: 'muted' }, 'Secret fields are masked as "***" by the server.'),
      h('pre', { class: 'payload', id: 'msg-payload', tabindex: '0', 'aria-label': 'Payload' }, prettyPayload(m.payload)))));

  main.append(historyPanel(base, hist, ctx));

  const runsBox = h('div', { id: 'msg-runs' }, h('p', { class: 'muted' }, 'Looking for batch runs…'));
  main.append(h('section', { class: 'panel', 'aria-labelledby': 'rp-h' }, h('h2', { id: 'rp-h' }, 'Replays'),
    h('p', { id: 'msg-replay-count' }, `Replayed ${m.replay_count} time${m.replay_count === 1 ? '' : 's'}.`), runsBox));
  findRuns(m).then((runs) => {
    if (!ctx.isCurrent()) return;
    runsBox.replaceChildren(runs.length
      ? h('ul', { class: 'runs' }, runs.map((r) => h('li', null, h('a', { href: `#/replays/${r.replay_id}` }, `Batch run #${r.replay_id}`),
        ` — ${r.status}, by ${r.actor || 'anonymous'}, `, timeEl(r.created_at), r.reason ? ` — “${r.reason}”` : '')))
      : h('p', { class: 'muted' }, 'Not part of any batch replay run.'));
  }, () => runsBox.replaceChildren(h('p', { class: 'muted' }, 'Batch runs could not be listed.')));
}

// The history, a page at a time: "Show more" appends the next page (next_after: the entries
// shown so far) until the server says there is none, so a long history never builds its DOM whole.
function historyPanel(base, first, ctx) {
  const heading = h('h2', { id: 'tl-h' });
  const section = h('section', { class: 'panel', 'aria-labelledby': 'tl-h' }, heading);
  if (!first.attempts.length) {
    heading.textContent = 'History (0)';
    section.append(h('p', { class: 'empty' }, 'No attempts yet.'));
    return section;
  }
  const list = h('ol', { class: 'timeline', id: 'timeline' }, first.attempts.map(timelineItem));
  let shown = first.count;
  let next = first.next_after;
  const more = h('button', { type: 'button', id: 'tl-more' }, 'Show more');
  const update = () => {
    const rest = next === null || next === undefined;
    heading.textContent = `History (${shown}${rest ? '' : '+'})`;
    more.hidden = rest;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api('GET', `${base}/attempts`, { query: { limit: HISTORY_PAGE, after: next } });
      if (!ctx.isCurrent()) return;
      list.append(...page.attempts.map(timelineItem));
      shown += page.count;
      next = page.next_after;
      update();
    } catch (err) {
      showError(err);
    } finally {
      more.disabled = false;
    }
  });
  update();
  section.append(list, h('p', { class: 'more' }, more));
  return section;
}

function timelineItem(a) {
  const kind = a.outcome || 'running';
  const who = a.worker ? ['worker ', h('code', null, a.worker)] : a.actor ? ['by ', h('strong', { class: 'actor' }, a.actor)] : null;
  let title;
  if (kind === 'replayed') title = 'Replayed';
  else if (kind === 'dismissed') title = 'Dismissed';
  else if (kind === 'running') title = `Attempt ${a.attempt} — in progress (leased)`;
  else if (a.count > 1) title = `Attempts ${a.attempt - a.count + 1}–${a.attempt} — ${kind.replace('_', ' ')} ${a.count} times`;
  else title = `Attempt ${a.attempt} — ${kind.replace('_', ' ')}`;
  return h('li', { class: ['tl-item', `tl-${kind}`], 'data-outcome': kind },
    h('div', { class: 'tl-head' }, h('strong', null, title), ' ', who,
      a.error_class ? [' ', badge(a.error_class, 'class')] : null),
    h('div', { class: 'tl-time muted' },
      a.claimed_at ? ['claimed ', timeEl(a.claimed_at)] : null,
      a.claimed_at && a.finished_at ? ' → ' : null,
      a.finished_at ? [a.claimed_at ? 'finished ' : '', timeEl(a.finished_at)] : null,
      a.claimed_at && a.finished_at ? ` (${duration(a.claimed_at, a.finished_at)})` : null),
    a.error ? h('p', { class: 'err' }, a.error) : null,
    a.cause ? h('p', null, h('span', { class: 'label' }, 'Cause: '), bdi(a.cause)) : null,
    a.reason ? h('p', null, h('span', { class: 'label' }, 'Reason: '), bdi(a.reason)) : null,
    a.stack ? h('details', null, h('summary', null, 'Stack'), h('pre', { class: 'stack' }, a.stack)) : null,
    a.previous_payload ? h('details', null, h('summary', null, 'Payload before the edit'), h('pre', { class: 'payload' }, prettyPayload(a.previous_payload))) : null);
}

function duration(a, b) {
  const ms = new Date(b) - new Date(a);
  if (!(ms >= 0)) return '';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

// The runs a message was part of (replayed or skipped), newest first: GET /dlq/replays?message_id=
// reads the runs' fixed id sets on the server.
async function findRuns(m) {
  const found = [];
  let after = '';
  for (let page = 0; page < 5; page++) {
    const r = await api('GET', '/dlq/replays', { query: { limit: 100, message_id: m.id, after_id: after } });
    found.push(...r.replays);
    if (r.next_after_id === null || r.next_after_id === undefined) break;
    after = r.next_after_id;
  }
  return found;
}


// Message detail: redacted payload, recorded side effects, the attempt history as a timeline
// (trial runs among it), replays, actions.
import { h, append, dl, timeEl, badge, prettyPayload, bdi } from './dom.js';
import { api } from './api.js';
import { setTitle, navigate, showError, adminOnly } from './app.js';
import { replayOneDialog, dismissOneDialog } from './dialogs.js';
import { wouldEffects, expiredSaid } from './trials.js';

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
          onclick: () => replayOneDialog(m, reload, hist.effects || []) }, 'Replay…'),
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

  // Before the timeline: what the effects say decides the replay (Replay… asks about the uncertain
  // ones), and a long history would push them out of sight.
  const effects = effectsPanel(m, hist.effects);
  if (effects) main.append(effects);
  main.append(historyPanel(base, { ...hist, jobType: m.job_type }, ctx));

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

/** What the badge of an effect says: done; started while the message is processing; uncertain otherwise. */
export function effectState(e, m) {
  if (e.state !== 'started') return e.state;
  return m.status === 'processing' ? 'started' : 'uncertain';
}

const EFFECT_TIPS = {
  done: 'Recorded done: a retry or replay skips it.',
  started: 'Started by the attempt under way, not yet recorded done.',
  uncertain: 'Started, and its attempt ended before it was recorded done: it may or may not have happened.',
};

// The side effects the worker recorded (the attempts answer's `effects`, every key of the message).
// An older dlqd has no `effects`: no section then.
function effectsPanel(m, effects) {
  if (!Array.isArray(effects)) return null;
  const section = h('section', { class: 'panel', id: 'msg-effects', 'aria-labelledby': 'fx-h' },
    h('h2', { id: 'fx-h' }, `Side effects (${effects.length})`));
  if (!effects.length) {
    section.append(h('p', { class: 'muted', id: 'fx-none' }, 'No side effects recorded.'));
    return section;
  }
  const uncertain = effects.filter((e) => effectState(e, m) === 'uncertain').length;
  if (uncertain) {
    section.append(h('p', { class: 'warning', id: 'fx-uncertain-note', role: 'note' },
      h('strong', null, `${uncertain} uncertain: `),
      `${uncertain === 1 ? 'its attempt' : 'their attempts'} ended after starting ${uncertain === 1 ? 'it' : 'them'} and before recording ${uncertain === 1 ? 'it' : 'them'} done, `,
      `so ${uncertain === 1 ? 'it' : 'each'} may or may not have happened. On its next attempt the worker libraries fail the message as uncertain_effect unless its handler checks. `,
      'Find out outside dlq whether it happened, then use Replay… to mark it done or to run it again.'));
  }
  const cell = (label, cls, ...content) => h('td', { 'data-label': label, class: cls }, ...content);
  const rows = effects.map((e) => {
    const state = effectState(e, m);
    return h('tr', { 'data-key': e.key, 'data-state': state },
      h('th', { scope: 'row', 'data-label': 'Key', class: 'c-key' }, h('code', null, e.key)),
      // One child per cell: the cards at phone width lay a cell out as label | value.
      cell('State', 'c-state', h('span', null, h('span', { class: ['badge', 'b-effect', `v-${state}`], title: EFFECT_TIPS[state] }, state),
        e.resolved_by ? [' ', h('span', { class: 'c-resolved' }, 'marked done by ', h('strong', { class: 'actor' }, e.resolved_by))] : null)),
      cell('Description', 'c-description', bdi(e.description) || h('span', { class: 'muted' }, '—')),
      cell('Result', 'c-result', e.result === null || e.result === undefined
        ? h('span', { class: 'muted' }, '—')
        : h('pre', { class: 'payload effect-result', tabindex: '0', 'aria-label': `Result of ${e.key}` }, prettyPayload(e.result))),
      cell('Attempt', 'num c-attempt', String(e.attempt)),
      cell('Recorded', 'c-recorded', timeEl(e.recorded_at)));
  });
  append(section, [h('div', { class: 'table-wrap' }, h('table', { class: 'data cards effects', id: 'effects-table' },
    h('caption', { class: 'sr-only' }, 'Side effects recorded by the workers'),
    h('thead', null, h('tr', null, ['Key', 'State', 'Description', 'Result', 'Attempt', 'Recorded'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, rows))),
  effects.some((e) => e.result !== null && e.result !== undefined) ? h('p', { class: 'muted' }, 'Secret fields of results are masked as "***", as in payloads.') : null]);
  return section;
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
  const item = (a) => timelineItem(a, first.jobType);
  const list = h('ol', { class: 'timeline', id: 'timeline' }, first.attempts.map(item));
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
      list.append(...page.attempts.map(item));
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

function timelineItem(a, jobType) {
  const kind = a.outcome || 'running';
  if (kind === 'trial') return trialItem(a, jobType);
  const who = a.worker
    ? ['worker ', h('code', null, a.worker), a.worker_version ? [' ', h('span', { class: 'tl-version' }, 'version ', h('code', null, a.worker_version))] : null]
    : a.actor ? ['by ', h('strong', { class: 'actor' }, a.actor)] : null;
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

// A trial run's entry (api-decisions "Trial runs"): not an attempt — the message did not change —
// but what a worker said when handed it once: its status, who started it and why, the worker and
// its version, the error, and the side effects it would have caused.
function trialItem(a, jobType) {
  const t = a.trial || {};
  const status = t.status || 'ended';
  return h('li', { class: ['tl-item', 'tl-trial', `tl-trial-${status.replace(/[^a-z]/g, '')}`], 'data-outcome': 'trial', 'data-trial-status': status, 'data-trial-id': t.trial_id ?? '' },
    h('div', { class: 'tl-head' }, h('strong', null, `Trial run #${t.trial_id ?? '?'} — ${status}`), ' ',
      a.actor ? ['started by ', h('strong', { class: 'actor' }, a.actor)] : null,
      a.worker ? [a.actor ? ', ' : '', 'ran on worker ', h('code', null, a.worker),
        a.worker_version ? [' ', h('span', { class: 'tl-version' }, 'version ', h('code', null, a.worker_version))] : null] : null,
      a.error_class ? [' ', badge(a.error_class, 'class')] : null),
    h('div', { class: 'tl-time muted' },
      a.claimed_at ? ['claimed ', timeEl(a.claimed_at)] : null,
      a.claimed_at && a.finished_at ? ' → ' : null,
      a.finished_at ? [a.claimed_at ? 'finished ' : 'ended ', timeEl(a.finished_at)] : null,
      a.claimed_at && a.finished_at ? ` (${duration(a.claimed_at, a.finished_at)})` : null,
      ' · the message did not change'),
    a.reason ? h('p', null, h('span', { class: 'label' }, 'Reason: '), bdi(a.reason)) : null,
    status === 'expired' && !a.worker ? h('p', { class: 'tl-trial-hint' }, expiredSaid({}, jobType, bdi)) : null,
    a.error ? h('p', { class: 'err' }, a.error) : null,
    a.cause ? h('p', null, h('span', { class: 'label' }, 'Cause: '), bdi(a.cause)) : null,
    a.stack ? h('details', null, h('summary', null, 'Stack'), h('pre', { class: 'stack' }, a.stack)) : null,
    wouldEffects(t.would_effects, { show: bdi }) || (status === 'succeeded' ? h('p', { class: 'muted' }, 'It reported no side effects it would cause.') : null));
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


// Trial runs (issue 36): before confirming a replay, a dead message goes once to a worker whose
// handler takes trials, and the dialog shows what it did — succeeded (and the side effects it
// would have caused), failed (error, class, the first lines of the stack) or expired. Nothing of
// the message changes. "Try with a worker first" (replay one) and "Try the sample" (batch replay)
// start them and poll each every second until it ends or the dialog closes.
import { h, badge, revealed, timeEl } from './dom.js';
import { api, ApiError } from './api.js';
import { problemBox } from './app.js';

export const TRIAL_POLL_MS = 1000;
// The stack lines shown at once; the rest behind "Whole stack".
const STACK_LINES = 5;

const isOpen = (t) => t.status === 'pending' || t.status === 'running';

function trialPath(t) {
  return `/queues/${encodeURIComponent(t.queue)}/messages/${t.message_id}/trials/${t.trial_id}`;
}

function seconds(fromIso, toMs) {
  const from = Date.parse(fromIso);
  if (Number.isNaN(from)) return 0;
  return Math.max(0, Math.floor((toMs - from) / 1000));
}

/**
 * Reads each open trial every second until none is open or `alive()` says the dialog is gone;
 * `update(trials)` after each round (a trial that could not be read keeps its last state, with
 * `problem` set; one the server no longer has becomes status `gone`). Returns {stop}.
 */
function pollTrials(initial, { alive, update }) {
  let trials = initial.slice();
  let timer = null;
  let stopped = false;
  const round = async () => {
    timer = null;
    if (stopped || !alive()) return;
    trials = await Promise.all(trials.map(async (t) => {
      if (!isOpen(t)) return t;
      try {
        return await api('GET', trialPath(t));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return { ...t, status: 'gone', problem: err };
        return { ...t, problem: err };
      }
    }));
    if (stopped || !alive()) return;
    update(trials);
    if (trials.some(isOpen)) timer = setTimeout(round, TRIAL_POLL_MS);
  };
  update(trials);
  if (trials.some(isOpen)) timer = setTimeout(round, TRIAL_POLL_MS);
  return { stop: () => { stopped = true; clearTimeout(timer); } };
}

function trialBadge(status) {
  return badge(status, 'trial');
}

function workerSaid(t) {
  if (!t.worker) return null;
  return ['worker ', h('code', null, revealed(t.worker)), t.worker_version ? [' ', h('span', { class: 'tl-version' }, 'version ', h('code', null, revealed(t.worker_version)))] : null];
}
// " on worker w1 version 2.4.1", or nothing when no worker is named.
const onWorker = (t) => (t.worker ? [' on ', workerSaid(t)] : null);

/** The side effects a trial reported it would have caused, or null when it reported none. */
export function wouldEffects(list, { show = revealed, id } = {}) {
  if (!Array.isArray(list) || !list.length) return null;
  return h('div', { class: 'would-effects', id },
    h('p', { class: 'label' }, 'It would have caused:'),
    h('ul', null, list.map((e) => h('li', { 'data-key': e.key }, h('code', null, show(e.key)), e.description ? [' — ', show(e.description)] : null))));
}

/** The first lines of a stack, the rest behind a disclosure. */
export function stackLines(stack, show = revealed) {
  if (!stack) return null;
  const lines = String(stack).split('\n');
  const first = h('pre', { class: 'stack trial-stack' }, show(lines.slice(0, STACK_LINES).join('\n')));
  if (lines.length <= STACK_LINES) return first;
  return [first, h('details', null, h('summary', null, `Whole stack (${lines.length} lines)`), h('pre', { class: 'stack' }, show(stack)))];
}

/** Why a trial expired, in words, with a hint when no worker took it. */
export function expiredSaid(t, jobType, show = revealed) {
  if (t.claimed_at || t.worker) {
    return ['Worker ', h('code', null, show(t.worker || '?')), ' took it, but its lease ran out before it answered (the worker may have crashed or hung).'];
  }
  const waited = t.finished_at && t.created_at ? seconds(t.created_at, Date.parse(t.finished_at)) : null;
  return [`No worker took it${waited !== null ? ` within ${waited} s` : ''}: is a worker running with trials enabled for job type `,
    h('code', null, show(jobType || '?')), '?'];
}

/** One trial as it stands: status, elapsed seconds while open, then the outcome. `compact` for a table cell. */
function trialOutcome(t, jobType, { compact = false } = {}) {
  const now = Date.now();
  if (t.status === 'gone') {
    return h('p', { class: 'problem-inline trial-gone' }, 'This trial no longer exists (its message was purged?).');
  }
  const note = t.problem ? h('p', { class: 'muted trial-read-problem' }, 'Could not read it just now; trying again each second.') : null;
  if (t.status === 'pending') {
    return [h('p', { class: 'trial-waiting' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }),
      `Waiting for a worker to take it… ${seconds(t.created_at, now)} s`), note];
  }
  if (t.status === 'running') {
    return [h('p', { class: 'trial-waiting' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }),
      'Running', onWorker(t), `… ${seconds(t.claimed_at || t.created_at, now)} s`), note];
  }
  const ms = t.claimed_at && t.finished_at ? Date.parse(t.finished_at) - Date.parse(t.claimed_at) : NaN;
  const took = ms >= 0 ? ` in ${ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`}` : '';
  if (t.status === 'succeeded') {
    return [h('p', { class: 'trial-said' }, 'It succeeded', onWorker(t), `${took}.`),
      wouldEffects(t.would_effects) || h('p', { class: 'muted' }, 'It reported no side effects it would cause.')];
  }
  if (t.status === 'failed') {
    return [h('p', { class: 'trial-said' }, 'It failed', onWorker(t), took, t.error_class ? [' as ', badge(t.error_class, 'class')] : null, ':'),
      t.error ? h('p', { class: 'err' }, revealed(compact ? String(t.error).slice(0, 300) : t.error)) : null,
      t.cause ? h('p', null, h('span', { class: 'label' }, 'Cause: '), revealed(t.cause)) : null,
      compact ? null : stackLines(t.stack),
      wouldEffects(t.would_effects)];
  }
  if (t.status === 'expired') {
    return [h('p', { class: 'trial-said' }, expiredSaid(t, jobType)), t.error && !compact ? h('p', { class: 'muted' }, 'Server said: ', revealed(t.error)) : null];
  }
  return h('p', null, 'Status ', revealed(t.status), '.');
}

// A live region that speaks a trial's status when it changes, not its ticking seconds.
function announcer(id) {
  const el = h('p', { class: 'sr-only', id, 'aria-live': 'polite' });
  let said = '';
  return { el, say: (text) => { if (text !== said) { said = text; el.textContent = text; } } };
}

/**
 * Replay one: "Try with a worker first". `request()` is what the trial sends — {reason, payload,
 * payload_is_json} as the replay would — or null when the edit was refused (said by the dialog);
 * `payloadKey()` identifies the payload as it stands, so a later edit marks the result stale.
 * Returns {box, stop, touched()}.
 */
export function trialOneBox(m, { request, payloadKey, alive }) {
  const button = h('button', { type: 'button', id: 'r-try' }, 'Try with a worker first');
  const result = h('div', { id: 'r-trial-result' });
  const stale = h('p', { class: 'warning', id: 'r-trial-stale', hidden: true },
    'The payload changed since this trial: try again to check the edit.');
  const live = announcer('r-trial-said');
  let poller = null;
  let triedKey = null;
  const show = (t, again) => {
    result.dataset.status = t.status;
    result.replaceChildren(h('div', { class: ['trial-card', `trial-${t.status}`], 'data-trial-id': t.trial_id },
      h('p', { class: 'trial-head' }, h('strong', null, `Trial run #${t.trial_id}`), ' ', trialBadge(t.status),
        t.payload_edited ? h('span', { class: 'muted' }, ' with the edited payload') : h('span', { class: 'muted' }, ' with the payload as stored')),
      again ? h('p', { class: 'muted', id: 'r-trial-again' }, 'A trial of this message was already under way (started ',
        timeEl(t.created_at, { utc: true }), t.actor ? [' by ', revealed(t.actor)] : null, '): this is that one, with its own payload.') : null,
      trialOutcome(t, m.job_type)));
    live.say(`Trial run ${t.trial_id}: ${t.status}`);
    button.disabled = isOpen(t);
    button.textContent = isOpen(t) ? 'Trial under way…' : 'Try again';
  };
  button.addEventListener('click', async () => {
    const body = request();
    if (!body) return;
    poller?.stop();
    button.disabled = true;
    result.replaceChildren(h('p', { class: 'muted' }, 'Starting a trial…'));
    stale.hidden = true;
    try {
      const { status, data } = await api('POST', `/queues/${encodeURIComponent(m.queue)}/messages/${m.id}/trials`, { body, full: true });
      if (!alive()) return;
      triedKey = payloadKey();
      const again = status === 200;
      poller = pollTrials([data], { alive, update: ([t]) => show(t, again) });
    } catch (err) {
      button.disabled = false;
      result.dataset.status = 'error';
      result.replaceChildren(problemBox(err));
    }
  });
  const box = h('section', { class: 'trial-box', id: 'r-trial', 'aria-labelledby': 'r-trial-h' },
    h('h3', { id: 'r-trial-h' }, 'Try with a worker first'),
    h('p', { class: 'muted' }, 'A worker whose handler for ', revealed(m.job_type), ' takes trials runs it once, with the payload the replay would send, ',
      'and says whether it would succeed and which side effects it would cause. Nothing of the message changes; the trial is kept in its history and the audit log.'),
    h('div', { class: 'dialog-actions trial-actions' }, button), stale, result, live.el);
  return {
    box,
    stop: () => poller?.stop(),
    // The payload or its "send as text" box changed: a result of another payload is marked stale.
    touched: () => { stale.hidden = triedKey === null || payloadKey() === triedKey; },
  };
}

/**
 * Batch replay: "Try the sample" starts a trial of each sample message with a job type
 * (POST /dlq/trials, at most 10), lists the others as not triable, and shows a row per trial.
 * `reason()` is the dialog's reason. Returns {box, stop}.
 */
export function trialSampleBox(sample, { reason, alive }) {
  const triable = (sample || []).filter((s) => s.job_type).slice(0, 10);
  const untriable = (sample || []).filter((s) => !s.job_type);
  const jobTypeOf = new Map((sample || []).map((s) => [s.id, s.job_type]));
  const button = h('button', { type: 'button', id: 'br-try', disabled: !triable.length }, 'Try the sample');
  const result = h('div', { id: 'br-trial-result' });
  const live = announcer('br-trial-said');
  let poller = null;
  const show = (trials) => {
    const open = trials.filter(isOpen).length;
    result.dataset.status = open ? 'open' : 'ended';
    const count = (s) => trials.filter((t) => t.status === s).length;
    const summary = open ? `${open} of ${trials.length} under way`
      : ['succeeded', 'failed', 'expired', 'gone'].map((s) => (count(s) ? `${count(s)} ${s}` : '')).filter(Boolean).join(', ');
    live.say(`Trials of the sample: ${summary}`);
    result.replaceChildren(
      h('p', { id: 'br-trial-summary' }, h('strong', null, `Trials of the sample: ${summary}.`)),
      h('div', { class: 'table-wrap' }, h('table', { class: 'data compact cards trials', id: 'br-trials' },
        h('caption', { class: 'sr-only' }, 'Trial runs of the sample'),
        h('thead', null, h('tr', null, ['Message', 'Job type', 'Status', 'Outcome'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', null, trials.map((t) => h('tr', { 'data-id': t.message_id, 'data-trial-id': t.trial_id, 'data-status': t.status },
          h('th', { scope: 'row', 'data-label': 'Message', class: 'c-msg' }, h('span', null, `#${t.message_id} in `, revealed(t.queue))),
          h('td', { 'data-label': 'Job type', class: 'c-job-type' }, h('span', null, revealed(jobTypeOf.get(t.message_id)))),
          h('td', { 'data-label': 'Status', class: 'c-status' }, h('span', null, trialBadge(t.status), ` #${t.trial_id}`)),
          h('td', { 'data-label': 'Outcome', class: 'c-outcome' }, h('div', null, trialOutcome(t, jobTypeOf.get(t.message_id), { compact: true })))))))));
    button.disabled = open > 0;
    button.textContent = open ? 'Trials under way…' : 'Try the sample again';
  };
  button.addEventListener('click', async () => {
    poller?.stop();
    button.disabled = true;
    result.replaceChildren(h('p', { class: 'muted' }, 'Starting trials…'));
    const body = { ids: triable.map((s) => s.id) };
    if (reason()) body.reason = reason();
    try {
      const r = await api('POST', '/dlq/trials', { body });
      if (!alive()) return;
      poller = pollTrials(r.trials, { alive, update: show });
    } catch (err) {
      button.disabled = false;
      result.dataset.status = 'error';
      result.replaceChildren(problemBox(err));
    }
  });
  const box = h('section', { class: 'trial-box', id: 'br-trial', 'aria-labelledby': 'br-trial-h' },
    h('h3', { id: 'br-trial-h' }, 'Try the sample with a worker first'),
    h('p', { class: 'muted' }, triable.length
      ? `The ${triable.length === 1 ? 'sample message with a job type goes' : `${triable.length} sample messages with a job type go`} once each to a worker whose handler takes trials; each row says whether it would succeed and which side effects it would cause. Nothing of the messages changes, and the preview stays valid.`
      : 'No message of the sample has a job type: a worker takes trials by job type, so there is nothing to try.'),
    untriable.length ? h('p', { class: 'muted', id: 'br-untriable' },
      untriable.map((s, i) => [i ? ', ' : '', `#${s.id}`]), ' — cannot be tried: no job type.') : null,
    h('div', { class: 'dialog-actions trial-actions' }, button), result, live.el);
  return { box, stop: () => poller?.stop() };
}

// Dialogs: replay and dismiss one message; batch replay and batch dismiss (preview -> confirm);
// mute an incident.
import { h, field, select, badge, truncate, timeEl, fmtTime, localToIso, revealed, prettyPayload } from './dom.js';
import { api, ApiError } from './api.js';
import { problemBox, navigate, showOk } from './app.js';
import { trialOneBox, trialSampleBox } from './trials.js';

export const ERROR_CLASSES = ['transient', 'throttled', 'timeout', 'not_found', 'invalid_input', 'auth', 'unknown', 'uncertain_effect'];
export const DEAD_REASONS = ['retries_exhausted', 'non_retryable', 'retry_window_exceeded', 'lease_expired', 'max_receive_count'];

/** A modal <dialog>: Escape and the Cancel button close it; focus returns where it was. */
function openDialog(id, title) {
  const opener = document.activeElement;
  document.getElementById(id)?.remove();
  const body = h('div', { class: 'dialog-body' });
  const dlg = h('dialog', { id, class: 'dialog', 'aria-labelledby': `${id}-title` },
    h('div', { class: 'dialog-head' }, h('h2', { id: `${id}-title` }, title),
      h('button', { type: 'button', class: 'close', 'aria-label': 'Close', onclick: () => dlg.close() }, '×')),
    body);
  dlg.addEventListener('close', () => {
    dlg.remove();
    if (opener && opener.isConnected) opener.focus();
  });
  document.body.append(dlg);
  dlg.showModal();
  return { dlg, body };
}

function jobTypesTable(byJobType) {
  const rows = Object.entries(byJobType || {}).sort((a, b) => b[1] - a[1]);
  return h('table', { class: 'data compact by-job-type' },
    h('caption', null, 'Matched per job type'),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Job type'), h('th', { scope: 'col', class: 'num' }, 'Messages'))),
    h('tbody', null, rows.map(([jt, n]) => h('tr', { 'data-job-type': jt }, h('td', null, revealed(jt)), h('td', { class: 'num' }, String(n))))));
}

function sampleTable(sample) {
  if (!sample || !sample.length) return null;
  return h('details', { class: 'sample' }, h('summary', null, `Sample (${sample.length})`),
    h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
      h('thead', null, h('tr', null, ['Id', 'Queue', 'Job type', 'Error class', 'Last error'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, sample.map((m) => h('tr', null, h('td', null, `#${m.id}`), h('td', null, revealed(m.queue)), h('td', null, revealed(m.job_type) || '(none)'),
        h('td', null, badge(m.error_class, 'class')), h('td', { class: 'err' }, revealed(truncate(m.last_error, 60)))))))));
}

function actionRow(...buttons) { return h('div', { class: 'dialog-actions' }, buttons); }

// The uncertain ids the warning links (the preview gives the first 100).
const UNCERTAIN_SHOWN = 10;

/**
 * The preview's `uncertain_effects` in words: matched messages holding a started effect, which a
 * batch cannot resolve. Each id links its message page where its queue is known (the filter's
 * queue, the caller's `queueOf`, the sample); the others are listed as ids.
 */
function uncertainWarning(pv, { id, kind, filter, queueOf, dlg }) {
  const u = pv.uncertain_effects;
  if (!u || !u.count) return null;
  const n = u.count;
  const one = n === 1;
  const queueFor = (mid) => (typeof filter.queue === 'string' && filter.queue) || queueOf?.(mid)
    || (pv.sample || []).find((s) => s.id === mid)?.queue || '';
  const shown = (u.ids || []).slice(0, UNCERTAIN_SHOWN);
  let unlinked = 0;
  const ids = shown.map((mid, i) => {
    const q = queueFor(mid);
    if (!q) unlinked += 1;
    return [i ? ', ' : '', q
      ? h('a', { href: `#/m/${encodeURIComponent(q)}/${mid}`, class: 'uncertain-link', 'data-id': mid, onclick: () => dlg.close() }, `#${mid}`)
      : h('span', { 'data-id': mid }, `#${mid}`)];
  });
  const more = n - shown.length;
  const what = kind === 'replay'
    ? [`: ${one ? 'its worker' : 'their workers'} will fail ${one ? 'it' : 'them'} as uncertain_effect unless a handler checks. `,
      `Replay ${one ? 'it on its own' : 'them one by one'} to resolve it`]
    : [`. Dismissing leaves ${one ? 'it' : 'them'} unresolved: find out outside dlq whether ${one ? 'it' : 'each'} happened. `,
      `To resolve it, replay ${one ? 'it on its own' : 'them one by one'} instead`];
  return h('div', { class: 'warning', id, role: 'note' },
    h('strong', null, 'Uncertain side effects: '),
    `${n} of the matched messages ${one ? 'has' : 'have'} a side effect that may have happened (a started effect)`, what,
    `: ${one ? 'id' : 'ids'} `, ids, more > 0 ? ` and ${more} more` : '', '.',
    unlinked ? ` (${unlinked === 1 ? 'The id without a link is' : 'Ids without a link are'} in a queue this page does not know: find ${unlinked === 1 ? 'it' : 'them'} in the dead-letter list.)` : '');
}

// Names from the server in a sentence: each isolated and revealed, separated by commas.
function listed(names) {
  return names.map((name, i) => [i ? ', ' : '', revealed(name)]);
}

function listJobTypes(byJobType) {
  return listed(Object.entries(byJobType || {}).map(([jt, n]) => `${jt} (${n})`));
}

// The first step both batch dialogs share: POST /dlq/replay or /dlq/dismiss with dry_run. Returns the
// preview, or null when there is nothing to confirm (the dialog then says why and offers Close).
async function previewStep(kind, filter, dlg, body) {
  const close = () => actionRow(h('button', { type: 'button', onclick: () => dlg.close() }, 'Close'));
  let pv;
  try {
    pv = await api('POST', `/dlq/${kind}`, { body: { filter, dry_run: true } });
  } catch (err) {
    body.replaceChildren(problemBox(err), close());
    return null;
  }
  if (!dlg.open) return null;
  if (pv.matched === 0) {
    body.replaceChildren(h('p', { id: 'preview-matched' }, `Nothing to ${kind}: no dead letter matches.`), close());
    return null;
  }
  return pv;
}

/** Batch replay: preview, then a confirmation naming the job types, then the run's page. */
export function batchReplayDialog({ filter, describe, title, queueOf }) {
  const { dlg, body } = openDialog('batch-replay-dialog', title || 'Replay dead letters');
  const preview = async () => {
    body.replaceChildren(h('p', null, 'Replaying ', revealed(describe), '.'), h('p', { class: 'muted', 'aria-live': 'polite' }, 'Previewing…'));
    const pv = await previewStep('replay', filter, dlg, body);
    if (!pv) return;
    const needs = pv.needs_acknowledgement || [];
    const reason = h('input', { name: 'reason', id: 'br-reason', autocomplete: 'off', placeholder: 'e.g. upstream fixed in release 4.2' });
    const delay = h('input', { type: 'number', name: 'delay_seconds', id: 'br-delay', min: '0', step: '1', value: '60', inputmode: 'numeric' });
    const rate = h('input', { type: 'number', name: 'rate_per_second', id: 'br-rate', min: '0.1', max: '1000', step: '0.1', placeholder: 'server default' });
    const keepOrder = h('input', { type: 'checkbox', name: 'keep_order', id: 'br-keep-order' });
    const ack = needs.length ? h('input', { type: 'checkbox', name: 'acknowledge_side_effects', id: 'br-ack', required: true }) : null;
    const err = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
    const submit = h('button', { type: 'submit', class: 'primary danger', id: 'br-confirm' }, `Replay ${pv.matched} message${pv.matched === 1 ? '' : 's'}`);
    // "Try the sample": trials of the sample's messages, before the confirmation; the preview stays as it is.
    const trials = trialSampleBox(pv.sample, { reason: () => reason.value.trim(), alive: () => dlg.open && trials.box.isConnected });
    dlg.addEventListener('close', trials.stop);
    const form = h('form', { class: 'dialog-form', id: 'batch-replay-form', novalidate: true },
      h('p', { id: 'preview-matched', class: 'big' }, h('strong', null, String(pv.matched)), ` dead letter${pv.matched === 1 ? '' : 's'} match: `, revealed(describe), '.'),
      jobTypesTable(pv.by_job_type),
      sampleTable(pv.sample),
      h('div', { class: 'warning', id: 'br-warning', role: 'note' },
        h('strong', null, 'Side effects: '),
        'this runs these jobs again — job types ', listJobTypes(pv.by_job_type),
        '. Whatever they do outside dlq (send email, charge a card, call a webhook) will happen again for each message.'),
      uncertainWarning(pv, { id: 'br-uncertain', kind: 'replay', filter, queueOf, dlg }),
      ack ? h('div', { class: 'ack' }, ack, h('label', { for: 'br-ack', id: 'br-ack-label' },
        'I understand that ', listed(needs), ` ${needs.length === 1 ? 'is' : 'are'} not idempotent: replaying can repeat ${needs.length === 1 ? 'its' : 'their'} side effects (for example charge or email twice).`)) : null,
      field('Reason (recorded in the audit log)', reason),
      h('div', { class: 'row' },
        field('Start after (seconds)', delay, '0 starts at once'),
        field('Rate (messages per second)', rate, '0.1 – 1000; capped per job type by the server')),
      h('div', { class: 'check' }, keepOrder, h('label', { for: 'br-keep-order' }, 'Keep the original order (oldest dead first)')),
      h('p', { class: 'muted' }, 'Preview valid until ', timeEl(pv.expires_at, { utc: true }), '.'),
      pv.sample && pv.sample.length ? trials.box : null,
      err,
      actionRow(submit, h('button', { type: 'button', id: 'br-cancel', onclick: () => dlg.close() }, 'Cancel')));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      err.replaceChildren();
      if (ack && !ack.checked) {
        err.replaceChildren(h('p', { class: 'problem-inline', id: 'br-ack-missing' }, 'Tick the acknowledgement for ', listed(needs), ' first.'));
        ack.focus();
        return;
      }
      const req = { filter, confirm_token: pv.confirm_token, delay_seconds: Number(delay.value || 0) };
      if (rate.value) req.rate_per_second = Number(rate.value);
      if (keepOrder.checked) req.keep_order = true;
      if (ack) req.acknowledge_side_effects = true;
      if (reason.value.trim()) req.reason = reason.value.trim();
      submit.disabled = true;
      try {
        const run = await api('POST', '/dlq/replay', { body: req });
        dlg.close();
        navigate(`/replays/${run.replay_id}`);
      } catch (e) {
        submit.disabled = false;
        const again = e instanceof ApiError && e.slug === 'preview-stale'
          ? h('button', { type: 'button', id: 'br-repreview', onclick: () => { trials.stop(); preview(); } }, 'Preview again') : null;
        err.replaceChildren(problemBox(e, again));
      }
    });
    body.replaceChildren(form);
    (ack || reason).focus();
  };
  preview();
}

/** Batch dismiss: preview, reason, confirm. */
export function batchDismissDialog({ filter, describe, onDone, title, queueOf }) {
  const { dlg, body } = openDialog('batch-dismiss-dialog', title || 'Dismiss dead letters');
  const preview = async () => {
    body.replaceChildren(h('p', { class: 'muted', 'aria-live': 'polite' }, 'Previewing…'));
    const pv = await previewStep('dismiss', filter, dlg, body);
    if (!pv) return;
    const reason = h('input', { name: 'reason', id: 'bd-reason', required: true, autocomplete: 'off', placeholder: 'e.g. customer deleted; will not fix' });
    const err = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
    const submit = h('button', { type: 'submit', class: 'primary danger', id: 'bd-confirm' }, `Dismiss ${pv.matched} message${pv.matched === 1 ? '' : 's'}`);
    const form = h('form', { class: 'dialog-form', id: 'batch-dismiss-form', novalidate: true },
      h('p', { id: 'preview-matched', class: 'big' }, h('strong', null, String(pv.matched)), ` dead letter${pv.matched === 1 ? '' : 's'} match: `, revealed(describe), '.'),
      jobTypesTable(pv.by_job_type), sampleTable(pv.sample),
      h('p', { class: 'warning' }, 'Dismissed messages are marked "won\'t fix": they leave the dead-letter list and are not run again (a dismissed message can still be replayed with force).'),
      uncertainWarning(pv, { id: 'bd-uncertain', kind: 'dismiss', filter, queueOf, dlg }),
      field('Reason (required, recorded with each message and in the audit log)', reason),
      err, actionRow(submit, h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel')));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!reason.value.trim()) { err.replaceChildren(h('p', { class: 'problem-inline' }, 'Give a reason.')); reason.focus(); return; }
      submit.disabled = true;
      try {
        const r = await api('POST', '/dlq/dismiss', { body: { filter, reason: reason.value.trim(), confirm_token: pv.confirm_token } });
        dlg.close();
        showOk(`Dismissed ${r.dismissed} message${r.dismissed === 1 ? '' : 's'}${r.skipped ? ` (${r.skipped} skipped: no longer dead)` : ''}.`);
        onDone?.();
      } catch (e) {
        submit.disabled = false;
        const again = e instanceof ApiError && e.slug === 'preview-stale'
          ? h('button', { type: 'button', onclick: preview }, 'Preview again') : null;
        err.replaceChildren(problemBox(e, again));
      }
    });
    body.replaceChildren(form);
    reason.focus();
  };
  preview();
}

/** Where JSON.parse gave up in text, as {line, column} (1-based), or null when it did not say. */
function jsonErrorAt(text, err) {
  const m = /position (\d+)/.exec(String(err && err.message));
  if (!m) return null;
  const before = text.slice(0, Number(m[1]));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1, offset: Number(m[1]) };
}

// The server checks an edit as JSON when the stored payload is JSON, or the edit starts with { or [
// (api-decisions: replay edits); the dialog checks the same before sending.
function checkedAsJson(stored, edited) {
  if (/^\s*[[{]/.test(edited)) return true;
  try { const v = JSON.parse(stored); return v !== null && typeof v === 'object'; } catch { return false; }
}

const RESOLVE = [
  ['leave', 'Leave as is'],
  ['done', 'It happened: mark done'],
  ['forget', 'It did not happen: run it again'],
];

// What the replay does with each effect, as the choices stand.
function resolveSaid(key, how) {
  if (how === 'done') return [revealed(key), ': marked done (by you) — the worker skips it.'];
  if (how === 'forget') return [revealed(key), ': forgotten — the worker runs it again.'];
  return [revealed(key), ': stays started — the worker fails the message as uncertain_effect (not retried) unless its handler checks whether it happened.'];
}

/**
 * The uncertain (started) effects of a dead or dismissed message, each with a choice: leave it
 * (nothing sent), mark it done, or forget it (resolve_effects). `chosen()` is what to send ({} for
 * none), `said()` the decisions in words, `showProblem(err)` a 422's resolve_effects.* fields
 * under the list.
 */
function effectChoices(effects) {
  const uncertain = effects.filter((e) => e.state === 'started');
  const doneKeys = effects.filter((e) => e.state === 'done').map((e) => e.key);
  if (!uncertain.length) {
    return { box: doneKeys.length ? h('p', { class: 'muted', id: 'r-effects-done' }, 'Side effects recorded done (', listed(doneKeys), ') stay done: the worker skips them.') : null,
      chosen: () => ({}), said: () => [], showProblem: () => {}, clear: () => {} };
  }
  const groups = uncertain.map((e, i) => {
    const name = `r-eff-${i}`;
    const radios = RESOLVE.map(([v, label]) => {
      const input = h('input', { type: 'radio', name, id: `${name}-${v}`, value: v, 'data-key': e.key, checked: v === 'leave' });
      return h('div', { class: 'check' }, input, h('label', { for: input.id }, label));
    });
    return h('fieldset', { class: 'effect-choice', 'data-key': e.key },
      h('legend', null, h('code', null, revealed(e.key))),
      h('p', { class: 'effect-what' }, e.description ? [revealed(e.description), ' — '] : null,
        `started in attempt ${e.attempt}, `, timeEl(e.recorded_at, { utc: true }), ', never recorded done.'),
      radios);
  });
  const choice = (i) => groups[i].querySelector('input:checked')?.value || 'leave';
  const saidList = h('ul', { class: 'effects-said', id: 'r-effects-said', 'aria-live': 'polite' });
  const problem = h('div', { id: 'r-effects-error', 'aria-live': 'assertive' });
  const update = () => saidList.replaceChildren(...uncertain.map((e, i) => h('li', { 'data-key': e.key }, resolveSaid(e.key, choice(i)))));
  const box = h('fieldset', { class: 'choices effects', id: 'r-effects' },
    h('legend', null, `Side effects that may have happened (${uncertain.length})`),
    h('p', { class: 'muted' }, `${uncertain.length === 1 ? 'This was' : 'These were'} started and never recorded done: find out outside dlq whether ${uncertain.length === 1 ? 'it' : 'each'} happened, then say so here.`,
      doneKeys.length ? [' Effects recorded done (', listed(doneKeys), ') stay done: the worker skips them.'] : null),
    groups,
    h('p', { class: 'label' }, 'What the replay does with them:'), saidList, problem);
  box.addEventListener('change', () => { update(); problem.replaceChildren(); });
  update();
  return {
    box,
    chosen: () => Object.fromEntries(uncertain.map((e, i) => [e.key, choice(i)]).filter(([, v]) => v !== 'leave')),
    // Counts, not keys: the notice is plain text, and a key may hold bidi controls.
    said: () => {
      const n = (how) => uncertain.filter((e, i) => choice(i) === how).length;
      const effect = (k) => `${k} side effect${k === 1 ? '' : 's'}`;
      return [n('done') ? `${effect(n('done'))} marked done` : '', n('forget') ? `${effect(n('forget'))} forgotten (run again)` : ''].filter(Boolean);
    },
    clear: () => problem.replaceChildren(),
    // The server names each refused key: resolve_effects.<key> (or resolve_effects itself).
    showProblem: (err) => {
      const fields = (err instanceof ApiError && err.status === 422 ? err.problem?.errors || [] : [])
        .filter((f) => typeof f.field === 'string' && /^resolve_effects(\.|$)/.test(f.field));
      if (!fields.length) return;
      problem.replaceChildren(h('ul', { class: 'problem-inline', id: 'r-effects-invalid' }, fields.map((f) => h('li', null,
        f.field === 'resolve_effects' ? '' : [revealed(f.field.slice('resolve_effects.'.length)), ': '], revealed(f.message || f.code)))));
    },
  };
}

/** Replay one message: reason, the uncertain effects' decisions, optional edited payload (masks kept), schedule, force. */
export function replayOneDialog(m, onDone, effects = []) {
  const { dlg, body } = openDialog('replay-dialog', `Replay message #${m.id}`);
  const reason = h('input', { name: 'reason', id: 'r-reason', autocomplete: 'off' });
  const fx = effectChoices(effects);
  const edit = h('input', { type: 'checkbox', id: 'r-edit' });
  const shown = prettyPayload(m.payload);
  const rows = Math.min(24, Math.max(10, shown.split('\n').length + 1));
  const payload = h('textarea', { id: 'r-payload', name: 'payload', rows: String(rows), spellcheck: 'false', disabled: true });
  payload.value = shown;
  const asText = h('input', { type: 'checkbox', id: 'r-not-json' });
  const asTextWarning = h('p', { class: 'warning', id: 'r-not-json-warning', hidden: true },
    'Sent as text, as typed. If it starts with { or [ but is not JSON, the views for people cannot mask it field by field and may show it as ***withheld***; the worker gets it as typed.');
  const payloadError = h('div', { id: 'r-payload-error', 'aria-live': 'assertive' });
  const editBox = h('div', { class: 'edit-box', hidden: true },
    field('Payload', payload, 'Values shown as "***" are secrets: leave them as "***" and the stored value is kept.'), payloadError,
    h('div', { class: 'check' }, asText, h('label', { for: 'r-not-json' }, 'Send as text, not JSON')), asTextWarning);
  asText.addEventListener('change', () => { asTextWarning.hidden = !asText.checked; payloadError.replaceChildren(); });
  payload.addEventListener('input', () => payloadError.replaceChildren());
  edit.addEventListener('change', () => { editBox.hidden = !edit.checked; payload.disabled = !edit.checked; if (edit.checked) payload.focus(); });
  const when = select('when', [['now', 'Now'], ['delay', 'After a delay'], ['at', 'At a time']], 'now', { id: 'r-when' });
  const delay = h('input', { type: 'number', id: 'r-delay', min: '0', step: '1', value: '60' });
  const at = h('input', { type: 'datetime-local', id: 'r-at' });
  const delayF = field('Delay (seconds)', delay); const atF = field('Run at (local time)', at);
  delayF.hidden = true; atF.hidden = true;
  when.addEventListener('change', () => { delayF.hidden = when.value !== 'delay'; atF.hidden = when.value !== 'at'; });
  const force = h('input', { type: 'checkbox', id: 'r-force', checked: m.status === 'dismissed' });
  const err = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'r-confirm' }, 'Replay');
  // The payload members as the replay sends them ({} when not edited); null, the problem said under
  // the box, when the edit is refused here. The trial sends the same.
  const readEdit = () => {
    payloadError.replaceChildren();
    if (!edit.checked || payload.value === shown) return {};
    if (asText.checked) return { payload: payload.value, payload_is_json: false };
    if (checkedAsJson(m.payload, payload.value)) {
      try {
        JSON.parse(payload.value);
      } catch (e) {
        // Refused here, the text kept: the operator fixes it, or sends it as text.
        const at = jsonErrorAt(payload.value, e);
        payloadError.replaceChildren(h('p', { class: 'problem-inline', id: 'r-payload-invalid' },
          `The payload is not valid JSON${at ? ` at line ${at.line}, column ${at.column}` : ''}: ${e.message}. Fix it, or tick "Send as text, not JSON".`));
        payload.focus();
        if (at) payload.setSelectionRange(at.offset, at.offset);
        return null;
      }
    }
    return { payload: payload.value };
  };
  // A trial first (a dead message with a job type: workers claim trials by type).
  let trial = null;
  if (m.status === 'dead' && m.job_type) {
    trial = trialOneBox(m, {
      request: () => {
        const e = readEdit();
        if (!e) return null;
        return { ...(reason.value.trim() ? { reason: reason.value.trim() } : {}), ...e };
      },
      payloadKey: () => JSON.stringify([edit.checked && payload.value !== shown ? payload.value : null, asText.checked]),
      alive: () => dlg.open && dlg.isConnected,
    });
    dlg.addEventListener('close', trial.stop);
    for (const el of [edit, payload, asText]) el.addEventListener(el === payload ? 'input' : 'change', trial.touched);
  } else if (m.status === 'dead') {
    trial = { box: h('p', { class: 'muted', id: 'r-trial-none' }, 'No job type: it cannot be tried with a worker first (workers take trials by job type).') };
  }
  const form = h('form', { class: 'dialog-form', id: 'replay-form', novalidate: true },
    h('p', null, `The message goes back to `, h('strong', null, 'pending'), ' in queue ', revealed(m.queue),
      ' with a fresh retry budget; a worker will run job ', revealed(m.job_type) || '(no job type)', ' again.'),
    field('Reason (recorded in the history and the audit log)', reason),
    fx.box,
    h('div', { class: 'check' }, edit, h('label', { for: 'r-edit' }, 'Edit the payload before replaying')), editBox,
    field('When', when), delayF, atF,
    h('div', { class: 'check' }, force, h('label', { for: 'r-force' },
      m.status === 'dismissed' ? 'Force (needed: this message was dismissed)' : 'Force, even if a message with the same idempotency key already succeeded')),
    trial?.box, err, actionRow(submit, h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const req = {};
    if (reason.value.trim()) req.reason = reason.value.trim();
    const edited = readEdit();
    if (!edited) return;
    Object.assign(req, edited);
    if (when.value === 'delay') req.delay_seconds = Number(delay.value || 0);
    if (when.value === 'at') {
      const iso = localToIso(at.value);
      if (!iso) { err.replaceChildren(h('p', { class: 'problem-inline' }, 'Pick a time.')); at.focus(); return; }
      req.run_at = iso;
    }
    if (force.checked) req.force = true;
    const resolve = fx.chosen();
    if (Object.keys(resolve).length) req.resolve_effects = resolve;
    const decided = fx.said();
    fx.clear();
    await sendAction({ dlg, submit, err, onDone, path: messageAction(m, 'replay'), body: req, onProblem: fx.showProblem,
      said: (r) => `Message #${r.id} replayed: it is ${r.status} now${r.retry_after ? `, due ${r.retry_after}` : ''}${decided.length ? `; ${decided.join(', ')}` : ''}.` });
  });
  body.replaceChildren(form);
  reason.focus();
}

function messageAction(m, action) {
  return `/queues/${encodeURIComponent(m.queue)}/messages/${m.id}/${action}`;
}

// Sends one message's action from its dialog: on success the dialog closes and the notice says
// what happened; on a problem it stays open with the problem explained, to try again.
async function sendAction({ dlg, submit, err, onDone, path, body, said, onProblem }) {
  submit.disabled = true;
  try {
    const r = await api('POST', path, { body });
    dlg.close();
    showOk(said(r));
    onDone?.();
  } catch (e) {
    submit.disabled = false;
    err.replaceChildren(problemBox(e));
    onProblem?.(e);
  }
}

/** Dismiss one message with a reason. */
export function dismissOneDialog(m, onDone) {
  const { dlg, body } = openDialog('dismiss-dialog', `Dismiss message #${m.id}`);
  const reason = h('input', { name: 'reason', id: 'd-reason', required: true, autocomplete: 'off' });
  const err = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary danger', id: 'd-confirm' }, 'Dismiss');
  const form = h('form', { class: 'dialog-form', id: 'dismiss-form', novalidate: true },
    h('p', null, 'The message is marked "won\'t fix": it leaves the dead-letter list and is not run again.'),
    field('Reason (required)', reason), err,
    actionRow(submit, h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!reason.value.trim()) { err.replaceChildren(h('p', { class: 'problem-inline' }, 'Give a reason.')); reason.focus(); return; }
    await sendAction({ dlg, submit, err, onDone, path: messageAction(m, 'dismiss'),
      body: { reason: reason.value.trim() }, said: (r) => `Message #${r.id} dismissed.` });
  });
  body.replaceChildren(form);
  reason.focus();
}

// The server takes a mute reason of up to 1,024 bytes of UTF-8.
const MUTE_REASON_BYTES = 1024;
const MUTE_FOR = [['1', 'For 1 hour'], ['4', 'For 4 hours'], ['24', 'For 24 hours'], ['at', 'Until a time']];

/** Mute an incident's alerts (incident_opened, incident_grew) for 1, 4 or 24 hours or until a time. */
export function muteDialog(incident, onDone) {
  const { dlg, body } = openDialog('mute-dialog', 'Mute this incident');
  const radios = MUTE_FOR.map(([v, label], i) => {
    const input = h('input', { type: 'radio', name: 'mute-for', id: `mute-for-${v}`, value: v, checked: i === 0 });
    return h('div', { class: 'check' }, input, h('label', { for: input.id }, label));
  });
  const at = h('input', { type: 'datetime-local', id: 'mute-at', name: 'until' });
  const atF = field('Muted until (local time)', at);
  atF.hidden = true;
  const chosen = () => body.querySelector('input[name="mute-for"]:checked').value;
  const reason = h('input', { name: 'reason', id: 'mute-reason', autocomplete: 'off', placeholder: 'e.g. known outage at the relay, fix due tonight' });
  const err = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'mute-confirm' }, 'Mute');
  const form = h('form', { class: 'dialog-form', id: 'mute-form', novalidate: true },
    h('p', null, 'While muted, dlqd sends no incident alert for ', revealed(incident.title),
      ' (incident_opened, or incident_grew as its dead count passes 10, 100, …), and what it reaches meanwhile is not told when the mute ends. ',
      'The queues\' own alerts still go out; its dead letters are kept, counted and listed as before.'),
    h('fieldset', { class: 'choices' }, h('legend', null, 'How long'), radios), atF,
    field('Reason (optional, recorded in the audit log)', reason),
    err, actionRow(submit, h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel')));
  form.addEventListener('change', () => { atF.hidden = chosen() !== 'at'; err.replaceChildren(); });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.replaceChildren();
    let until;
    if (chosen() === 'at') {
      until = localToIso(at.value);
      if (!until || new Date(until) <= new Date()) {
        err.replaceChildren(h('p', { class: 'problem-inline' }, 'Pick a time in the future.')); at.focus(); return;
      }
    } else {
      until = new Date(Date.now() + Number(chosen()) * 3600 * 1000).toISOString();
    }
    const req = { until };
    if (reason.value.trim()) req.reason = reason.value.trim();
    if (new TextEncoder().encode(req.reason || '').length > MUTE_REASON_BYTES) {
      err.replaceChildren(h('p', { class: 'problem-inline' }, `Shorten the reason to ${MUTE_REASON_BYTES.toLocaleString('en')} bytes or fewer.`)); reason.focus(); return;
    }
    await sendAction({ dlg, submit, err, onDone, path: incidentMutePath(incident), body: req,
      said: (r) => `Incident muted until ${fmtTime(r.muted_until)}.` });
  });
  body.replaceChildren(form);
  body.querySelector('input[name="mute-for"]').focus();
}

/** Un-mute: an `until` in the past ends the mute at once. */
export function unmuteDialog(incident, onDone) {
  const { dlg, body } = openDialog('unmute-dialog', 'Un-mute this incident');
  const err = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'unmute-confirm' }, 'Un-mute');
  const form = h('form', { class: 'dialog-form', id: 'unmute-form', novalidate: true },
    h('p', null, 'Muted until ', timeEl(incident.muted_until, { utc: true }), incident.mute_reason ? ['. Reason: ', revealed(incident.mute_reason)] : null, '.'),
    h('p', null, 'Un-muting lets dlqd send this incident\'s alerts again from now on.'),
    err, actionRow(submit, h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    // The epoch is in the past whatever this browser's clock says.
    await sendAction({ dlg, submit, err, onDone, path: incidentMutePath(incident), body: { until: new Date(0).toISOString() },
      said: () => 'Incident un-muted: its alerts are sent again.' });
  });
  body.replaceChildren(form);
  submit.focus();
}

function incidentMutePath(incident) {
  return `/dlq/incidents/${encodeURIComponent(incident.fingerprint)}/mute`;
}

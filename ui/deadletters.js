// The dead-letter list: filters, keyset paging, multi-select feeding batch replay and dismiss.
import { h, append, field, select, timeEl, badge, truncate, timeField, readTimes, bdi } from './dom.js';
import { api } from './api.js';
import { setTitle, navigate, adminOnly } from './app.js';
import { batchReplayDialog, batchDismissDialog, ERROR_CLASSES, DEAD_REASONS } from './dialogs.js';

const FILTER_KEYS = ['queue', 'job_type', 'error_class', 'dead_reason', 'since', 'until'];
// Selected messages survive paging, and are forgotten when the filters change.
const selection = new Map();
let selectionKey = '';

export async function renderDeadLetters(main, ctx) {
  setTitle('Dead letters');
  const p = ctx.params;
  const filter = {};
  for (const k of FILTER_KEYS) if (p.get(k)) filter[k] = p.get(k);
  const limit = p.get('limit') || '20';
  const after = p.get('after') || '';
  const key = JSON.stringify(filter);
  if (key !== selectionKey) { selection.clear(); selectionKey = key; }

  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Dead letters')));
  const { form, typed } = filterForm(filter, limit);
  main.append(form);
  const bar = h('div', { class: 'actions-bar', id: 'selection-bar', role: 'region', 'aria-label': 'Batch actions' });
  const listBox = h('div', { id: 'dlq-list' }, h('p', { class: 'muted loading' }, 'Loading…'));
  main.append(bar, listBox);

  const queuesPromise = api('GET', '/queues').catch(() => null);
  const statsPromise = filter.queue ? api('GET', `/queues/${encodeURIComponent(filter.queue)}/stats`).catch(() => null) : null;
  const page = await api('GET', '/dlq', { query: { ...filter, limit, after_id: after } });
  const stats = await statsPromise;
  if (!ctx.isCurrent()) return;
  if (stats && Object.keys(filter).length === 1) {
    // Queue is the only filter: the list is the queue's dead letters, and its stats count them all.
    bar.before(h('p', { id: 'dlq-total', class: 'big' }, h('strong', null, String(stats.dead)), ' dead in ', bdi(filter.queue), ' · ',
      h('a', { href: `#/q/${encodeURIComponent(filter.queue)}` }, 'its other messages')));
  }
  const rerenderBar = () => renderBar(bar, filter, page, typed);
  const empty = page.messages.length || after || !stats ? undefined : unusedQueueText(filter.queue, stats);
  listBox.replaceChildren(deadLetterTable(page.messages, { onSelect: rerenderBar, empty }), deadLetterPager('/dlq', p, page));
  rerenderBar();
  const queues = await queuesPromise;
  if (queues && ctx.isCurrent()) {
    const list = document.getElementById('queue-options');
    if (list) list.replaceChildren(...queues.queues.map((q) => h('option', { value: q.queue })));
  }
}

function filterForm(filter, limit) {
  const qIn = h('input', { name: 'queue', value: filter.queue || '', list: 'queue-options', autocomplete: 'off', spellcheck: 'false', id: 'f-queue' });
  const jtIn = h('input', { name: 'job_type', value: filter.job_type || '', autocomplete: 'off', spellcheck: 'false', id: 'f-job-type' });
  const ecSel = select('error_class', [['', 'Any'], ...ERROR_CLASSES.map((c) => [c, c])], filter.error_class, { id: 'f-error-class' });
  const drSel = select('dead_reason', [['', 'Any'], ...DEAD_REASONS.map((c) => [c, c])], filter.dead_reason, { id: 'f-dead-reason' });
  const since = timeField('Dead since', 'since', 'f-since', filter.since);
  const until = timeField('Dead until', 'until', 'f-until', filter.until);
  const lim = select('limit', [['20', '20'], ['50', '50'], ['100', '100']], limit, { id: 'f-limit' });
  const form = h('form', { class: 'filters', id: 'dlq-filters', role: 'search', 'aria-label': 'Filter dead letters' },
    field('Queue', qIn), h('datalist', { id: 'queue-options' }),
    field('Job type', jtIn), field('Error class', ecSel), field('Dead reason', drSel),
    since.field, until.field, field('Per page', lim),
    h('div', { class: 'field buttons' },
      h('button', { type: 'submit', class: 'primary', id: 'f-apply' }, 'Apply filters'),
      h('button', { type: 'button', id: 'f-reset', onclick: () => navigate('/dlq', {}) }, 'Reset')));
  // null when a time is not one: its error is shown and nothing is sent.
  const params = () => {
    const times = readTimes([since.input, until.input]);
    if (!times) return null;
    return { queue: qIn.value.trim(), job_type: jtIn.value.trim(), error_class: ecSel.value, dead_reason: drSel.value,
      since: times[0], until: times[1], limit: lim.value === '20' ? '' : lim.value };
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const wanted = params();
    if (wanted) navigate('/dlq', wanted);
  });
  // What the form says now, applied first when it differs from the list shown: "all matching"
  // must act on what the operator sees typed, not on the last filter applied.
  const typed = () => {
    const now = params();
    if (!now) return null;
    const wanted = {};
    for (const k of FILTER_KEYS) if (now[k]) wanted[k] = now[k];
    if (JSON.stringify(wanted) !== JSON.stringify(filter)) navigate('/dlq', now);
    return wanted;
  };
  return { form, typed };
}

// The sentence for an empty list of a queue that never held a message: every valid name is a
// queue to the server, so a typo ("emial") would otherwise read as "nothing is dead".
function unusedQueueText(queue, stats) {
  const counts = ['ready', 'scheduled', 'processing', 'succeeded', 'dead', 'dismissed'].map((k) => stats[k]);
  if (counts.some((n) => n !== 0)) return undefined;
  return ['No message has ever been in queue "', bdi(queue), '" (or every one was purged): check the name.'];
}

/** The dead letters as rows; with onSelect, a checkbox per row and one for the page feed `selection`. */
export function deadLetterTable(messages, { onSelect, empty } = {}) {
  if (empty === undefined) empty = 'No dead letters match these filters.';
  if (!messages.length) return h('p', { class: 'empty', id: 'dlq-empty' }, empty);
  // Select-all sits above the table, not in its head: cards at phone width hide the head.
  const all = onSelect ? h('input', { type: 'checkbox', id: 'select-page' }) : null;
  const boxes = [];
  const syncAll = () => {
    if (!all) return;
    const n = boxes.filter((b) => b.checked).length;
    all.checked = n === boxes.length; all.indeterminate = n > 0 && n < boxes.length;
  };
  all?.addEventListener('change', () => {
    const want = all.checked;
    for (const b of boxes) { if (b.checked !== want) { b.checked = want; b.dispatchEvent(new Event('change')); } }
  });
  const selectCell = (m) => {
    const box = h('input', { type: 'checkbox', class: 'row-select', 'data-id': m.id, 'aria-label': `Select message ${m.id}`, checked: selection.has(m.id) });
    box.addEventListener('change', () => {
      if (box.checked) selection.set(m.id, m); else selection.delete(m.id);
      box.closest('tr').classList.toggle('selected', box.checked);
      syncAll(); onSelect();
    });
    boxes.push(box);
    return h('td', { class: 'sel', 'data-label': 'Select' }, box);
  };
  const rows = messages.map((m) => h('tr', { 'data-id': m.id, class: onSelect && selection.has(m.id) ? 'selected' : null },
    onSelect ? selectCell(m) : null,
    h('td', { 'data-label': 'Id' }, h('a', { href: `#/m/${encodeURIComponent(m.queue)}/${m.id}`, class: 'msg-link' }, `#${m.id}`)),
    h('td', { 'data-label': 'Queue' }, m.queue),
    h('td', { 'data-label': 'Job type', class: 'c-job-type' }, bdi(m.job_type) || h('span', { class: 'muted' }, '(none)')),
    h('td', { 'data-label': 'Error class', class: 'c-error-class' }, badge(m.error_class, 'class')),
    h('td', { 'data-label': 'Dead reason', class: 'c-dead-reason' }, badge(m.dead_reason, 'reason')),
    h('td', { 'data-label': 'Attempts', class: 'num' }, String(m.attempts)),
    h('td', { 'data-label': 'Dead at' }, timeEl(m.dead_at)),
    h('td', { 'data-label': 'Last error', class: 'err', title: m.last_error || '' }, truncate(m.last_error, 80))));
  syncAll();
  const table = h('div', { class: 'table-wrap' }, h('table', { class: 'data cards', id: 'dlq-table' },
    h('caption', { class: 'sr-only' }, 'Dead letters'),
    h('thead', null, h('tr', null, all ? h('th', { scope: 'col', class: 'sel' }, h('span', { class: 'sr-only' }, 'Select')) : null,
      ['Id', 'Queue', 'Job type', 'Error class', 'Dead reason', 'Attempts', 'Dead at', 'Last error'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, rows)));
  if (!all) return table;
  return h('div', null, h('div', { class: 'check select-all' }, all, h('label', { for: 'select-page' }, 'Select all on this page')), table);
}

/** Next / Previous over `after_id` pages of `path`; the trail of earlier pages' `after` stays in the fragment. */
export function deadLetterPager(path, p, page) {
  const params = Object.fromEntries(p.entries());
  const after = p.get('after') || '';
  const back = (p.get('back') || '').split(',').filter(Boolean);
  const prev = back.length || after
    ? h('a', { class: 'button', id: 'page-prev', href: '#', onclick: (ev) => {
      ev.preventDefault();
      const b = back.slice(); const to = b.pop();
      navigate(path, { ...params, after: to && to !== '0' ? to : '', back: b.join(',') });
    } }, '← Previous page')
    : null;
  const next = page.next_after_id !== null && page.next_after_id !== undefined
    ? h('a', { class: 'button', id: 'page-next', href: '#', onclick: (ev) => {
      ev.preventDefault();
      navigate(path, { ...params, after: page.next_after_id, back: [...back, after || '0'].join(',') });
    } }, 'Next page →')
    : null;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' }, prev,
    h('span', { id: 'page-info', class: 'muted' }, `Page ${back.length + 1} · ${page.count} shown`), next);
}

/** "queue = emails, job type = send_email", or '' for no filter. */
function describeFilter(filter) {
  return Object.entries(filter).map(([k, v]) => `${k.replace('_', ' ')} = ${v}`).join(', ');
}

function renderBar(bar, filter, page, typed) {
  const n = selection.size;
  const ids = [...selection.keys()].sort((a, b) => a - b);
  const refresh = () => navigate('/dlq', Object.fromEntries(new URLSearchParams(window.location.hash.split('?')[1] || '').entries()));
  const done = () => { selection.clear(); refresh(); };
  // The queue of a selected message, or of one on this page (the dialogs link uncertain ids).
  const queueOf = (id) => selection.get(id)?.queue || page.messages.find((m) => m.id === id)?.queue;
  const matching = (dialog, verb) => () => {
    const wanted = typed();
    if (!wanted) return;
    const described = describeFilter(wanted);
    dialog({ filter: wanted, onDone: done, queueOf,
      title: described ? `${verb} dead letters where ${described}` : `${verb} every dead letter in every queue`,
      describe: described ? `every dead letter where ${described}` : 'every dead letter in every queue' });
  };
  bar.replaceChildren();
  append(bar, [
    h('span', { id: 'selection-count', 'aria-live': 'polite' }, n ? `${n} selected` : 'None selected'),
    ...adminOnly(h('button', { type: 'button', id: 'replay-selected', disabled: !n,
      onclick: () => batchReplayDialog({ filter: { ids }, describe: `${n} selected message${n === 1 ? '' : 's'}`, onDone: done, queueOf }) }, 'Replay selected…'),
    h('button', { type: 'button', id: 'dismiss-selected', disabled: !n,
      onclick: () => batchDismissDialog({ filter: { ids }, describe: `${n} selected message${n === 1 ? '' : 's'}`, onDone: done, queueOf }) }, 'Dismiss selected…'),
    h('button', { type: 'button', id: 'replay-matching', disabled: !page.messages.length,
      onclick: matching(batchReplayDialog, 'Replay') }, 'Replay all matching…'),
    h('button', { type: 'button', id: 'dismiss-matching', disabled: !page.messages.length,
      onclick: matching(batchDismissDialog, 'Dismiss') }, 'Dismiss all matching…')),
    h('span', { class: 'sep', 'aria-hidden': 'true' }),
    n ? h('button', { type: 'button', class: 'link', id: 'clear-selection', onclick: () => { selection.clear(); refresh(); } }, 'Clear selection') : null]);
}

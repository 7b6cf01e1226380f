// One queue's messages by status (#/q/QUEUE?status=…): Retrying, Pending, Processing, Succeeded
// and Dismissed tabs (Dead is the dead-letter list), newest first, filters, offset paging, the
// total from the queue's stats, and "Go to id".
import { h, field, select, timeEl, badge, truncate, bdi } from './dom.js';
import { api } from './api.js';
import { setTitle, navigate } from './app.js';
import { ERROR_CLASSES } from './dialogs.js';

const PAGE = 20;
// [status param, tab label, what the total counts, the query sent]
const TABS = [
  ['retrying', 'Retrying', 'pending', { retrying: 'true' }],
  ['pending', 'Pending', 'pending', { status: 'pending' }],
  ['processing', 'Processing', 'processing', { status: 'processing' }],
  ['succeeded', 'Succeeded', 'succeeded', { status: 'succeeded' }],
  ['dismissed', 'Dismissed', 'dismissed', { status: 'dismissed' }],
];

/** How many a queue's stats count for a tab: pending is ready + scheduled. */
function totalOf(stats, what) {
  return what === 'pending' ? stats.ready + stats.scheduled : stats[what];
}

export async function renderQueue(main, ctx) {
  const queue = ctx.match[1];
  const p = ctx.params;
  const tab = TABS.find((t) => t[0] === p.get('status')) || TABS[0];
  const [status, label, what, query] = tab;
  const order = p.get('order') === 'asc' ? 'asc' : 'desc';
  const filter = {};
  for (const k of ['job_type', 'error_class']) if (p.get(k)) filter[k] = p.get(k);
  const offset = Math.max(0, Number.parseInt(p.get('offset') || '0', 10) || 0);
  setTitle(`${label} in ${queue}`);
  const here = (changes) => navigate(`/q/${queue}`, { status: status === 'retrying' ? '' : status, order: order === 'desc' ? '' : order,
    ...filter, offset: '', ...changes });

  main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/queues' }, '← Queues')),
    h('div', { class: 'page-head' }, h('h1', null, h('span', { class: 'sub' }, 'Queue '), bdi(queue)), goToId(queue)),
    h('nav', { class: 'tabs', 'aria-label': 'Messages by status' }, h('ul', null,
      TABS.map(([s, l]) => h('li', null, h('a', { href: `#/q/${encodeURIComponent(queue)}${s === 'retrying' ? '' : `?status=${s}`}`, id: `tab-${s}`,
        'aria-current': s === status ? 'page' : null }, l))),
      h('li', null, h('a', { href: `#/dlq?queue=${encodeURIComponent(queue)}`, id: 'tab-dead' }, 'Dead')))),
    status === 'retrying'
      ? h('p', { class: 'muted intro' }, 'Pending messages that failed or lost their lease at least once, and will be tried again.')
      : null,
    filterForm(filter, order, here));

  const [stats, page] = await Promise.all([
    api('GET', `/queues/${encodeURIComponent(queue)}/stats`),
    api('GET', `/queues/${encodeURIComponent(queue)}/messages`, { query: { ...query, ...filter, order, limit: PAGE, offset } })]);
  if (!ctx.isCurrent()) return;
  const total = totalOf(stats, what);
  const filtered = Object.keys(filter).length > 0 || status === 'retrying';
  main.append(h('p', { id: 'q-total', class: 'big' }, h('strong', null, String(total)), ` ${what} in `, bdi(queue),
    filtered ? h('span', { class: 'muted' }, ' (this list is filtered: ',
      [status === 'retrying' ? 'retrying only' : null, ...Object.entries(filter).map(([k, v]) => `${k.replace('_', ' ')} = ${v}`)].filter(Boolean).join(', '),
      ')') : null));
  main.append(messagesTable(queue, page.messages, total), pager(page, offset, here));
}

function goToId(queue) {
  const input = h('input', { type: 'text', inputmode: 'numeric', id: 'q-goto-id', name: 'id', size: '10', autocomplete: 'off', placeholder: 'id' });
  const err = h('span', { class: 'problem-inline', id: 'q-goto-error', 'aria-live': 'assertive' });
  const form = h('form', { class: 'goto', id: 'q-goto', role: 'search', 'aria-label': 'Go to a message by id' },
    h('label', { for: 'q-goto-id' }, 'Go to id'), input, h('button', { type: 'submit', id: 'q-goto-go' }, 'Go'), err);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const id = input.value.trim().replace(/^#/, '');
    if (!/^\d{1,18}$/.test(id)) { err.textContent = 'A message id is a number, such as 42.'; input.focus(); return; }
    navigate(`/m/${queue}/${id}`);
  });
  return form;
}

function filterForm(filter, order, here) {
  const jt = h('input', { name: 'job_type', id: 'q-job-type', value: filter.job_type || '', autocomplete: 'off', spellcheck: 'false' });
  const ec = select('error_class', [['', 'Any'], ...ERROR_CLASSES.map((c) => [c, c])], filter.error_class, { id: 'q-error-class' });
  const form = h('form', { class: 'filters', id: 'q-filters', role: 'search', 'aria-label': 'Filter the messages' },
    field('Job type', jt), field('Error class', ec),
    h('div', { class: 'field buttons' },
      h('button', { type: 'submit', class: 'primary', id: 'q-apply' }, 'Apply'),
      h('button', { type: 'button', id: 'q-order', onclick: () => here({ order: order === 'desc' ? 'asc' : '' }) },
        order === 'desc' ? 'Oldest first' : 'Newest first')),
    h('p', { class: 'muted order-said', id: 'q-order-said' }, order === 'desc' ? 'Newest first.' : 'Oldest first.'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    here({ job_type: jt.value.trim(), error_class: ec.value });
  });
  return form;
}

function messagesTable(queue, messages, total) {
  if (!messages.length) {
    return h('p', { class: 'empty', id: 'q-empty' }, total ? 'No message on this page matches.' : 'No message is in this state.');
  }
  const cols = ['Id', 'Status', 'Job type', 'Error class', 'Attempts', 'Created', 'Due', 'Last error'];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data cards', id: 'q-table' },
    h('caption', { class: 'sr-only' }, 'Messages'),
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col', class: c === 'Attempts' ? 'num' : null }, c)))),
    h('tbody', null, messages.map((m) => h('tr', { 'data-id': m.id },
      h('td', { 'data-label': 'Id' }, h('a', { href: `#/m/${encodeURIComponent(queue)}/${m.id}`, class: 'msg-link' }, `#${m.id}`)),
      h('td', { 'data-label': 'Status' }, badge(m.status, 'status')),
      h('td', { 'data-label': 'Job type', class: 'c-job-type' }, bdi(m.job_type) || h('span', { class: 'muted' }, '(none)')),
      h('td', { 'data-label': 'Error class' }, badge(m.error_class, 'class')),
      h('td', { 'data-label': 'Attempts', class: 'num', title: `retry count ${m.retry_count}, lease expiries ${m.lease_expiries}` }, String(m.attempts)),
      h('td', { 'data-label': 'Created' }, timeEl(m.created_at)),
      h('td', { 'data-label': 'Due' }, m.retry_after ? timeEl(m.retry_after) : h('span', { class: 'muted' }, '—')),
      h('td', { 'data-label': 'Last error', class: 'err', title: m.last_error || '' }, truncate(m.last_error, 80)))))));
}

function pager(page, offset, here) {
  const prev = offset > 0
    ? h('a', { class: 'button', id: 'q-prev', href: '#', onclick: (ev) => { ev.preventDefault(); here({ offset: offset - PAGE > 0 ? offset - PAGE : '' }); } }, '← Previous page')
    : null;
  const next = page.count === PAGE
    ? h('a', { class: 'button', id: 'q-next', href: '#', onclick: (ev) => { ev.preventDefault(); here({ offset: offset + PAGE }); } }, 'Next page →')
    : null;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' }, prev,
    h('span', { id: 'q-page-info', class: 'muted' }, `Page ${Math.floor(offset / PAGE) + 1} · ${page.count} shown`), next);
}

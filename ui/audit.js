// The audit log: filters, keyset paging, newest first.
import { h, field, select, timeEl, timeField, readTimes } from './dom.js';
import { api, lacksAdmin } from './api.js';
import { setTitle, navigate, NEEDS_ADMIN } from './app.js';
import { filterText } from './replays.js';

const ACTIONS = ['replay', 'payload_edit', 'dismiss', 'batch_replay', 'batch_replay_pause', 'batch_replay_resume', 'batch_replay_cancel', 'purge', 'retention_purge', 'incident_mute'];
const KEYS = ['action', 'actor', 'queue', 'since', 'until'];

export async function renderAudit(main, ctx) {
  setTitle('Audit log');
  const p = ctx.params;
  const filter = {};
  for (const k of KEYS) if (p.get(k)) filter[k] = p.get(k);
  const after = p.get('after') || '';
  const back = (p.get('back') || '').split(',').filter(Boolean);
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Audit log')));
  if (lacksAdmin()) {
    main.append(h('p', { class: 'empty', id: 'audit-needs-role' }, `The audit log ${NEEDS_ADMIN}: this token can view queues and dead letters, not who did what. Use an admin token to read it.`));
    return;
  }

  const action = select('action', [['', 'Any'], ...ACTIONS.map((a) => [a, a])], filter.action, { id: 'a-action' });
  const actor = h('input', { name: 'actor', id: 'a-actor', value: filter.actor || '', autocomplete: 'off' });
  const queue = h('input', { name: 'queue', id: 'a-queue', value: filter.queue || '', autocomplete: 'off' });
  const since = timeField('Since', 'since', 'a-since', filter.since);
  const until = timeField('Until', 'until', 'a-until', filter.until);
  const form = h('form', { class: 'filters', id: 'audit-filters', role: 'search', 'aria-label': 'Filter the audit log' },
    field('Action', action), field('Actor (token name)', actor), field('Queue', queue),
    since.field, until.field,
    h('div', { class: 'field buttons' }, h('button', { type: 'submit', class: 'primary', id: 'a-apply' }, 'Apply filters'),
      h('button', { type: 'button', onclick: () => navigate('/audit', {}) }, 'Reset')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const times = readTimes([since.input, until.input]);
    if (!times) return;
    navigate('/audit', { action: action.value, actor: actor.value.trim(), queue: queue.value.trim(), since: times[0], until: times[1] });
  });
  main.append(form);

  const page = await api('GET', '/audit', { query: { ...filter, limit: 20, after_id: after } });
  if (!ctx.isCurrent()) return;
  if (!page.entries.length) { main.append(h('p', { class: 'empty', id: 'audit-empty' }, 'No audit entries match.')); return; }
  main.append(h('div', { class: 'table-wrap' }, h('table', { class: 'data cards', id: 'audit-table' },
    h('thead', null, h('tr', null, ['#', 'When', 'Actor', 'Action', 'Queue', 'Messages', 'Reason', 'Details'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, page.entries.map((e) => h('tr', { 'data-id': e.id, 'data-action': e.action },
      h('td', { 'data-label': '#' }, String(e.id)),
      h('td', { 'data-label': 'When' }, timeEl(e.at)),
      h('td', { 'data-label': 'Actor' }, e.actor || '—'),
      h('td', { 'data-label': 'Action', class: 'c-action' }, h('span', { class: 'badge b-action' }, e.action)),
      h('td', { 'data-label': 'Queue' }, e.queue || '—'),
      h('td', { 'data-label': 'Messages' }, messagesCell(e)),
      h('td', { 'data-label': 'Reason', class: 'c-reason' }, e.reason || '—'),
      h('td', { 'data-label': 'Details', class: 'c-details' }, runLink(e), h('details', null, h('summary', null, 'details'),
        h('pre', { class: 'json' }, JSON.stringify({ filter: e.filter, details: readable(e.details) }, null, 2))))))))));
  const params = Object.fromEntries(p.entries());
  main.append(h('nav', { class: 'pager', 'aria-label': 'Pages' },
    back.length || after ? h('a', { class: 'button', id: 'audit-newer', href: '#', onclick: (ev) => { ev.preventDefault(); const b = back.slice(); const to = b.pop(); navigate('/audit', { ...params, after: to && to !== '0' ? to : '', back: b.join(',') }); } }, '← Newer') : null,
    h('span', { class: 'muted' }, `Page ${back.length + 1} · ${page.count} shown`),
    page.next_after_id !== null ? h('a', { class: 'button', id: 'audit-older', href: '#', onclick: (ev) => { ev.preventDefault(); navigate('/audit', { ...params, after: page.next_after_id, back: [...back, after || '0'].join(',') }); } }, 'Older →') : null));
}

// Payloads in details are stored as text; one that is JSON is shown as JSON, not as an escaped string.
function readable(details) {
  if (!details || typeof details !== 'object') return details;
  const out = { ...details };
  for (const k of ['payload', 'previous_payload']) {
    if (typeof out[k] !== 'string') continue;
    try {
      const v = JSON.parse(out[k]);
      if (v !== null && typeof v === 'object') out[k] = v;
    } catch { /* not JSON: kept as stored */ }
  }
  return out;
}

function runLink(e) {
  const id = e.details && e.details.replay_id;
  if (!Number.isInteger(id)) return null;
  return h('p', { class: 'run-link' }, h('a', { href: `#/replays/${id}` }, `Run #${id}`));
}

function messagesCell(e) {
  const ids = e.message_ids || [];
  if (ids.length && e.queue) {
    return ids.slice(0, 5).map((id, i) => [i ? ', ' : '', h('a', { href: `#/m/${encodeURIComponent(e.queue)}/${id}` }, `#${id}`)]).concat(ids.length > 5 ? [` … (${ids.length})`] : []);
  }
  if (ids.length) return `${ids.slice(0, 5).map((id) => `#${id}`).join(', ')}${ids.length > 5 ? ` … (${ids.length})` : ''}`;
  if (e.filter) return h('code', null, filterText(e.filter));
  return '—';
}

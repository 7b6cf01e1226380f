// The Incidents page, where the UI opens: dead letters grouped by cause (one incident per
// fingerprint) with a 48-hour sparkline each; one incident's page with its dead letters and
// Replay…, Dismiss… and Mute… for all of them.
import { h, svg, field, select, timeEl, badge, fmtAge, timeField, readTimes, bdi, dl } from './dom.js';
import { api, ApiError } from './api.js';
import { setTitle, navigate, adminOnly } from './app.js';
import { batchReplayDialog, batchDismissDialog, muteDialog, unmuteDialog, ERROR_CLASSES } from './dialogs.js';
import { deadLetterTable, deadLetterPager } from './deadletters.js';

const FILTER_KEYS = ['queue', 'job_type', 'error_class', 'since', 'until'];
const SORTS = [['dead', 'Most dead first'], ['last_dead_at', 'Latest death first']];
const PAGE_SIZES = ['20', '50', '100'];
// The first page's place in `back`, the cursors the earlier pages started at ('~' is no cursor).
const FIRST = '~';

export async function renderIncidents(main, ctx) {
  setTitle('Incidents');
  const p = ctx.params;
  const filter = {};
  for (const k of FILTER_KEYS) if (p.get(k)) filter[k] = p.get(k);
  const sort = p.get('sort') || 'dead';
  const limit = p.get('limit') || '20';
  const cursor = p.get('cursor') || '';
  const here = () => navigate('/incidents', Object.fromEntries(p.entries()));
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Incidents'),
    h('button', { type: 'button', id: 'incidents-refresh', onclick: here }, 'Refresh')),
  h('p', { class: 'muted intro' }, 'Dead letters grouped by cause: messages of one job type that died of the same error class, ',
    'the same error (its numbers, addresses and quoted values masked) and the same first stack frame.'),
  filterForm(filter, sort, limit));
  const listBox = h('div', { id: 'incidents-list' }, h('p', { class: 'muted' }, 'Loading incidents…'));
  main.append(listBox);

  const queuesPromise = api('GET', '/queues').catch(() => null);
  let page;
  try {
    page = await api('GET', '/dlq/incidents', { query: { ...filter, sort, limit, cursor } });
  } catch (err) {
    // The problem box below says why; nothing here keeps saying "Loading".
    listBox.replaceChildren(h('p', { class: 'muted' }, 'Incidents could not be loaded.'));
    throw err;
  }
  if (!ctx.isCurrent()) return;
  listBox.replaceChildren(incidentsTable(page.incidents, Object.keys(filter).length > 0), pager(p, page));
  const queues = await queuesPromise;
  if (queues && ctx.isCurrent()) {
    document.getElementById('incident-queue-options')?.replaceChildren(...queues.queues.map((q) => h('option', { value: q.queue })));
  }
}

function filterForm(filter, sort, limit) {
  const qIn = h('input', { name: 'queue', value: filter.queue || '', list: 'incident-queue-options', autocomplete: 'off', spellcheck: 'false', id: 'i-queue' });
  const jtIn = h('input', { name: 'job_type', value: filter.job_type || '', autocomplete: 'off', spellcheck: 'false', id: 'i-job-type' });
  const ecSel = select('error_class', [['', 'Any'], ...ERROR_CLASSES.map((c) => [c, c])], filter.error_class, { id: 'i-error-class' });
  const since = timeField('Dead since', 'since', 'i-since', filter.since);
  const until = timeField('Dead until', 'until', 'i-until', filter.until);
  const sortSel = select('sort', SORTS, sort, { id: 'i-sort' });
  // A page size from a bookmark that the menu does not offer is kept, and shown.
  const sizes = PAGE_SIZES.includes(limit) ? PAGE_SIZES : [...PAGE_SIZES, limit];
  const lim = select('limit', sizes.map((n) => [n, n]), limit, { id: 'i-limit' });
  const form = h('form', { class: 'filters', id: 'incident-filters', role: 'search', 'aria-label': 'Filter incidents' },
    field('Queue', qIn), h('datalist', { id: 'incident-queue-options' }),
    field('Job type', jtIn), field('Error class', ecSel),
    since.field, until.field,
    field('Sort', sortSel), field('Per page', lim),
    h('div', { class: 'field buttons' },
      h('button', { type: 'submit', class: 'primary', id: 'i-apply' }, 'Apply'),
      h('button', { type: 'button', id: 'i-reset', onclick: () => navigate('/incidents', {}) }, 'Reset')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const times = readTimes([since.input, until.input]);
    if (!times) return;
    navigate('/incidents', {
      queue: qIn.value.trim(), job_type: jtIn.value.trim(), error_class: ecSel.value,
      since: times[0], until: times[1],
      sort: sortSel.value === 'dead' ? '' : sortSel.value, limit: lim.value === '20' ? '' : lim.value,
    });
  });
  return form;
}

function incidentsTable(incidents, filtered) {
  if (!incidents.length) {
    return h('p', { class: 'empty', id: 'incidents-empty' }, filtered
      ? 'No incident matches these filters.'
      : 'No incidents: no message is dead now.');
  }
  const cols = ['Incident', 'Class', 'Job type', 'Queues', 'Dead now', 'Last 48 hours', 'Last death'];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data cards', id: 'incidents-table' },
    h('caption', { class: 'sr-only' }, 'Incidents: dead letters grouped by cause'),
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col', class: c === 'Dead now' ? 'num' : null }, c)))),
    h('tbody', null, incidents.map((i) => h('tr', { 'data-fingerprint': i.fingerprint },
      h('th', { scope: 'row', 'data-label': 'Incident', class: 'c-title' },
        h('a', { href: `#/incidents/${i.fingerprint}`, class: 'incident-link' }, bdi(i.title) || '(no title)'),
        mutedNote(i)),
      h('td', { 'data-label': 'Class', class: 'c-error-class' }, badge(i.error_class, 'class')),
      h('td', { 'data-label': 'Job type', class: 'c-job-type' }, jobTypes(i.job_types)),
      h('td', { 'data-label': 'Queues', class: 'c-queues' }, queueLinks(i.queues)),
      h('td', { 'data-label': 'Dead now', class: 'num c-dead dead' }, h('a', { href: `#/incidents/${i.fingerprint}` }, String(i.dead))),
      h('td', { 'data-label': 'Last 48 hours', class: 'c-spark' }, sparkline(i.per_hour)),
      h('td', { 'data-label': 'Last death', class: 'c-last-dead' }, lastDeath(i.last_dead_at)))))));
}

function pager(p, page) {
  const params = Object.fromEntries(p.entries());
  const cursor = p.get('cursor') || '';
  const back = (p.get('back') || '').split(',').filter(Boolean);
  const more = page.next_cursor !== null && page.next_cursor !== undefined;
  if (!cursor && !more) return h('span', { hidden: true });
  const prev = cursor
    ? h('a', { class: 'button', id: 'incidents-prev', href: '#', onclick: (ev) => {
      ev.preventDefault();
      const b = back.slice(); const to = b.pop();
      navigate('/incidents', { ...params, cursor: to && to !== FIRST ? to : '', back: b.join(',') });
    } }, '← Previous page')
    : null;
  const next = more
    ? h('a', { class: 'button', id: 'incidents-next', href: '#', onclick: (ev) => {
      ev.preventDefault();
      navigate('/incidents', { ...params, cursor: page.next_cursor, back: [...back, cursor || FIRST].join(',') });
    } }, 'Next page →')
    : null;
  return h('nav', { class: 'pager', 'aria-label': 'Incident pages' }, prev,
    h('span', { id: 'incidents-page-info', class: 'muted' }, `Page ${back.length + 1} · ${page.count} shown`), next);
}

function jobTypes(types) {
  if (!types || !types.length) return h('span', { class: 'muted' }, '(none)');
  return types.map((t, k) => [k ? ', ' : '', bdi(t)]);
}

// Each queue with its dead count, linked to its dead letters.
function queueLinks(queues) {
  const entries = Object.entries(queues || {});
  if (!entries.length) return h('span', { class: 'muted' }, '—');
  return h('ul', { class: 'inline-list' }, entries.map(([q, n]) => h('li', { 'data-queue': q },
    h('a', { href: `#/dlq?queue=${encodeURIComponent(q)}` }, bdi(q)), ` ${n}`)));
}

function lastDeath(iso) {
  if (!iso) return timeEl(iso);
  return [timeEl(iso), h('br'), h('span', { class: 'muted' }, `${fmtAge((Date.now() - Date.parse(iso)) / 1000)} ago`)];
}

function isMuted(i) {
  return Boolean(i.muted_until) && Date.parse(i.muted_until) > Date.now();
}

function mutedNote(i) {
  if (!isMuted(i)) return null;
  return h('span', { class: 'muted-note' }, ' ', h('span', { class: 'badge b-muted', title: i.mute_reason || '' }, 'muted'),
    ' until ', timeEl(i.muted_until));
}

// "the current hour", "3 hours ago": hours back from the last count, which is the current hour.
function hoursAgo(k, n) {
  const back = n - 1 - k;
  if (back === 0) return 'in the current hour';
  return back === 1 ? 'in the hour before' : `${back} hours ago`;
}

/** The text alternative of a sparkline: the total, and the busiest hour. */
export function sparkText(perHour) {
  const counts = perHour || [];
  const total = counts.reduce((s, c) => s + c, 0);
  if (!total) return `None dead-lettered in the last ${counts.length} hours`;
  const peak = counts.reduce((best, c, k) => (c >= counts[best] ? k : best), 0);
  return `${total} dead-lettered in the last ${counts.length} hours; most (${counts[peak]}) ${hoursAgo(peak, counts.length)}`;
}

/** 48 hourly counts (oldest first) as small bars; the text alternative is its accessible name. */
export function sparkline(perHour, { wide = false } = {}) {
  const counts = perHour || [];
  const slot = 3; const H = wide ? 48 : 22;
  const W = Math.max(1, counts.length * slot);
  const max = Math.max(1, ...counts);
  const label = sparkText(counts);
  const g = svg('svg', { viewBox: `0 0 ${W} ${H + 1}`, class: ['spark', wide ? 'spark-wide' : null], role: 'img', 'aria-label': label,
    preserveAspectRatio: 'none', 'data-total': counts.reduce((s, c) => s + c, 0) },
  svg('title', null, label),
  svg('line', { x1: 0, x2: W, y1: H + 0.5, y2: H + 0.5, class: 'base' }));
  counts.forEach((c, k) => {
    // A count of 1 stays visible next to a peak of thousands.
    const hgt = c ? Math.max(2, Math.round((H * c) / max)) : 0;
    g.append(svg('rect', { x: k * slot, y: H - hgt, width: slot - 1, height: hgt, 'data-count': c,
      class: k === counts.length - 1 ? 'bar bar-now' : 'bar' }));
  });
  return g;
}

export async function renderIncident(main, ctx) {
  const fp = ctx.match[1];
  setTitle(`Incident ${fp}`);
  const path = `/incidents/${fp}`;
  const after = ctx.params.get('after') || '';
  main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/incidents' }, '← Incidents')));
  let i; let page;
  try {
    [i, page] = await Promise.all([
      api('GET', `/dlq/incidents/${fp}`),
      api('GET', '/dlq', { query: { fingerprint: fp, limit: 20, after_id: after } })]);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404 && err.slug === 'incident-not-found')) throw err;
    if (!ctx.isCurrent()) return;
    main.append(h('h1', null, 'No dead letters with this cause'),
      h('p', { id: 'incident-gone' }, 'No message with fingerprint ', h('code', null, fp),
        ' is dead now: its dead letters were replayed, dismissed or purged, or no message ever died of this cause.'),
      h('p', null, h('a', { href: '#/incidents' }, 'Go to the incidents'), ' · ',
        h('a', { href: '#/replays' }, 'See the replay runs')));
    return;
  }
  if (!ctx.isCurrent()) return;
  const reload = () => navigate(path);
  const describe = `every dead letter of incident ${fp} (${i.title})`;
  const muted = isMuted(i);
  // The queue of an uncertain id the batch dialogs link: the incident's only queue, or this page's rows.
  const queues = Object.keys(i.queues || {});
  const queueOf = (id) => (queues.length === 1 ? queues[0] : page.messages.find((m) => m.id === id)?.queue);

  main.append(h('div', { class: 'page-head' },
    h('h1', null, h('span', { class: 'sub' }, 'Incident '), bdi(i.title) || '(no title)', mutedNote(i)),
    h('div', { class: 'head-actions' }, adminOnly(
      h('button', { type: 'button', class: 'primary', id: 'inc-replay', onclick: () => batchReplayDialog({ filter: { fingerprint: fp }, describe, queueOf }) }, 'Replay…'),
      h('button', { type: 'button', id: 'inc-dismiss', onclick: () => batchDismissDialog({ filter: { fingerprint: fp }, describe, onDone: reload, queueOf }) }, 'Dismiss…'),
      muted
        ? h('button', { type: 'button', id: 'inc-unmute', onclick: () => unmuteDialog(i, reload) }, 'Un-mute…')
        : h('button', { type: 'button', id: 'inc-mute', onclick: () => muteDialog(i, reload) }, 'Mute…')))));

  main.append(h('div', { class: 'cols' },
    h('section', { class: 'panel', 'aria-labelledby': 'inc-sum-h' }, h('h2', { id: 'inc-sum-h' }, 'Summary'),
      dl([
        ['Fingerprint', h('code', { id: 'inc-fingerprint' }, i.fingerprint)],
        ['Error class', badge(i.error_class, 'class')],
        ['Job type', h('span', null, jobTypes(i.job_types))],
        ['Queues', queueLinks(i.queues)],
        ['Dead now', h('strong', { id: 'inc-dead' }, String(i.dead))],
        ['Replayed', h('span', { id: 'inc-replayed' }, String(i.replayed))],
        ['Dismissed', h('span', { id: 'inc-dismissed' }, String(i.dismissed))],
        ['First death', timeEl(i.first_dead_at)],
        ['Last death', h('span', null, lastDeath(i.last_dead_at))],
        ['Muted', muted
          ? h('span', { id: 'inc-muted' }, 'until ', timeEl(i.muted_until), i.mute_reason ? [' — ', bdi(i.mute_reason)] : null)
          : h('span', { id: 'inc-muted', class: 'muted' }, 'no')],
      ]),
      h('p', { class: 'muted' }, 'Replayed and dismissed count since the incident began.')),
    h('section', { class: 'panel', 'aria-labelledby': 'inc-hours-h' }, h('h2', { id: 'inc-hours-h' }, 'Dead-lettered per hour, last 48 hours'),
      h('figure', { class: 'chart-fig' }, sparkline(i.per_hour, { wide: true }),
        h('div', { class: 'spark-axis muted', 'aria-hidden': 'true' }, h('span', null, '48 hours ago'), h('span', null, 'now')),
        h('figcaption', { class: 'muted', id: 'inc-spark-summary' },
          `${sparkText(i.per_hour)}. The last bar is the current hour so far; replayed and dismissed deaths stay in their hour.`)))));

  main.append(h('section', { class: 'panel', 'aria-labelledby': 'inc-dlq-h' },
    h('h2', { id: 'inc-dlq-h' }, `Dead letters (${i.dead})`),
    deadLetterTable(page.messages, { empty: 'None of this incident\'s messages is dead now.' }),
    deadLetterPager(path, ctx.params, page)));
}

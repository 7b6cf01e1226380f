// Queues overview: counts per queue (100 a page, by name), oldest-dead age, dead-lettered per
// hour (last 24 h); both refreshed in place every 5 s while the tab is visible.
import { h, svg, fmtAge, fmtTime, select } from './dom.js';
import { api, ApiError, explain } from './api.js';
import { setTitle, navigate } from './app.js';

const PAGE = 100;
const REFRESH_MS = 5000;
// The first page's place in `back`, the names the earlier pages started after ('~' is no queue name).
const FIRST = '~';

export async function renderOverview(main, ctx) {
  setTitle('Queues');
  const chartQueue = ctx.params.get('chart_queue') || '';
  const after = ctx.params.get('after') || '';
  const back = (ctx.params.get('back') || '').split(',').filter(Boolean);
  const refresh = h('button', { type: 'button', id: 'overview-refresh', onclick: () => navigate('/queues', { chart_queue: chartQueue, after, back: back.join(',') }) }, 'Refresh');
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Queues'), refresh));
  const tableBox = h('section', { 'aria-labelledby': 'queues-h' }, h('h2', { id: 'queues-h', class: 'sr-only' }, 'Queue counts'), h('p', { class: 'muted' }, 'Loading queues…'));
  const chartBox = h('section', { class: 'chart-box', id: 'chart', 'aria-labelledby': 'chart-h' });
  main.append(tableBox, chartBox);

  let queues; let nextAfter;
  try {
    ({ queues, next_after: nextAfter } = await api('GET', '/queues', { query: { limit: PAGE, after } }));
  } catch (err) {
    // The notice below the page explains the error; nothing here keeps saying "Loading".
    tableBox.replaceChildren(tableBox.firstChild, h('p', { class: 'muted' }, 'Queues could not be loaded.'));
    chartBox.hidden = true;
    throw err;
  }
  if (!ctx.isCurrent()) return;
  const status = h('p', { class: 'muted refresh-status', id: 'overview-updated', 'aria-live': 'off' });
  const showTable = (qs, next) => {
    // A refresh must not take the focus from a link the operator is on.
    const focused = tableBox.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
    tableBox.replaceChildren(tableBox.firstChild, queuesTable(qs), pager(chartQueue, after, back, qs.length, next), status);
    if (focused) tableBox.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
  };
  const stamp = (ok) => {
    status.textContent = ok ? `Updated ${new Date().toISOString().slice(11, 19)} UTC; refreshed every 5 seconds while this tab is visible.`
      : 'Could not refresh; trying again in 5 seconds.';
  };
  showTable(queues, nextAfter);
  stamp(true);
  const reloadChart = renderChart(chartBox, ctx, queues.map((q) => q.queue), chartQueue);

  let timer = null;
  const tick = async () => {
    timer = null;
    if (document.visibilityState === 'visible') {
      try {
        const r = await api('GET', '/queues', { query: { limit: PAGE, after } });
        if (!ctx.isCurrent()) return;
        showTable(r.queues, r.next_after);
        stamp(true);
        reloadChart();
      } catch {
        if (!ctx.isCurrent()) return;
        stamp(false);
      }
    }
    if (ctx.isCurrent()) timer = setTimeout(tick, REFRESH_MS);
  };
  const onVisible = () => {
    if (document.visibilityState === 'visible' && timer) { clearTimeout(timer); tick(); }
  };
  document.addEventListener('visibilitychange', onVisible);
  ctx.onLeave(() => { if (timer) clearTimeout(timer); timer = null; document.removeEventListener('visibilitychange', onVisible); });
  timer = setTimeout(tick, REFRESH_MS);
}

// A count above zero links to the queue's list of that status.
function num(n, cls, href) {
  return h('td', { class: ['num', cls, n > 0 ? 'nz' : 'zero'] }, n > 0 && href ? h('a', { href }, String(n)) : String(n));
}

function queuesTable(queues) {
  if (!queues.length) return h('p', { class: 'empty' }, 'No queues yet: a queue appears when its first message is enqueued.');
  const cols = ['Queue', 'Ready', 'Scheduled', 'Processing', 'Dead', 'Oldest dead', 'Succeeded', 'Dismissed', 'Oldest ready'];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data cards', id: 'queues-table' },
    h('caption', { class: 'sr-only' }, 'Messages per queue and status'),
    h('thead', null, h('tr', null, cols.map((c, i) => h('th', { scope: 'col', class: i ? 'num' : null }, c)))),
    h('tbody', null, queues.map((q) => { const list = (s) => `#/q/${encodeURIComponent(q.queue)}?status=${s}`; return h('tr', { 'data-queue': q.queue },
      h('th', { scope: 'row', 'data-label': 'Queue' }, h('a', { href: `#/dlq?queue=${encodeURIComponent(q.queue)}`, title: `Dead letters of ${q.queue}` }, q.queue)),
      withLabel(num(q.ready, 'c-ready', list('pending')), 'Ready'),
      withLabel(num(q.scheduled, 'c-scheduled', list('pending')), 'Scheduled'),
      withLabel(num(q.processing, 'c-processing', list('processing')), 'Processing'),
      withLabel(q.dead > 0
        ? h('td', { class: 'num c-dead nz dead' }, h('a', { href: `#/dlq?queue=${encodeURIComponent(q.queue)}` }, String(q.dead)))
        : num(q.dead, 'c-dead'), 'Dead'),
      withLabel(h('td', { class: 'num c-oldest-dead' }, fmtAge(q.oldest_dead_age_seconds)), 'Oldest dead'),
      withLabel(num(q.succeeded, 'c-succeeded', list('succeeded')), 'Succeeded'),
      withLabel(num(q.dismissed, 'c-dismissed', list('dismissed')), 'Dismissed'),
      withLabel(h('td', { class: 'num c-oldest-ready' }, fmtAge(q.oldest_ready_age_seconds)), 'Oldest ready')); }))));
}

function pager(chartQueue, after, back, shown, nextAfter) {
  if (!after && !back.length && (nextAfter === null || nextAfter === undefined)) return h('span', { hidden: true });
  const prev = after || back.length
    ? h('a', { class: 'button', id: 'queues-prev', href: '#', onclick: (ev) => {
      ev.preventDefault();
      const b = back.slice(); const to = b.pop();
      navigate('/queues', { chart_queue: chartQueue, after: to && to !== FIRST ? to : '', back: b.join(',') });
    } }, '← Previous page')
    : null;
  const next = nextAfter !== null && nextAfter !== undefined
    ? h('a', { class: 'button', id: 'queues-next', href: '#', onclick: (ev) => {
      ev.preventDefault();
      navigate('/queues', { chart_queue: chartQueue, after: nextAfter, back: [...back, after || FIRST].join(',') });
    } }, 'Next page →')
    : null;
  return h('nav', { class: 'pager', 'aria-label': 'Queue pages' }, prev,
    h('span', { id: 'queues-page-info', class: 'muted' }, `Page ${back.length + 1} · ${shown} queues shown`), next);
}

function withLabel(td, label) { td.setAttribute('data-label', label); return td; }

/** The chart's head and figure; returns the function that reloads its data in place. */
function renderChart(box, ctx, queueNames, chartQueue) {
  const picker = select('chart_queue', [['', 'All queues'], ...queueNames.map((q) => [q, q])], chartQueue, { id: 'chart-queue' });
  picker.addEventListener('change', () => navigate('/queues', { chart_queue: picker.value }));
  box.replaceChildren(
    h('div', { class: 'chart-head' },
      h('h2', { id: 'chart-h' }, 'Dead-lettered per hour, last 24 hours'),
      h('div', { class: 'field inline' }, h('label', { for: 'chart-queue' }, 'Queue'), picker)),
    h('p', { class: 'muted', id: 'chart-status' }, 'Loading chart…'));
  const figure = h('div', { class: 'chart-place' });
  box.append(figure);
  const load = async () => {
    let data;
    try {
      data = await api('GET', '/dlq/hourly', { query: { hours: 24, queue: chartQueue } });
    } catch (err) {
      if (!ctx.isCurrent()) return;
      const status = box.querySelector('#chart-status') || h('p', { id: 'chart-status' });
      status.className = 'chart-unavailable';
      if (err instanceof ApiError && err.status === 404 && err.slug === 'not-found') {
        status.textContent = 'Chart unavailable: this dlqd does not serve /dlq/hourly yet.';
      } else {
        const e = explain(err);
        status.textContent = `Chart unavailable: ${e.title}. ${e.todo}`;
      }
      figure.replaceChildren(status);
      return;
    }
    if (!ctx.isCurrent()) return;
    box.querySelector('#chart-status')?.remove();
    figure.replaceChildren(barChart(data, figure.clientWidth));
  };
  load();
  return load;
}

// Drawn in the width it has (at most 720 units), so that its 11-unit labels are 11 px or more
// on a phone too, not a 720-wide drawing shrunk to half.
function barChart(data, width) {
  const buckets = data.buckets || [];
  const W = Math.round(Math.min(720, Math.max(280, width || 720))); const H = 220; const left = 36; const right = 8; const top = 12; const bottom = 34;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const mag = 10 ** Math.floor(Math.log10(max / 2 || 1));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= max / 2) || max / 2;
  const niceMax = Math.max(1, Math.round(step * 2));
  const total = buckets.reduce((s, b) => s + b.count, 0);
  const slot = (W - left - right) / Math.max(1, buckets.length);
  const y = (v) => top + (H - top - bottom) * (1 - v / niceMax);
  const hourLabel = (iso) => `${new Date(iso).toISOString().slice(11, 13)}:00`;
  const peak = buckets.reduce((p, b) => (b.count > (p ? p.count : -1) ? b : p), null);
  const summary = `${total} messages dead-lettered in the last ${data.hours} hours${data.queue ? ` in queue ${data.queue}` : ''}`
    + (peak && peak.count ? `; most in the hour from ${hourLabel(peak.start)} UTC (${peak.count})` : '');
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': summary, id: 'hourly-chart', 'data-total': total });
  for (const v of [0, niceMax / 2, niceMax]) {
    g.append(svg('line', { x1: left, x2: W - right, y1: y(v), y2: y(v), class: 'grid' }));
    g.append(svg('text', { x: left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, Number.isInteger(v) ? String(v) : v.toFixed(1)));
  }
  buckets.forEach((b, i) => {
    const x = left + i * slot + 2;
    const hgt = Math.max(b.count ? 2 : 0, y(0) - y(b.count));
    const bar = svg('rect', { x, y: y(0) - hgt, width: Math.max(1, slot - 4), height: hgt, class: i === buckets.length - 1 ? 'bar bar-now' : 'bar', 'data-count': b.count, 'data-start': b.start });
    bar.append(svg('title', null, `${fmtTime(b.start)}: ${b.count} dead-lettered${i === buckets.length - 1 ? ' (this hour so far)' : ''}`));
    g.append(bar);
    if (i % 3 === 0 || i === buckets.length - 1) {
      g.append(svg('text', { x: x + (slot - 4) / 2, y: H - bottom + 16, class: 'axis', 'text-anchor': 'middle' }, hourLabel(b.start)));
    }
  });
  return h('figure', { class: 'chart-fig' }, g, h('figcaption', { class: 'muted', id: 'chart-summary' }, `${summary}. Times in UTC; the last bar is the current hour so far.`));
}

// Batch replay runs: the list, and one run's progress with pause, resume and cancel.
import { h, append, dl, timeEl, badge } from './dom.js';
import { api } from './api.js';
import { setTitle, navigate, problemBox, adminOnly } from './app.js';

export async function renderReplays(main, ctx) {
  setTitle('Replay runs');
  const after = ctx.params.get('after') || '';
  const back = (ctx.params.get('back') || '').split(',').filter(Boolean);
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Replay runs')),
    h('p', { class: 'muted' }, 'Batch replays start from the dead-letter list (select messages or filter, then "Replay…").'));
  const r = await api('GET', '/dlq/replays', { query: { limit: 20, after_id: after } });
  if (!ctx.isCurrent()) return;
  if (!r.replays.length) { main.append(h('p', { class: 'empty' }, 'No batch replay runs yet.')); return; }
  main.append(h('div', { class: 'table-wrap' }, h('table', { class: 'data cards', id: 'runs-table' },
    h('thead', null, h('tr', null, ['Run', 'Status', 'Progress', 'Succeeded', 'Dead again', 'Filter', 'By', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, r.replays.map((run) => h('tr', { 'data-id': run.replay_id },
      h('td', { 'data-label': 'Run' }, h('a', { href: `#/replays/${run.replay_id}` }, `#${run.replay_id}`)),
      h('td', { 'data-label': 'Status' }, badge(run.status, 'run')),
      h('td', { 'data-label': 'Progress' }, `${run.replayed + run.skipped} / ${run.matched}`),
      h('td', { 'data-label': 'Succeeded', class: 'num' }, String(run.succeeded)),
      h('td', { 'data-label': 'Dead again', class: 'num' }, String(run.dead_again)),
      h('td', { 'data-label': 'Filter' }, h('code', null, filterText(run.filter))),
      h('td', { 'data-label': 'By' }, run.actor || '—'),
      h('td', { 'data-label': 'Created' }, timeEl(run.created_at))))))));
  const params = Object.fromEntries(ctx.params.entries());
  main.append(h('nav', { class: 'pager', 'aria-label': 'Pages' },
    back.length || after ? h('a', { class: 'button', href: '#', onclick: (ev) => { ev.preventDefault(); const b = back.slice(); const to = b.pop(); navigate('/replays', { ...params, after: to && to !== '0' ? to : '', back: b.join(',') }); } }, '← Newer') : null,
    r.next_after_id !== null ? h('a', { class: 'button', href: '#', onclick: (ev) => { ev.preventDefault(); navigate('/replays', { ...params, after: r.next_after_id, back: [...back, after || '0'].join(',') }); } }, 'Older →') : null));
}

export function filterText(f) {
  if (!f || typeof f !== 'object') return '(all)';
  const parts = Object.entries(f).map(([k, v]) => (Array.isArray(v) ? `${k}=[${v.length > 6 ? `${v.slice(0, 6).join(',')},…` : v.join(',')}]` : `${k}=${v}`));
  return parts.length ? parts.join(' ') : '(all)';
}

const ACTIVE = new Set(['scheduled', 'running', 'paused']);

export async function renderReplayRun(main, ctx) {
  const id = ctx.match[1];
  setTitle(`Replay run #${id}`);
  main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/replays' }, '← Replay runs')),
    h('div', { class: 'page-head' }, h('h1', null, `Replay run #${id}`)));
  const statusLine = h('p', { class: 'run-status-line', 'aria-live': 'polite' });
  const progress = h('progress', { id: 'run-progress', max: '1', value: '0', 'aria-label': 'Replayed so far' });
  const counts = h('div', { id: 'run-counts' });
  const buttons = h('div', { class: 'head-actions', id: 'run-actions' });
  const errBox = h('div', { id: 'run-error' });
  const details = h('div', { id: 'run-details' });
  main.append(h('section', { class: 'panel' }, statusLine, progress, counts, buttons, errBox), h('section', { class: 'panel' }, h('h2', null, 'Run'), details));

  let timer = null;
  let busy = false;
  let confirmCancel = false;
  ctx.onLeave(() => { if (timer) clearTimeout(timer); timer = null; });

  // Each action bumps `epoch`: a poll answer read before it is older than the action's own
  // answer and is dropped, so the page never flips back to a state the operator just changed.
  let epoch = 0;
  const act = async (verb) => {
    busy = true; epoch += 1; errBox.replaceChildren();
    try {
      const run = await api('POST', `/dlq/replays/${id}/${verb}`);
      // Only the cancel itself settles the cancel question: a pause or resume answering late
      // must not close a confirmation the operator opened meanwhile.
      if (verb === 'cancel') confirmCancel = false;
      if (ctx.isCurrent()) show(run);
    } catch (e) {
      if (ctx.isCurrent()) errBox.replaceChildren(problemBox(e));
    } finally { busy = false; }
  };

  const show = (run) => {
    statusLine.replaceChildren();
    append(statusLine, ['Status: ', h('strong', { id: 'run-status', 'data-status': run.status, class: `run-${run.status}` }, run.status),
      run.status === 'scheduled' ? [' — starts ', timeEl(run.start_at)] : null,
      run.status === 'paused' ? ' — press Resume to go on' : null]);
    const processed = run.replayed + run.skipped;
    progress.max = Math.max(1, run.matched); progress.value = processed;
    progress.setAttribute('aria-valuetext', `${processed} of ${run.matched}`);
    counts.replaceChildren(h('dl', { class: 'tiles' }, [
      ['Matched', run.matched, 'run-matched'], ['Replayed', run.replayed, 'run-replayed'],
      ['Skipped', run.skipped, 'run-skipped'], ['Succeeded since', run.succeeded, 'run-succeeded'],
      ['Dead again', run.dead_again, 'run-dead-again'], ['Still pending', run.pending, 'run-pending'],
    ].map(([k, v, id]) => h('div', { class: 'tile' }, h('dt', null, k), h('dd', { id }, String(v))))),
    h('p', { class: 'muted' }, 'Skipped: no longer dead when its turn came, or its idempotency key was held by another message. The outcome counts change as workers finish the replayed messages.'));
    const active = ACTIVE.has(run.status);
    buttons.replaceChildren(...adminOnly(
      h('button', { type: 'button', id: 'run-pause', disabled: !(run.status === 'scheduled' || run.status === 'running'), onclick: () => act('pause') }, 'Pause'),
      h('button', { type: 'button', id: 'run-resume', disabled: run.status !== 'paused', onclick: () => act('resume') }, 'Resume'),
      confirmCancel
        ? h('span', { class: 'confirm-cancel' }, 'Cancel this run? Messages not yet replayed stay dead. ',
          h('button', { type: 'button', class: 'danger', id: 'run-cancel-yes', onclick: () => act('cancel') }, 'Yes, cancel the run'),
          h('button', { type: 'button', id: 'run-cancel-no', onclick: () => { confirmCancel = false; show(run); } }, 'No'))
        : h('button', { type: 'button', id: 'run-cancel', disabled: !active, onclick: () => { confirmCancel = true; show(run); document.getElementById('run-cancel-yes')?.focus(); } }, 'Cancel run…')));
    details.replaceChildren(dl([
      ['Filter', h('code', null, filterText(run.filter))],
      ['Reason', run.reason],
      ['By', run.actor],
      ['Rate', `${run.rate_per_second} per second`],
      ['Delay', `${run.delay_seconds} s`],
      ['Keep order', run.keep_order ? 'yes' : 'no'],
      ['Created', timeEl(run.created_at)],
      ['Starts', timeEl(run.start_at)],
      ['Updated', timeEl(run.updated_at)],
    ]));
  };

  const poll = async () => {
    timer = null;
    try {
      if (!busy) {
        const seen = epoch;
        const run = await api('GET', `/dlq/replays/${id}`);
        if (!ctx.isCurrent()) return;
        const fresh = seen === epoch && !busy;
        if (fresh && (!confirmCancel || !ACTIVE.has(run.status))) { if (!ACTIVE.has(run.status)) confirmCancel = false; show(run); }
        errBox.replaceChildren();
        // Outcome counts keep changing after "done" while workers finish; poll slower then.
        timer = setTimeout(poll, ACTIVE.has(run.status) ? 1000 : 5000);
        return;
      }
    } catch (e) {
      if (!ctx.isCurrent()) return;
      errBox.replaceChildren(problemBox(e));
    }
    if (ctx.isCurrent()) timer = setTimeout(poll, 2000);
  };
  const first = await api('GET', `/dlq/replays/${id}`);
  if (!ctx.isCurrent()) return;
  show(first);
  timer = setTimeout(poll, ACTIVE.has(first.status) ? 1000 : 5000);
}

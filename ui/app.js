// The dlq admin UI: a hash router over seven pages; it opens on the incidents. No framework, no build step.
import { h, clear, bdi } from './dom.js';
import { getToken, setToken, explain, loadIdentity, lacksAdmin } from './api.js';
import { renderIncidents, renderIncident } from './incidents.js';
import { renderOverview } from './overview.js';
import { renderDeadLetters } from './deadletters.js';
import { renderMessage } from './message.js';
import { renderQueue } from './queue.js';
import { renderReplays, renderReplayRun } from './replays.js';
import { renderAudit } from './audit.js';

const routes = [
  { re: /^\/(?:incidents)?$/, nav: 'incidents', page: renderIncidents },
  { re: /^\/incidents\/([0-9a-f]{16})$/, nav: 'incidents', page: renderIncident },
  { re: /^\/queues$/, nav: 'overview', page: renderOverview },
  { re: /^\/q\/([A-Za-z0-9_-]{1,64})$/, nav: 'overview', page: renderQueue },
  { re: /^\/dlq$/, nav: 'dlq', page: renderDeadLetters },
  { re: /^\/m\/([A-Za-z0-9_-]{1,64})\/(\d{1,18})$/, nav: 'dlq', page: renderMessage },
  { re: /^\/replays$/, nav: 'replays', page: renderReplays },
  { re: /^\/replays\/(\d{1,18})$/, nav: 'replays', page: renderReplayRun },
  { re: /^\/audit$/, nav: 'audit', page: renderAudit },
];

const main = document.getElementById('main');
const notice = document.getElementById('notice');
let cleanup = null;
let generation = 0;
let lastPage = null;
// The first render leaves the focus alone, so that "Skip to content" is the first Tab stop.
let firstRender = true;

/** A box that explains an error in words (used inline and in the page notice). */
export function problemBox(err, extra) {
  const e = explain(err);
  return h('div', { class: ['problem', `problem-${e.status || 'x'}`], 'data-status': e.status || '' },
    h('strong', { class: 'problem-title' }, e.title),
    h('p', { class: 'problem-what' }, e.what),
    h('p', { class: 'problem-todo' }, h('span', { class: 'label' }, 'What to do: '), e.todo),
    e.fields && e.fields.length ? h('ul', { class: 'problem-fields' }, e.fields.map((f) => h('li', null, bdi(f)))) : null,
    e.detail ? h('p', { class: 'problem-detail muted' }, 'Server said: ', bdi(e.detail)) : null,
    extra || null);
}

export function showError(err) {
  const e = explain(err);
  notice.className = 'notice notice-error';
  notice.replaceChildren(problemBox(err), h('button', { type: 'button', class: 'link', onclick: hideNotice }, 'Dismiss this notice'));
  notice.hidden = false;
  if (e.focusToken) document.getElementById('token-input').focus();
}

export function showOk(text) {
  notice.className = 'notice notice-ok';
  notice.replaceChildren(h('p', null, text), h('button', { type: 'button', class: 'link', onclick: hideNotice }, 'Dismiss this notice'));
  notice.hidden = false;
}

export function hideNotice() { notice.hidden = true; notice.replaceChildren(); }

/** The fragment's page path and parameters; path null when it cannot be decoded (#/%E0%A4%A). */
export function parseHash() {
  let raw;
  try {
    raw = decodeURI(window.location.hash.replace(/^#/, '')) || '/';
  } catch {
    return { path: null, params: new URLSearchParams() };
  }
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  return { path, params };
}

export function navigate(path, params) {
  const qs = params ? new URLSearchParams([...Object.entries(params)].filter(([, v]) => v !== '' && v !== null && v !== undefined)).toString() : '';
  const target = `#${path}${qs ? `?${qs}` : ''}`;
  if (window.location.hash === target) render();
  else window.location.hash = target;
}

async function render() {
  const gen = ++generation;
  const focusHeading = !firstRender;
  firstRender = false;
  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  const { path, params } = parseHash();
  const route = path === null ? undefined : routes.find((r) => r.re.test(path));
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (route && a.dataset.nav === route.nav) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const samePage = lastPage === (route ? route.nav + route.re.source : null);
  lastPage = route ? route.nav + route.re.source : null;
  if (!samePage) hideNotice();
  clear(main);
  if (!route) {
    main.append(h('h1', { tabindex: '-1' }, 'Page not found'), h('p', null, h('a', { href: '#/queues' }, 'Go to the queues overview')));
    main.dataset.ready = String(gen);
    return;
  }
  const ctx = {
    params, match: path.match(route.re), isCurrent: () => gen === generation,
    onLeave: (fn) => { cleanup = fn; },
  };
  try {
    await route.page(main, ctx);
  } catch (err) {
    if (gen !== generation) return;
    // What was still loading will not come: the problem box says why.
    for (const el of main.querySelectorAll('.loading')) el.remove();
    if (!main.querySelector('h1')) main.append(h('h1', { tabindex: '-1' }, 'Could not load this page'));
    main.append(problemBox(err));
    if (explain(err).focusToken) document.getElementById('token-input').focus();
  }
  if (gen === generation) sayUtcOnce();
  if (gen === generation) main.dataset.ready = String(gen);
  if (gen === generation && !samePage && focusHeading) {
    const h1 = main.querySelector('h1');
    if (h1 && document.activeElement?.id !== 'token-input') { h1.setAttribute('tabindex', '-1'); h1.focus({ preventScroll: true }); }
  }
}

// Tables show times in UTC without repeating it in every cell; the page says it once.
function sayUtcOnce() {
  if (!main.querySelector('time') || main.querySelector('#tz-note')) return;
  const note = h('p', { class: 'tz-note muted', id: 'tz-note' }, 'Times are in UTC; point at one to see your local time.');
  const head = main.querySelector('.page-head') || main.querySelector('h1');
  if (head) head.after(note); else main.prepend(note);
}

export const NEEDS_ADMIN = 'needs the admin role';

/** Buttons this token's roles cannot use: disabled, saying why (title, and one note after them). */
export function adminOnly(...buttons) {
  if (!lacksAdmin()) return buttons;
  for (const b of buttons) { b.disabled = true; b.title = NEEDS_ADMIN; b.classList.add('needs-role'); }
  return [...buttons, h('span', { class: 'needs-role-note muted' }, NEEDS_ADMIN)];
}

export function setTitle(t) { document.title = `${t} — dlq admin`; }

// The header says who the server takes this tab for (GET /whoami), never "Token set" after a 401.
async function refreshTokenState() {
  const state = document.getElementById('token-state');
  const { identity, state: how } = await loadIdentity();
  let said;
  if (how === 'ok' && !identity.tokens_configured) said = 'Open server: no tokens configured';
  else if (how === 'ok') said = `Signed in as ${identity.actor} (${(identity.roles || []).join(', ') || 'no role'})`;
  else if (how === 'not-accepted') said = 'Token not accepted';
  else if (how === 'not-signed-in') said = 'Not signed in';
  else said = getToken() ? 'Token set for this tab.' : 'No token set.';
  state.textContent = said;
  state.dataset.state = how;
  const audit = document.querySelector('a[data-nav="audit"]');
  if (lacksAdmin()) audit.setAttribute('title', `The audit log ${NEEDS_ADMIN}`); else audit.removeAttribute('title');
}

function initToken() {
  const form = document.getElementById('token-form');
  const input = document.getElementById('token-input');
  input.value = getToken();
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    await refreshTokenState();
    hideNotice();
    render();
  });
  document.getElementById('token-forget').addEventListener('click', async () => {
    setToken('');
    input.value = '';
    await refreshTokenState();
    render();
  });
  return refreshTokenState();
}

document.getElementById('skip-link').addEventListener('click', (ev) => { ev.preventDefault(); main.focus(); });
window.addEventListener('hashchange', render);
// Pages are drawn once the roles are known, so that what the token cannot use is disabled at once.
initToken().finally(render);

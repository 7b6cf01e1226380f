// Calls to dlqd (same origin) with the operator's token, and problem answers explained in words.
const TOKEN_KEY = 'dlq.ui.token';

export function getToken() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}
export function setToken(t) {
  try {
    if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token lives until the page reloads */ }
}

// Who the token is, from GET /whoami: {actor, roles, tokens_configured}; null while unknown (an
// older dlqd, no answer), when pages leave every decision to the server.
let identity = null;
// 'ok', 'not-signed-in' (401, no token sent), 'not-accepted' (401 to a token), 'unknown'.
let identityState = 'unknown';

/** Reads GET /whoami again (on load and after the token changes). */
export async function loadIdentity() {
  try {
    identity = await api('GET', '/whoami');
    identityState = 'ok';
  } catch (err) {
    identity = null;
    identityState = err instanceof ApiError && err.status === 401 ? (err.sentToken ? 'not-accepted' : 'not-signed-in') : 'unknown';
  }
  return { identity, state: identityState };
}

/** True when the server said who this is and the roles lack admin: admin-only controls are then disabled. */
export function lacksAdmin() {
  return identity !== null && !(identity.roles || []).includes('admin');
}

export class ApiError extends Error {
  constructor(status, problem, path) {
    super(problem?.detail || problem?.error || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || null;
    this.path = path;
    const type = problem && typeof problem.type === 'string' ? problem.type : '';
    this.slug = type.includes('/') ? type.slice(type.lastIndexOf('/') + 1) : '';
  }
}

export class NetworkError extends Error {
  constructor(path, cause) { super(`no answer for ${path}`); this.path = path; this.cause = cause; }
}

/**
 * api('GET', '/dlq', {query: {...}}) -> parsed JSON; throws ApiError / NetworkError. With `full`,
 * {status, data}: for the routes whose 200 and 201 say different things (a trial started, or the
 * open one answered again).
 */
export async function api(method, path, { query, body, timeoutMs = 15000, full = false } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const headers = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    res = await fetch(url, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store', credentials: 'omit', redirect: 'error', signal: ctl.signal,
    });
  } catch (e) {
    throw new NetworkError(path, e);
  } finally {
    clearTimeout(timer);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data, path);
    err.sentToken = Boolean(token);
    throw err;
  }
  return full ? { status: res.status, data } : data;
}

/** What went wrong and what to do, in words: {title, what, todo, detail, fields, focusToken}. */
export function explain(err) {
  if (err instanceof NetworkError) {
    return { title: 'No answer from dlqd', what: 'The request did not reach the server or got no answer in time.',
      todo: 'Check that dlqd is running and reachable, then try again.' };
  }
  if (!(err instanceof ApiError)) {
    return { title: 'Something went wrong in the page', what: String(err && err.message ? err.message : err), todo: 'Reload the page and try again.' };
  }
  const detail = err.problem?.detail || err.problem?.error || '';
  const base = { detail, status: err.status, slug: err.slug };
  switch (err.status) {
    case 401: {
      const todo = 'Enter a valid API token in the "API token" field at the top of the page and press Save. Ask whoever runs dlqd for one (the server stores only its SHA-256, made with "dlqd hash-token").';
      if (err.sentToken) {
        return { ...base, focusToken: true, title: '401 — Token not accepted', todo,
          what: 'dlqd did not accept the token this tab sent: it is mistyped, or it was removed from the server\'s auth.tokens.' };
      }
      return { ...base, focusToken: true, title: '401 — Not signed in', todo,
        what: 'This needs an access token, and none is entered in this tab.' };
    }
    case 403:
      return { ...base, title: '403 — Your token is not allowed to do this',
        what: 'The token is valid, but it does not have the role this needs. Looking at queues and dead letters needs the reader role; replaying, trial runs, dismissing, muting incidents, batch runs and the audit log need the admin role.',
        todo: 'Use a token with the admin role (enter it at the top of the page), or ask an administrator to do this.' };
    case 409: {
      const why = {
        'invalid-state': ['409 — The message is not in a state that allows this',
          'Someone or something changed it since this page loaded (it may already have been replayed or dismissed, or it is no longer dead).',
          'Reload the message to see its current state.'],
        'preview-stale': ['409 — The preview is out of date',
          'The set of messages changed since the preview was made (some were replayed, dismissed or newly dead), or the preview expired or was already used.',
          'Run the preview again, check it, and confirm the new one.'],
        'idempotency-conflict': ['409 — Another message with the same idempotency key is in flight',
          'A pending or processing message holds this message\'s idempotency key; replaying this one could run the same job twice.',
          'Wait for that message to finish, or dismiss this one.'],
        'already-succeeded': ['409 — A message with the same idempotency key already succeeded',
          'The job this message stands for was already done once. Replaying it would repeat its side effects.',
          'Only if you are sure it must run again, replay with "force" ticked.'],
        'lease-lost': ['409 — The lease was lost', 'The message was taken back from its worker.', 'Reload and try again.'],
      }[err.slug] || ['409 — Conflict', 'The request conflicts with the current state of the data.', 'Reload the page and try again.'];
      return { ...base, title: why[0], what: why[1], todo: why[2] };
    }
    case 503:
      if (err.slug === 'shutting-down') {
        return { ...base, title: '503 — dlqd is shutting down',
          what: 'The server is stopping (a restart or a deploy). Nothing was changed by this request.',
          todo: 'Wait a few seconds and try again; if it keeps happening, check that dlqd was started again.' };
      }
      return { ...base, title: '503 — The database is unavailable',
        what: 'dlqd cannot reach its database right now, so it could not answer. Nothing was changed by this request.',
        todo: 'Try again in a moment. If it keeps happening, check the database and the dlqd logs.' };
    case 404:
      return { ...base, title: '404 — Not found', what: 'The queue, message, incident or replay run does not exist (it may have been purged).',
        todo: 'Go back to the list and pick another.' };
    case 422: {
      const fields = (err.problem?.errors || []).map((e) => `${e.field}: ${e.message}`);
      return { ...base, fields, title: '422 — Some values were not accepted', what: 'The server rejected the input.',
        todo: 'Correct the fields listed below and try again.' };
    }
    case 413:
      return { ...base, title: '413 — Too large', what: 'The request body is larger than the server accepts.', todo: 'Make the payload smaller.' };
    default:
      if (err.status >= 500) {
        return { ...base, title: `${err.status} — Server error`, what: 'dlqd failed to answer this request.', todo: 'Try again; if it keeps happening, check the dlqd logs.' };
      }
      return { ...base, title: `${err.status} — Request refused`, what: 'The server refused the request.', todo: 'Check the input and try again.' };
  }
}

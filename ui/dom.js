// Small DOM helpers: no innerHTML with data, no inline styles (the CSP forbids them).
const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'style') throw new Error('inline styles are not allowed (CSP)');
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** h('a', {href: '#/'}, 'text', child, ...) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  return append(el, children);
}

export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  return append(el, children);
}

export function clear(el) { el.replaceChildren(); return el; }

/** "2026-12-02 06:00:00 UTC", for sentences; tables leave out the " UTC" (the page says it once). */
export function fmtTime(iso) {
  const t = utcText(iso);
  return t === iso || !iso ? t || '—' : `${t} UTC`;
}

function utcText(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, '');
}

// Read at each call: the browser's zone can change while the page is open.
const LOCAL = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' };

/** A time in UTC, with the browser's local time in its tooltip; `utc` says " UTC" (outside tables). */
export function timeEl(iso, { utc = false } = {}) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const d = new Date(iso);
  const local = Number.isNaN(d.getTime()) ? iso : `Your local time: ${d.toLocaleString(undefined, LOCAL)}`;
  return h('time', { datetime: iso, title: local }, utc ? fmtTime(iso) : utcText(iso));
}

export function fmtAge(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) { const m = Math.floor((s % 3600) / 60); return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`; }
  const hh = Math.floor((s % 86400) / 3600);
  return `${Math.floor(s / 86400)} d${hh ? ` ${hh} h` : ''}`;
}

/** datetime-local value (local time) -> RFC 3339 UTC, or '' */
export function localToIso(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

const AGE = /^(\d{1,7})\s*([smhd])$/i;
const AGE_MS = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };
const STAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?\s*(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * A time typed into a filter: UTC "YYYY-MM-DD HH:MM[:SS]", RFC 3339 (with its own offset), or an
 * age ("30m", "2h", "1d" ago). {iso} (RFC 3339 UTC, '' when empty) or {error} in words.
 */
export function parseTimeInput(text, now = Date.now()) {
  const v = String(text || '').trim();
  if (!v) return { iso: '' };
  const age = v.match(AGE);
  if (age) return { iso: new Date(now - Number(age[1]) * AGE_MS[age[2].toLowerCase()]).toISOString() };
  const m = v.match(STAMP);
  if (m) {
    const [y, mo, d, hh, mi, ss] = m.slice(1, 7).map((x) => Number(x || 0));
    const ms = Date.UTC(y, mo - 1, d, hh, mi, ss, m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0);
    const back = new Date(ms);
    const zone = (m[8] || 'Z').toUpperCase();
    const offset = zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    if (back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d && hh < 24 && mi < 60 && ss < 60) {
      return { iso: new Date(ms - offset * 60e3).toISOString() };
    }
  }
  return { error: `"${v}" is not a time. Type it in UTC as YYYY-MM-DD HH:MM (for example 2026-12-02 06:00; seconds may follow), as RFC 3339 (2026-12-02T06:00:00Z), or as an age: 30m, 2h or 1d ago.` };
}

/** RFC 3339 -> what a time filter shows: UTC "2026-12-02 06:00" (seconds only when set). */
export function isoToUtcInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const s = d.toISOString();
  if (s.endsWith(':00.000Z')) return s.slice(0, 16).replace('T', ' ');
  return s.endsWith('.000Z') ? s.slice(0, 19).replace('T', ' ') : s;
}

/** A filter's time field: a text input (wide enough for "2026-12-02 06:00:00"), UTC. */
export function timeField(label, name, id, iso) {
  const input = h('input', { type: 'text', class: 'time', name, id, value: isoToUtcInput(iso), autocomplete: 'off', spellcheck: 'false',
    placeholder: 'YYYY-MM-DD HH:MM' });
  const f = field(label, input, 'UTC, or an age: 30m, 2h, 1d');
  f.classList.add('field-time');
  return { field: f, input };
}

/** The time inputs as RFC 3339 UTC; null, with the first bad one marked and its error said, when one is not a time. */
export function readTimes(inputs) {
  for (const input of inputs) {
    document.getElementById(`${input.id}-error`)?.remove();
    input.removeAttribute('aria-invalid');
  }
  const out = [];
  for (const input of inputs) {
    const r = parseTimeInput(input.value);
    if (r.error) {
      input.setAttribute('aria-invalid', 'true');
      input.after(h('p', { class: 'problem-inline time-error', id: `${input.id}-error`, role: 'alert' }, r.error));
      input.focus();
      return null;
    }
    out.push(r.iso);
  }
  return out;
}

export function prettyPayload(text) {
  try {
    const v = JSON.parse(text);
    if (v !== null && typeof v === 'object') return JSON.stringify(v, null, 2);
  } catch { /* not JSON: shown as stored */ }
  return text;
}

// The bidirectional controls (U+061C, U+200E/F, U+202A–E, U+2066–9). Inside server text they
// reorder what follows: "\u202egnp.exe" reads "exe.png".
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Server text in a <bdi>: its direction cannot reorder the page's text around it. */
export function bdi(text) {
  if (text === null || text === undefined || text === '') return null;
  return h('bdi', null, String(text));
}

/** Server text for a confirmation: isolated, and each bidi control shown as "\u202e". */
export function revealed(text) {
  if (text === null || text === undefined || text === '') return null;
  const shown = String(text).replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return h('bdi', { class: 'revealed' }, shown);
}

export function badge(value, kind) {
  if (value === null || value === undefined || value === '') return h('span', { class: 'muted' }, '—');
  return h('span', { class: ['badge', `b-${kind || 'x'}`, `v-${String(value).replace(/[^a-z0-9_-]/gi, '')}`] }, value);
}

export function truncate(s, n) {
  if (s === null || s === undefined) return '';
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** A definition list from [label, value] pairs; text values are server text (isolated). */
export function dl(pairs, cls) {
  const value = (v) => (typeof v === 'string' ? bdi(v) : v) ?? h('span', { class: 'muted' }, '—');
  return h('dl', { class: ['kv', cls] }, pairs.map(([k, v]) => [h('dt', null, k), h('dd', null, value(v))]));
}

let uid = 0;
export function nextId(prefix) { uid += 1; return `${prefix}-${uid}`; }

/** A labelled form field. */
export function field(label, control, hint) {
  if (!control.id) control.id = nextId('f');
  const hintEl = hint ? h('small', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

export function select(name, options, value, attrs) {
  return h('select', { name, ...attrs },
    options.map(([v, label]) => h('option', { value: v, selected: v === (value || '') }, label)));
}

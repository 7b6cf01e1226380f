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

export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function timeEl(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, fmtTime(iso));
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

/** RFC 3339 -> datetime-local value in local time */
export function isoToLocal(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
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

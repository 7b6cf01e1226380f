#!/usr/bin/env node
// Checks real dlqd answers against docs/openapi.json: each line of the recording (written by the
// integration tests' HTTP client under DLQ_RECORD_RESPONSES) is matched to its path template and
// operation the way dlqd's router matches it, and its status, content type and body must be what
// the document says (JSON Schema 2020-12, ajv). Fails on an answer whose status the operation does
// not document, or whose body does not validate, and when a documented operation got no answer.
//   node check-responses.js <openapi.json> <recording.jsonl>
'use strict';
const fs = require('fs');
const readline = require('readline');
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;

const [docPath, recordingPath] = process.argv.slice(2);
if (!docPath || !recordingPath) {
  console.error('usage: check-responses.js <openapi.json> <recording.jsonl>');
  process.exit(2);
}
const doc = JSON.parse(fs.readFileSync(docPath, 'utf8'));
const BASE = 'https://dlq.dev/openapi.json';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// The components, reachable from every compiled schema by absolute reference.
ajv.addSchema({ $id: BASE, components: { schemas: doc.components.schemas } });

// A schema with its local references ("#/components/...") made absolute.
function absolute(schema) {
  if (Array.isArray(schema)) return schema.map(absolute);
  if (schema === null || typeof schema !== 'object') return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#') ? BASE + v : absolute(v);
  }
  return out;
}
function resolve(obj) {
  while (obj && obj.$ref) {
    obj = obj.$ref.slice(2).split('/').reduce((o, p) => o[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return obj;
}
const compiled = new Map();
function validator(schema) {
  if (!compiled.has(schema)) compiled.set(schema, ajv.compile(absolute(schema)));
  return compiled.get(schema);
}

// Answers no operation gives: the router's own (404 not-found, 405 method-not-allowed) and the
// ones any request may get (the document's AnyRequestProblem).
const anyRequest = resolve(doc.components.responses.AnyRequestProblem);
const anyRequestStatuses =
    anyRequest.content['application/problem+json'].schema.allOf[1].properties.status.enum;
const routerProblem = (status, slug) => ({
  description: slug,
  content: { 'application/problem+json': { schema: {
    allOf: [{ $ref: '#/components/schemas/Problem' },
            { properties: { status: { const: status }, type: { pattern: `/${slug}$` } } }] } } },
});
const notFound = routerProblem(404, 'not-found');
const notAllowed = routerProblem(405, 'method-not-allowed');

// Path templates, as the router orders them: a literal segment beats a capture.
const templates = Object.keys(doc.paths).map((t) => ({ t, segments: t.split('/').slice(1) }));
const isCapture = (s) => s.length > 2 && s.startsWith('{') && s.endsWith('}');
function matchTemplate(path) {
  const segments = path.split('/').slice(1);
  if (!path.startsWith('/')) return null;
  let best = null;
  for (const c of templates) {
    if (c.segments.length !== segments.length) continue;
    const ok = c.segments.every((s, i) => (isCapture(s) ? segments[i] !== '' : s === segments[i]));
    if (!ok) continue;
    if (!best) { best = c; continue; }
    for (let i = 0; i < c.segments.length; ++i) {
      const a = !isCapture(c.segments[i]), b = !isCapture(best.segments[i]);
      if (a !== b) { if (a) best = c; break; }
    }
  }
  return best && best.t;
}

const failures = [];
const seen = new Map();  // "METHOD template status" -> count
let checked = 0, bodies = 0, omitted = 0;
function check(r) {
  const path = r.target.split('?')[0];
  const method = (r.method === 'HEAD' ? 'GET' : r.method).toLowerCase();
  const template = matchTemplate(path);
  const op = template && doc.paths[template][method];
  const where = `${r.method} ${r.target} -> ${r.status}`;
  checked++;
  // Which documented response this answer must be.
  let response;
  if (op) {
    response = op.responses[String(r.status)] || op.responses.default;
    if (!op.responses[String(r.status)] && !anyRequestStatuses.includes(r.status)) response = null;
    if (!response) {
      failures.push(`${where}: status ${r.status} is not documented for ${method.toUpperCase()} ${template}`);
      return;
    }
    response = resolve(response);
  } else if (!template) {
    response = r.status === 404 ? notFound : anyRequest;
  } else {
    response = r.status === 405 ? notAllowed : anyRequest;
  }
  const key = `${method.toUpperCase()} ${template || '(no route)'} ${r.status}`;
  seen.set(key, (seen.get(key) || 0) + 1);
  const content = response.content || {};
  const media = (r.content_type || '').split(';')[0].trim().toLowerCase();
  if (Object.keys(content).length === 0) {
    if (r.body) failures.push(`${where}: a body where the document describes none`);
    return;
  }
  if (!content[media]) {
    failures.push(`${where}: content type "${r.content_type}" is not one of ${Object.keys(content).join(', ')}`);
    return;
  }
  if (r.method === 'HEAD') return;  // no body by definition
  if (r.body === undefined) { omitted++; return; }
  let body = r.body;
  if (media.endsWith('json') || media.startsWith('application/x-amz-json-')) {
    try { body = JSON.parse(r.body); } catch (e) {
      failures.push(`${where}: body is not JSON: ${e.message}`);
      return;
    }
  }
  const validate = validator(content[media].schema || {});
  bodies++;
  if (!validate(body)) {
    const why = validate.errors.slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
    failures.push(`${where}: body does not match the schema: ${why}\n    body: ${r.body.slice(0, 300)}`);
  }
}

async function main() {
  // Line by line: the recording of a whole integration run is hundreds of megabytes.
  const lines = readline.createInterface({ input: fs.createReadStream(recordingPath, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() !== '') check(JSON.parse(line));
  }
  report();
}

function report() {
  // Coverage, for information: operations no recorded answer reached.
  const untouched = [];
  for (const [t, item] of Object.entries(doc.paths)) {
    for (const m of Object.keys(item)) {
      if (![...seen.keys()].some((k) => k.startsWith(`${m.toUpperCase()} ${t} `))) untouched.push(`${m.toUpperCase()} ${t}`);
    }
  }
  console.log(`check-responses: ${checked} answers checked (${bodies} bodies validated, ${omitted} too large to record), ` +
              `${seen.size} distinct operation/status pairs`);
  // An operation no test reached is a hole in this check (or a sign the recording broke).
  if (checked === 0) failures.push('nothing was recorded (is DLQ_RECORD_RESPONSES reaching the tests?)');
  for (const u of untouched) failures.push(`${u}: no recorded answer; the integration tests never call it`);
  if (failures.length) {
    const distinct = [...new Set(failures)];
    console.error(`check-responses: ${failures.length} answers do not match docs/openapi.json (${distinct.length} distinct):`);
    for (const f of distinct.slice(0, 60)) console.error('  ' + f);
    process.exit(1);
  }
}

main().catch((e) => { console.error(e); process.exit(2); });

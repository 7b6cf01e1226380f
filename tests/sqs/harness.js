// Test support for the SQS front: a real dlqd per suite (loopback port 0, a fresh SQLite file or a
// fresh database of the PostgreSQL at DLQ_TEST_PG_URL), SQS clients for it, raw JSON-1.0 requests,
// and the digests SQS defines, computed here independently of dlqd and of the SDK.

import { spawn, execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before } from "node:test";
import * as assert from "node:assert/strict";
import { ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "..", "..");
export const ACCOUNT = "000000000000";
export const REGION = "us-east-1";
/** Any signature or none is accepted by the anonymous front; the SDK still wants credentials. */
export const DUMMY_CREDENTIALS = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "anonymous-front-ignores-this" };

export function dlqdPath() {
  const p = process.env.DLQD ?? path.join(repoRoot, "build", "release", "app", "dlqd");
  if (!fs.existsSync(p)) throw new Error(`dlqd not found at ${p}: set DLQD=/path/to/dlqd`);
  return p;
}

// Cleanups that must run even when a suite dies before its after() hook: kill dlqd, drop the
// temporary folders. (PostgreSQL databases are dropped by after(); a killed run leaves them in
// the throwaway cluster.)
const cleanups = [];
process.on("exit", () => {
  for (const c of cleanups.splice(0)) {
    try {
      c();
    } catch {
      // best effort
    }
  }
});

export function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dlq-sqs-"));
  if (!process.env.DLQ_TEST_KEEP) cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const run = promisify(execFile);

async function psql(url, sql) {
  await run("psql", [url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], { timeout: 30000 });
}

/** A fresh database on the cluster at DLQ_TEST_PG_URL; no URL is a failure, never a skip. */
async function freshPostgres() {
  const admin = process.env.DLQ_TEST_PG_URL;
  assert.ok(admin, "set DLQ_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:55432/postgres; scripts/pg-cluster.sh start prints one)");
  const name = "dlq_sqs_" + randomBytes(6).toString("hex");
  await psql(admin, `CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = "/" + name;
  return { url: url.toString(), drop: () => psql(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function tail(file) {
  try {
    return fs.readFileSync(file, "utf8").slice(-3000);
  } catch {
    return "";
  }
}

/** Starts dlqd and resolves with its port once it printed "dlqd listening on http://HOST:PORT". */
function launch(args, logFile) {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(logFile, "a");
    const proc = spawn(dlqdPath(), args, { stdio: ["ignore", "pipe", log] });
    fs.closeSync(log);
    let out = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`dlqd did not become ready in 15 s: ${out}\n${tail(logFile)}`));
    }, 15000);
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`dlqd exited (${code ?? signal}) before it was ready:\n${tail(logFile)}`));
    };
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (d) => {
      out += d;
      const m = /listening on https?:\/\/[^\s"]*:(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.removeListener("exit", onExit);
      // A suite that dies before its after() must not keep node alive; the exit hook kills dlqd.
      proc.stdout.unref();
      proc.unref();
      resolve({ proc, port: Number(m[1]) });
    });
    proc.on("exit", onExit);
    cleanups.push(() => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    });
  });
}

function stopProcess(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  proc.ref();
  return new Promise((resolve) => {
    const kill = setTimeout(() => proc.kill("SIGKILL"), 10000);
    proc.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    proc.kill("SIGTERM");
  });
}

/**
 * dlqd on 127.0.0.1:0 with `db` ("sqlite" or "postgres") and an optional config object (written to
 * dlq.json in its folder). `dir` may be given to place files (secrets) beside it beforehand.
 * stop(): SIGTERM, wait, drop the PostgreSQL database; it throws when dlqd had died by itself or
 * did not exit 0 (a crash must fail the suite even when no test saw it).
 */
export async function startDlqd({ db, config, dir = tempDir() }) {
  let dbUrl;
  let drop = async () => {};
  if (db === "sqlite") dbUrl = `sqlite:${path.join(dir, "dlq.db")}`;
  else if (db === "postgres") ({ url: dbUrl, drop } = await freshPostgres());
  else throw new Error(`unknown database kind ${db}`);
  const args = ["--db", dbUrl, "--listen", "127.0.0.1:0"];
  if (config !== undefined) {
    const file = path.join(dir, "dlq.json");
    fs.writeFileSync(file, JSON.stringify(config, null, 2));
    args.push("--config", file);
  }
  const logFile = path.join(dir, "dlqd.log");
  let started;
  try {
    started = await launch(args, logFile);
  } catch (err) {
    await drop();
    throw err;
  }
  // An exit before stop() is a crash: the suite's after() reports it with the log's tail.
  let stopping = false;
  let died;
  started.proc.once("exit", (code, signal) => {
    if (!stopping) died = `dlqd exited by itself (${signal ?? `status ${code}`}) while the tests ran; its log ends:\n${tail(logFile)}`;
  });
  return {
    url: `http://127.0.0.1:${started.port}`,
    port: started.port,
    dir,
    logFile,
    log: () => tail(logFile),
    stop: async () => {
      stopping = true;
      await stopProcess(started.proc);
      await drop();
      if (died) throw new Error(died);
      const { exitCode, signalCode } = started.proc;
      if (exitCode !== 0) throw new Error(`dlqd did not exit cleanly on SIGTERM (${signalCode ?? `status ${exitCode}`}); its log ends:\n${tail(logFile)}`);
    },
  };
}

/**
 * Registers before/after hooks in the enclosing describe: dlqd on `db` with `config` (a value or a
 * function of a fresh folder, for configs that name files). Returns an object whose fields
 * (url, port, dir, log) are filled in by before(); clients made with client() are destroyed in after().
 */
export function useDlqd(db, config) {
  const ctx = { clients: [] };
  before(async () => {
    const dir = tempDir();
    const cfg = typeof config === "function" ? config(dir) : config;
    Object.assign(ctx, await startDlqd({ db, config: cfg, dir }));
    // The SDK loads parts of itself on first use; pay for that here, not inside a timed test.
    await client(ctx)
      .send(new ListQueuesCommand({ MaxResults: 1 }))
      .catch(() => {});
  });
  after(async () => {
    for (const c of ctx.clients.splice(0)) c.destroy();
    if (ctx.stop) await ctx.stop();
  });
  return ctx;
}

/**
 * An SQSClient for ctx's dlqd: one attempt (a retry would hide a refusal or a 500), the SDK's own
 * MD5 checks left on (the default; `md5: false` would turn them off).
 */
export function client(ctx, overrides = {}) {
  const c = new SQSClient({
    endpoint: ctx.url,
    region: REGION,
    credentials: DUMMY_CREDENTIALS,
    maxAttempts: 1,
    ...overrides,
  });
  // An answer that is not the SQS front's (no x-amzn-query-error: a dlq problem, a 404 for a
  // missing route) reaches the test as "UnknownError"; say what it was.
  c.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        if (err?.$metadata?.httpStatusCode !== undefined && err.Code === undefined) {
          const said = ["title", "detail", "error"].map((k) => err[k]).filter((v) => typeof v === "string");
          err.message = `${err.message} (HTTP ${err.$metadata.httpStatusCode}, no x-amzn-query-error${said.length ? `: ${said.join("; ")}` : ""})`;
        }
        throw err;
      }
    },
    { step: "initialize", name: "dlqTestDiagnostics" },
  );
  ctx.clients.push(c);
  return c;
}

export function queueUrl(ctx, queue) {
  return `${ctx.url}/${ACCOUNT}/${queue}`;
}

let serial = 0;
/** A queue name unique within this process: `${stem}-${n}-${random}`. */
export function uniqueName(stem) {
  serial += 1;
  return `${stem}-${serial}-${randomBytes(3).toString("hex")}`;
}

/** POST of a JSON-1.0 request without any signature; answers status, headers and the parsed body. */
export async function rawSqs(ctx, action, body, { headers = {}, path: p = "/", method = "POST", target } = {}) {
  const init = {
    method,
    headers: {
      "X-Amz-Target": target ?? `AmazonSQS.${action}`,
      "Content-Type": "application/x-amz-json-1.0",
      ...headers,
    },
  };
  if (method !== "GET" && method !== "HEAD") init.body = typeof body === "string" ? body : JSON.stringify(body ?? {});
  const res = await fetch(ctx.url + p, init);
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, body: json, text };
}

/** A plain request to dlqd's own HTTP API (anonymous mode: no token). */
export async function dlqApi(ctx, p) {
  const res = await fetch(ctx.url + p);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * Awaits a call that must be refused and checks the refusal as the pinned SDK presents it: the HTTP
 * status, the query code from `x-amzn-query-error` (err.Code, and err.name: SDK 3.930.0 names the
 * errors of a query-compatible service after that code), Sender/Receiver (err.Type) and the request
 * id. `code` defaults to `type`; a RegExp allows the refusals whose code the issue leaves open.
 */
export async function refused(promise, { type, status, code = type }) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected ${type}; the call succeeded`);
  const seen = JSON.stringify({ name: err.name, Code: err.Code, Type: err.Type, __type: err.__type, status: err.$metadata?.httpStatusCode, message: err.message });
  assert.equal(err.$metadata?.httpStatusCode, status, `status of ${type}: ${seen}`);
  if (code instanceof RegExp) assert.match(err.Code ?? "", code, `query code of ${type}: ${seen}`);
  else assert.equal(err.Code, code, `query code of ${type} (x-amzn-query-error): ${seen}`);
  assert.equal(err.name, err.Code, `error name: ${seen}`);
  assert.equal(err.Type, status >= 500 ? "Receiver" : "Sender", `fault side: ${seen}`);
  // The SDK keeps __type only on errors it has no model for; where it does, it must be SQS's.
  if (err.__type !== undefined) assert.equal(err.__type, `com.amazonaws.sqs#${type}`, seen);
  assert.ok(err.$metadata.requestId, `x-amzn-RequestId on the refusal: ${seen}`);
  assert.ok(typeof err.message === "string" && err.message.length > 0, `a message: ${seen}`);
  assert.doesNotMatch(err.message, /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/, `a message of text: ${seen}`);
  return err;
}

/** The code pattern for refusals whose query code the issue does not spell out. */
export function codeOf(name) {
  return new RegExp(`^(AWS\\.SimpleQueueService\\.)?${name}$`);
}

export function md5Hex(data) {
  return createHash("md5").update(data).digest("hex");
}

function lengthPrefixed(buf) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
}

/**
 * SQS's MD5OfMessageAttributes: for each attribute in name order, the length-prefixed (4-byte
 * big-endian) UTF-8 name and DataType, one transport byte (1 string, 2 binary) and the
 * length-prefixed value.
 */
export function md5OfAttributes(attributes) {
  const names = Object.keys(attributes).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const parts = [];
  for (const name of names) {
    const a = attributes[name];
    parts.push(lengthPrefixed(Buffer.from(name, "utf8")), lengthPrefixed(Buffer.from(a.DataType, "utf8")));
    if (a.BinaryValue !== undefined) parts.push(Buffer.from([2]), lengthPrefixed(Buffer.from(a.BinaryValue)));
    else parts.push(Buffer.from([1]), lengthPrefixed(Buffer.from(a.StringValue, "utf8")));
  }
  return md5Hex(Buffer.concat(parts));
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `fn` until it returns a truthy value; fails after `timeoutMs` naming `what`. */
export async function waitFor(what, fn, timeoutMs = 10000, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(everyMs);
  }
}

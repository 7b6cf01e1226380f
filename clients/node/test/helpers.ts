// Test support: a real dlqd per test (port 0, a fresh SQLite file), a recording proxy that can
// inject faults between a worker and dlqd, a scripted fake server, and small waiting helpers.

import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "../src/index.js";
import type { Logger, WorkerOptions } from "../src/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** clients/node (tests run from dist/test). */
export const packageRoot = path.resolve(here, "..", "..");
export const repoRoot = path.resolve(packageRoot, "..", "..");

export function dlqdPath(): string {
  const p = process.env.DLQD ?? path.join(repoRoot, "build", "release", "app", "dlqd");
  if (!fs.existsSync(p)) throw new Error(`dlqd not found at ${p}: set DLQD=/path/to/dlqd`);
  return p;
}

export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dlq-node-"));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const cleanups: (() => void)[] = [];
process.on("exit", () => {
  for (const c of cleanups.splice(0)) {
    try {
      c();
    } catch {
      // best effort
    }
  }
});

export interface Dlqd {
  url: string;
  port: number;
  dir: string;
  db: string;
  process: ChildProcess;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** Starts dlqd again on the same port and database. */
  restart(): Promise<void>;
}

export interface DlqdOptions {
  config?: unknown;
  port?: number;
  /** A database URL; default a fresh SQLite file in the test's own folder. */
  db?: string;
}

function launch(args: string[], logFile: string): Promise<{ proc: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    // dlqd's log goes to a file in its directory; stdout (the readiness line) is read, then
    // unref'd with the process, so a finished test file exits and its exit hook kills dlqd.
    const log = fs.openSync(logFile, "a");
    const proc = spawn(dlqdPath(), args, { stdio: ["ignore", "pipe", log] });
    fs.closeSync(log);
    let out = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`dlqd did not become ready: ${out} ${tail(logFile)}`));
    }, 15000);
    proc.stdout!.setEncoding("utf8");
    const onData = (d: string) => {
      out += d;
      // The readiness line: "dlqd listening on http://127.0.0.1:PORT" (or JSON with "address").
      const m = /(?:listening on https?:\/\/|"address"\s*:\s*")[^\s"]*:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.removeListener("exit", onExit);
        (proc.stdout as net.Socket).unref();
        proc.unref();
        resolve({ proc, port: Number(m[1]) });
      }
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`dlqd exited (${code}) before it was ready: ${tail(logFile)}`));
    };
    proc.stdout!.on("data", onData);
    proc.on("exit", onExit);
  });
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").slice(-2000);
  } catch {
    return "";
  }
}

export async function startDlqd(options: DlqdOptions = {}): Promise<Dlqd> {
  const dir = tempDir();
  const db = path.join(dir, "dlq.db");
  const args = ["--db", options.db ?? `sqlite:${db}`];
  if (options.config !== undefined) {
    const file = path.join(dir, "dlq.json");
    fs.writeFileSync(file, JSON.stringify(options.config));
    args.push("--config", file);
  }
  const logFile = path.join(dir, "dlqd.log");
  const first = await launch([...args, "--listen", `127.0.0.1:${options.port ?? 0}`], logFile);
  const d: Dlqd = {
    url: `http://127.0.0.1:${first.port}`,
    port: first.port,
    dir,
    db,
    process: first.proc,
    stop: () => stopProcess(d.process),
    restart: async () => {
      await stopProcess(d.process);
      const next = await launch([...args, "--listen", `127.0.0.1:${d.port}`], logFile);
      d.process = next.proc;
      registerKill(next.proc);
    },
  };
  registerKill(first.proc);
  return d;
}

function registerKill(proc: ChildProcess): void {
  cleanups.push(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  });
}

export function stopProcess(proc: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  proc.ref(); // keep the loop alive until the exit is seen
  return new Promise((resolve) => {
    proc.once("exit", () => resolve());
    proc.kill(signal);
  });
}

export function exitOf(proc: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  return new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
}

export function hashToken(token: string): string {
  const r = spawnSync(dlqdPath(), ["hash-token"], { input: token + "\n", encoding: "utf8" });
  if (r.status !== 0) throw new Error(`dlqd hash-token failed: ${r.stderr}`);
  return r.stdout.trim();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `fn` until it returns a truthy value; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 10000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
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

export interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps every line (and echoes warnings when DLQ_TEST_VERBOSE is set). */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const rec = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, fields });
    if (process.env.DLQ_TEST_VERBOSE) process.stderr.write(`[${level}] ${message} ${JSON.stringify(fields ?? {}, (_k, v) => (v instanceof Error ? `${v.name}: ${v.message}` : v))}\n`);
  };
  return { lines, debug: rec("debug"), info: rec("info"), warn: rec("warn"), error: rec("error") };
}

export interface Seen {
  method: string;
  url: string;
  body: any;
  at: number;
  done: boolean;
}

export type Intercept = (req: Seen) => { status: number; body: unknown } | "destroy" | undefined;

export interface Proxy {
  url: string;
  seen: Seen[];
  intercept: Intercept | undefined;
  close(): Promise<void>;
}

/** Forwards to `target`, recording each request's method, path and JSON body; `intercept` may
 * answer a request itself or destroy its connection. A client that leaves ends the upstream call. */
export async function startProxy(target: string): Promise<Proxy> {
  const t = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const proxy: Proxy = { url: "", seen: [], intercept: undefined, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = undefined;
      try {
        body = raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
      } catch {
        body = raw.toString("utf8");
      }
      const seen: Seen = { method: req.method ?? "", url: req.url ?? "", body, at: Date.now(), done: false };
      proxy.seen.push(seen);
      const action = proxy.intercept?.(seen);
      if (action === "destroy") {
        seen.done = true;
        req.socket.destroy();
        return;
      }
      if (action) {
        seen.done = true;
        const text = typeof action.body === "string" ? action.body : JSON.stringify(action.body);
        res.writeHead(action.status, { "Content-Type": typeof action.body === "string" ? "text/plain" : "application/problem+json" });
        res.end(text);
        return;
      }
      const headers = { ...req.headers, host: t.host };
      const up = http.request({ hostname: t.hostname, port: t.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        upRes.on("end", () => (seen.done = true));
      });
      up.on("error", () => {
        seen.done = true;
        res.destroy();
      });
      res.on("close", () => {
        if (!res.writableFinished) {
          up.destroy();
          seen.done = true;
        }
      });
      up.end(raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  server.unref(); // a test that fails before close() must not keep its file's process alive
  proxy.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  proxy.close = () =>
    new Promise((r) => {
      agent.destroy();
      server.closeAllConnections?.();
      server.close(() => r());
    });
  return proxy;
}

export interface Fake {
  url: string;
  port: number;
  requests: { method: string; url: string; body: string }[];
  close(): Promise<void>;
}

/** A server whose every answer `respond` decides (it may destroy the socket instead). */
export async function startFake(respond: (req: http.IncomingMessage, body: string, n: number, res: http.ServerResponse) => void, port = 0): Promise<Fake> {
  const requests: Fake["requests"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method ?? "", url: req.url ?? "", body });
      respond(req, body, requests.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  server.unref();
  const p = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${p}`,
    port: p,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on (taken and given back). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Collects unhandled rejections, so a suite can assert the library left none. */
export function watchUnhandled(): unknown[] {
  const seen: unknown[] = [];
  process.on("unhandledRejection", (err) => seen.push(err));
  return seen;
}

export interface Vectors {
  problems: { status: number; body: unknown; error: string; slug: string; errors?: unknown[] }[];
  exceptions: { raise: Record<string, any>; fail?: Record<string, unknown>; release?: Record<string, unknown> }[];
}

export function vectors(): Vectors {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, "tests", "clients", "vectors.json"), "utf8"));
}

const liveWorkers: Worker[] = [];

/** A Worker that the file's after() hook stops should its test fail before stopping it. */
export function newWorker(options: WorkerOptions): Worker {
  const w = new Worker(options);
  liveWorkers.push(w);
  return w;
}

export async function stopWorkers(): Promise<void> {
  await Promise.all(liveWorkers.splice(0).map((w) => w.stop()));
}

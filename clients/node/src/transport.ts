// One HTTP exchange with dlqd over a keep-alive agent, and the retry rule around it: a transport
// failure (or a 503) is retried only where resending cannot double an effect (docs/clients.md).

import * as http from "node:http";
import * as https from "node:https";
import { DlqError, TransportError, errorFromAnswer } from "./errors.js";

/**
 * `safe`: a read, a lease-fenced call, a claim, an enqueue with an idempotency key: resending it
 * cannot do anything twice, so transport failures are retried.
 * `unsent`: anything else: retried only when the request certainly never left (connect failed).
 * An answer (4xx, 5xx, 503 included) is never retried here: it raises.
 */
export type RetryRule = "safe" | "unsent";

export interface CallOptions {
  /** Aborting it ends the call: a request still waiting for its answer is closed (a parked claim
   * then ends on the server, which gives back what it claimed for it). */
  signal?: AbortSignal;
  /** Seconds to wait for the whole answer; default the client's `timeout`. */
  timeout?: number;
  /** Transport retries for this call; default the client's `retries` (the Worker sends 0 and
   * backs off itself). */
  retries?: number;
}

export interface TransportOptions {
  url: string;
  token?: string;
  /** PEM text of a private CA for https:// */
  ca?: string;
  retries: number;
  timeout: number;
  userAgent: string;
}

export interface Exchange {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  retry: RetryRule;
}

const RETRY_BASE_S = 0.2;
const RETRY_CAP_S = 10;
const CONNECT_CODES = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL"]);

/** An Error named AbortError carrying the signal's reason, as fetch and timers/promises raise. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  const err = new Error(reason instanceof Error ? reason.message : "the operation was aborted", { cause: reason });
  err.name = "AbortError";
  return err;
}

/** Waits `ms`, or rejects with an AbortError when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Full jitter: a uniform delay between 0 and min(cap, base * 2^attempt) seconds. */
export function fullJitter(attempt: number, baseS: number, capS: number): number {
  return Math.random() * Math.min(capS, baseS * 2 ** attempt) * 1000;
}

export class Transport {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private readonly options: TransportOptions;

  constructor(options: TransportOptions) {
    this.options = options;
    this.base = new URL(options.url);
    if (this.base.protocol !== "http:" && this.base.protocol !== "https:") {
      throw new TypeError(`dlq: the URL must be http:// or https://, not ${options.url}`);
    }
    const secure = this.base.protocol === "https:";
    // Idle sockets are closed after 4 s, well inside dlqd's 75 s idle timeout, so a pooled socket
    // is practically never one the server is closing; free sockets are unref'd by the agent.
    const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 64, timeout: 4000, scheduling: "lifo" as const };
    this.agent = secure ? new https.Agent({ ...agentOptions, ca: options.ca }) : new http.Agent(agentOptions);
    this.request = secure ? https.request : http.request;
  }

  /** Closes the pooled connections (requests in flight go on). */
  close(): void {
    this.agent.destroy();
  }

  async call<T>(exchange: Exchange, options: CallOptions = {}): Promise<T> {
    const body = exchange.body === undefined ? undefined : Buffer.from(JSON.stringify(exchange.body), "utf8");
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.once(exchange, body, options)) as T;
      } catch (err) {
        if (options.signal?.aborted) throw err;
        if (attempt >= (options.retries ?? this.options.retries) || !retryable(err, exchange.retry)) throw err;
        await sleep(fullJitter(attempt, RETRY_BASE_S, RETRY_CAP_S), options.signal);
      }
    }
  }

  private target(exchange: Exchange): string {
    const prefix = this.base.pathname.replace(/\/+$/, "");
    let path = prefix + exchange.path;
    if (exchange.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(exchange.query)) if (v !== undefined && v !== null) q.append(k, String(v));
      const s = q.toString();
      if (s) path += "?" + s;
    }
    return path;
  }

  private once(exchange: Exchange, body: Buffer | undefined, options: CallOptions): Promise<unknown> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const headers: Record<string, string> = { Accept: "application/json", "User-Agent": this.options.userAgent };
    if (this.options.token) headers.Authorization = `Bearer ${this.options.token}`;
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(body.length);
    }
    const timeoutMs = Math.max(1, (options.timeout ?? this.options.timeout) * 1000);
    return new Promise((resolve, reject) => {
      let settled = false;
      let connected = false;
      let answering = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      const req = this.request({
        protocol: this.base.protocol,
        hostname: this.base.hostname.replace(/^\[|\]$/g, ""),
        port: this.base.port || undefined,
        method: exchange.method,
        path: this.target(exchange),
        headers,
        agent: this.agent,
      });
      // Past the deadline the request is closed; a claim's deadline is its wait plus a margin.
      const timer = setTimeout(() => {
        req.destroy(new TransportError(`no answer from dlqd within ${timeoutMs / 1000} s (${exchange.method} ${exchange.path})`, { code: "ETIMEDOUT", sent: connected }));
      }, timeoutMs);
      // Aborting before the answer starts closes the request; once the answer is arriving it is
      // read to its end, so what it carries (claimed messages) reaches the caller.
      const onAbort = () => {
        if (answering) return;
        req.destroy();
        finish(() => reject(abortError(signal!)));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("socket", (socket) => {
        if (!socket.connecting) connected = true;
        else socket.once("connect", () => (connected = true));
      });
      req.on("error", (err: NodeJS.ErrnoException) => {
        finish(() => {
          if (err instanceof TransportError) return reject(err);
          const code = err.code ?? "";
          const sent = connected || !CONNECT_CODES.has(code);
          reject(new TransportError(`cannot reach dlqd at ${this.base.origin}: ${err.message} (${exchange.method} ${exchange.path})`, { code, sent, cause: err }));
        });
      });
      req.on("response", (res) => {
        answering = true;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (err) => req.destroy(err));
        res.on("aborted", () => req.destroy(new TransportError(`the answer from dlqd broke off (${exchange.method} ${exchange.path})`, { code: "ECONNRESET" })));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          const rid = res.headers["x-request-id"];
          const requestId = typeof rid === "string" ? rid : undefined;
          finish(() => {
            if (status >= 200 && status < 300) {
              if (text === "") return resolve(null);
              try {
                resolve(JSON.parse(text));
              } catch (err) {
                reject(new DlqError(status, "", `the answer is not JSON (${exchange.method} ${exchange.path})`, { body: text, requestId, cause: err }));
              }
            } else {
              reject(errorFromAnswer(status, text, requestId));
            }
          });
        });
      });
      req.end(body);
    });
  }
}

function retryable(err: unknown, rule: RetryRule): boolean {
  return err instanceof TransportError && (rule === "safe" || !err.sent);
}

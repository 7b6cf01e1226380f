// Runs test/fixtures/child-worker.js (or another script) in its own process and collects the JSON
// lines it prints, so a test can wait for one and then signal or kill the process.

import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { exitOf, waitFor } from "./helpers.js";

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Child {
  proc: ChildProcess;
  events: Record<string, any>[];
  output: () => string;
  waitEvent(what: string, pred: (e: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export function startChild(env: Record<string, string>, script = path.join(here, "fixtures", "child-worker.js")): Child {
  const proc = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const events: Record<string, any>[] = [];
  let text = "";
  let pending = "";
  proc.stdout!.setEncoding("utf8");
  proc.stderr!.setEncoding("utf8");
  proc.stdout!.on("data", (d: string) => {
    text += d;
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        events.push(JSON.parse(line));
      } catch {
        events.push({ event: "text", line });
      }
    }
  });
  proc.stderr!.on("data", (d: string) => (text += d));
  // Unref'd, so a failed test's child cannot hold its file's process open (the exit hook kills
  // it); waiting for its exit refs it again.
  proc.unref();
  (proc.stdout as unknown as { unref(): void }).unref();
  (proc.stderr as unknown as { unref(): void }).unref();
  process.on("exit", () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  });
  return {
    proc,
    events,
    output: () => text,
    waitEvent: (what, pred, timeoutMs = 10000) => waitFor(what, () => events.find(pred), timeoutMs, 20).then((e) => e!, (err) => {
      throw new Error(`${err.message}\n--- child output ---\n${text.slice(-4000)}`);
    }),
    exit: () => {
      proc.ref();
      return exitOf(proc);
    },
    kill: (signal: NodeJS.Signals = "SIGKILL") => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    },
  };
}

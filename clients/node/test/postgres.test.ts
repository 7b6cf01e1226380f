// One smoke on PostgreSQL: a fresh database on $DLQ_TEST_PG_URL, dlqd on it, 50 jobs through a
// Worker, each succeeded once; the database is dropped after. No URL, or none that answers, is
// a failure, never a skip (as the Python suite's smoke).

import { after, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Client } from "../src/index.js";
import type { Job } from "../src/index.js";
import { newWorker, recordingLogger, startDlqd, stopWorkers, waitFor, watchUnhandled } from "./helpers.js";

const unhandled = watchUnhandled();
after(async () => {
  await stopWorkers();
  assert.deepEqual(unhandled, [], "no unhandled rejections");
});

function psql(url: string, sql: string): void {
  execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], { stdio: ["ignore", "pipe", "pipe"], timeout: 30000 });
}

describe("postgres", { timeout: 60000 }, () => {
  it("50 jobs through a worker on a fresh PostgreSQL database", async () => {
    const admin = process.env.DLQ_TEST_PG_URL;
    assert.ok(admin, "set DLQ_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:55432/postgres)");
    const name = "dlq_node_" + randomBytes(6).toString("hex");
    psql(admin, `CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = "/" + name;
    const d = await startDlqd({ db: url.toString() });
    try {
      const client = new Client({ url: d.url });
      const ids = (await client.enqueueBatch("pg", Array.from({ length: 50 }, (_, n) => ({ payload: { n }, jobType: "t" })))).map((m) => m.id);
      const seen: number[] = [];
      const worker = newWorker({ queue: "pg", url: d.url, concurrency: 8, waitSeconds: 1, handleSignals: false, logger: recordingLogger() });
      worker.handle("t", (job: Job) => {
        seen.push(job.id);
      });
      const running = worker.run();
      await waitFor("50 successes", async () => (await client.stats("pg")).succeeded === 50, 20000, 100);
      await worker.stop();
      await running;
      assert.deepEqual(seen.sort((a, b) => a - b), ids);
      for (const id of ids) assert.deepEqual((await client.attempts("pg", id)).map((a) => a.outcome), ["succeeded"]);
    } finally {
      await d.stop();
      psql(admin, `DROP DATABASE IF EXISTS ${name}`);
    }
  });
});

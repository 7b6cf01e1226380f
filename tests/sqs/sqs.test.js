// dlqd's SQS front, every suite on SQLite and on a fresh PostgreSQL database (DLQ_TEST_PG_URL),
// the two databases side by side: each suite starts its own dlqd and its tests run concurrently.

import { after, describe } from "node:test";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { anonymousFront } from "./front.js";
import { keyedFront } from "./keys.js";
import { consumerSuite } from "./consumer.js";
import { redriveSuite } from "./redrive.js";

// The timed tests bound real time; a starved test process shows here when one of them fails.
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
after(() => {
  delay.disable();
  const ms = (ns) => Math.round(ns / 1e6);
  console.log(`event-loop delay of the test process: max ${ms(delay.max)} ms, p99 ${ms(delay.percentile(99))} ms`);
});

describe("SQS front", { concurrency: true }, () => {
  for (const db of ["sqlite", "postgres"]) {
    describe(db, { concurrency: true }, () => {
      anonymousFront(db);
      keyedFront(db);
      consumerSuite(db);
      redriveSuite(db);
    });
  }
});

// Drain benchmark for scripts/bench-clients.sh: runs a Worker with a no-op handler until N jobs
// are processed and acknowledged, then prints one JSON line with the wall time and the CPU this
// process spent (user + system), measured from the worker's start to the end of its shutdown.
//   node clients/node/dist/bench/drain.js --url URL --queue Q --count N --concurrency C

import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Worker } from "../src/index.js";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.DLQ_URL ?? "http://127.0.0.1:8080" },
    queue: { type: "string", default: "bench" },
    count: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "16" },
    "wait-seconds": { type: "string", default: "1" },
  },
});
const count = Number(values.count);
const concurrency = Number(values.concurrency);
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(concurrency) || concurrency < 1) {
  process.stderr.write("usage: drain.js --url URL --queue Q --count N --concurrency C\n");
  process.exit(2);
}

const worker = new Worker({
  queue: values.queue!,
  url: values.url,
  concurrency,
  waitSeconds: Number(values["wait-seconds"]),
  startupDelay: 0,
  handleSignals: true,
});
let processed = 0;
worker.defaultHandler = () => {
  processed++;
  if (processed === count) void worker.stop();
};

const cpu0 = process.cpuUsage();
const t0 = performance.now();
await worker.run(); // resolves once the last acks are delivered
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const line = { library: "node", processed, seconds: Number(seconds.toFixed(3)), cpu_seconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(3)) };
process.stdout.write(JSON.stringify(line) + "\n");

// The e-mail worker of the README: job type send_email, payload {"to", "subject"}; it logs
// "sent to …" instead of sending. A job without "to" is invalid input (dead at once, no retry).
// Runs until SIGTERM or Ctrl-C. Queue: DLQ_QUEUE (default emails); dlqd: DLQ_URL, DLQ_TOKEN.

import { InvalidInput, Worker } from "dlq-client";
import type { Job } from "dlq-client";

interface Email {
  to?: string;
  subject?: string;
}

const worker = new Worker({ queue: process.env.DLQ_QUEUE ?? "emails", concurrency: 4, logger: console });

worker.handle("send_email", async (job: Job<Email>) => {
  const { to, subject } = job.payload;
  if (!to) throw new InvalidInput("no recipient: the payload has no \"to\"");
  console.log(`sent to ${to}: ${subject ?? "(no subject)"} (job ${job.id}, attempt ${job.attempt})`);
});

await worker.run();

"""The README's email worker: queue $DLQ_QUEUE (default "emails"), job type send_email, payload
{"to", "subject"}. It logs "sent to ..." instead of sending; a job without "to" raises
InvalidInput, so it is dead at once instead of retried. Runs until SIGTERM or Ctrl-C.

    PYTHONPATH=clients/python/src python3 clients/python/examples/email_worker.py

DLQ_URL (default http://127.0.0.1:8080) and DLQ_TOKEN say where dlqd is and who we are."""

import logging
import os

import dlq

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("email_worker")

worker = dlq.Worker(os.environ.get("DLQ_QUEUE", "emails"), concurrency=4)


@worker.handler("send_email")
def send_email(job: dlq.Job) -> None:
    email = job.payload if isinstance(job.payload, dict) else {}
    if not email.get("to"):
        raise dlq.InvalidInput("no to")
    log.info("sent to %s: %s", email["to"], email.get("subject", ""))


if __name__ == "__main__":
    worker.run()

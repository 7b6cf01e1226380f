"""A worker in a process of its own, for the tests that signal or kill it:
    python3 worker_proc.py URL QUEUE CONCURRENCY SHUTDOWN_TIMEOUT VISIBILITY_TIMEOUT
Payloads are {"kind", "seconds"}: "quick" sleeps and succeeds, "cooperative" waits on
job.cancelled, "stuck" sleeps whatever happens. Prints "started ID" and "done ID"."""

import logging
import os
import sys
import time

import support  # noqa: F401 - puts the library on the path
from support import dlq

logging.basicConfig(level=logging.INFO, format="%(relativeCreated)d %(threadName)s %(message)s")
logging.getLogger("dlq").setLevel(logging.INFO)
url, queue, concurrency, shutdown_timeout, lease = sys.argv[1:6]
worker = dlq.Worker(queue, int(concurrency), url=url, shutdown_timeout=float(shutdown_timeout),
                    visibility_timeout=int(lease), wait_seconds=2, startup_delay=0)


@worker.default_handler
def handle(job: dlq.Job) -> None:
    os.write(1, f"started {job.id}\n".encode())
    kind, seconds = job.payload["kind"], job.payload["seconds"]
    if kind == "cooperative":
        job.cancelled.wait(seconds)
    else:
        time.sleep(seconds)
    os.write(1, f"done {job.id}\n".encode())


worker.run()
print("run returned", flush=True)

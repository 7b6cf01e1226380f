"""The Python half of scripts/bench-clients.sh: a dlq.Worker with a no-op handler drains COUNT
jobs from QUEUE, then prints one JSON line:
    {"library": "python", "processed": N, "seconds": S, "cpu_seconds": C}
seconds from run() to its return (the last ack delivered), cpu_seconds this process's user +
system CPU over the same span (start-up and imports excluded).
    PYTHONPATH=clients/python/src python3 clients/python/bench/drain.py --url URL --queue Q \\
        --count N --concurrency C"""

import argparse
import json
import os
import sys
import threading
import time

import dlq


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    worker = dlq.Worker(args.queue, concurrency=args.concurrency, url=args.url, startup_delay=0,
                        handle_signals=False)
    lock = threading.Lock()
    processed = 0

    @worker.default_handler
    def noop(job: dlq.Job) -> None:
        nonlocal processed
        with lock:
            processed += 1
            last = processed == args.count
        if last:
            worker.stop()

    cpu0, t0 = os.times(), time.monotonic()
    worker.run()
    seconds, cpu1 = time.monotonic() - t0, os.times()
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    print(json.dumps({"library": "python", "processed": processed, "seconds": round(seconds, 3),
                      "cpu_seconds": round(cpu, 3)}))
    return 0 if processed == args.count else 1


if __name__ == "__main__":
    sys.exit(main())

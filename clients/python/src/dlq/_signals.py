"""SIGTERM and SIGINT for Worker.run() on the main thread: the first calls stop(), a second exits
the process at once. The signals arrive through a pipe (signal.set_wakeup_fd) that a watcher
thread reads, so stop() never runs inside a signal handler that interrupted the worker's lock."""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any, Callable

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _noop(signum: int, frame: Any) -> None:
    """The C-level handler writes the signal number to the wakeup fd; nothing else to do here."""


def install(stop: Callable[[], None], log: logging.Logger,
            shutdown_timeout: float) -> Callable[[], None]:
    """Takes SIGTERM and SIGINT (main thread only); returns what puts the old handlers back."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    old = {s: signal.signal(s, _noop) for s in SIGNALS}
    watcher = threading.Thread(target=_watch, args=(read_fd, stop, log, shutdown_timeout),
                               name="dlq-signals", daemon=True)
    watcher.start()

    def restore() -> None:
        for s, handler in old.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(old_fd)
        os.close(write_fd)  # the watcher reads end-of-file and ends
        watcher.join(timeout=1)
    return restore


def _watch(read_fd: int, stop: Callable[[], None], log: logging.Logger,
           shutdown_timeout: float) -> None:
    seen = 0
    try:
        while True:
            data = os.read(read_fd, 64)
            if not data:
                return
            for signum in data:
                if signum not in SIGNALS:
                    continue  # another handler's signal sharing the wakeup fd
                seen += 1
                name = signal.Signals(signum).name
                if seen == 1:
                    log.info("%s: stopping; handlers have %.0f s (a second signal exits at once)",
                             name, shutdown_timeout)
                    stop()
                else:
                    log.warning("second signal (%s): exiting now", name)
                    logging.shutdown()
                    os._exit(128 + signum)
    finally:
        os.close(read_fd)

"""Test support: a real dlqd ($DLQD) on 127.0.0.1 with a fresh SQLite database (or a URL), a
client that records what it sends, a worker run on a thread, and polling with a deadline."""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

import dlq  # noqa: E402

VECTORS = os.path.join(HERE, "..", "..", "..", "tests", "clients", "vectors.json")

# The library logs every failure it maps; the tests raise plenty on purpose.
logging.getLogger("dlq").setLevel(os.environ.get("DLQ_TEST_LOG_LEVEL", "CRITICAL"))


def require_dlqd() -> str:
    path = os.environ.get("DLQD")
    if not path or not os.access(path, os.X_OK):
        raise AssertionError("set DLQD to a built dlqd (e.g. build/release/app/dlqd)")
    return path


def load_vectors() -> dict[str, Any]:
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)


class Dlqd:
    """One dlqd process. `config` is merged over a quiet default; `db` defaults to a fresh
    SQLite file in a temporary folder that stop() leaves for restart() and cleanup() removes."""

    def __init__(self, config: dict[str, Any] | None = None, db: str | None = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="dlq-py-")
        self.db = db or f"sqlite:{self.dir}/dlq.db"
        cfg = {"log": {"level": "warn", "access": False}}
        cfg.update(config or {})
        self.config_path = os.path.join(self.dir, "dlqd.json")
        with open(self.config_path, "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Dlqd":
        listen = f"127.0.0.1:{self.port}"
        self.log = open(os.path.join(self.dir, "dlqd.log"), "ab")
        self.proc = subprocess.Popen([require_dlqd(), "--config", self.config_path, "--listen", listen,
                                      "--db", self.db], stdout=subprocess.PIPE, stderr=self.log)
        deadline = time.monotonic() + 15
        line = b""
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if ready:
                line = self.proc.stdout.readline()
                if b"listening on" in line:
                    # "dlqd listening on http://127.0.0.1:PORT"
                    self.port = int(line.strip().rsplit(b":", 1)[1])
                    return self
                if not line:
                    break
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        with open(os.path.join(self.dir, "dlqd.log"), "rb") as f:
            raise AssertionError(f"dlqd did not start: {line!r} {f.read()[-2000:]!r}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        if self.proc:
            self.log.close()
        self.proc = None

    def restart(self) -> None:
        """Same database, same port."""
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class RecordingClient(dlq.Client):
    """A Client that records every request and its outcome: (method, path, body, answer or the
    DlqError raised). hooks[path suffix](method, path, body) runs before sending (it may raise
    to stand for an answer); rewrites[path suffix](answer) may change an answer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[list[Any]] = []
        self.hooks: dict[str, Callable[[str, str, Any], None]] = {}
        self.rewrites: dict[str, Callable[[Any], Any]] = {}
        self._record_lock = threading.Lock()

    def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        entry = [method, path, body, None]
        with self._record_lock:
            self.sent.append(entry)
            hooks = [h for suffix, h in self.hooks.items() if path.endswith(suffix)]
            rewrites = [r for suffix, r in self.rewrites.items() if path.endswith(suffix)]
        try:
            for hook in hooks:
                hook(method, path, body)
            answer = super().request(method, path, body, **kwargs)
        except dlq.DlqError as e:
            entry[3] = e
            raise
        for rewrite in rewrites:
            answer = rewrite(answer)
        entry[3] = answer
        return answer

    def calls(self, suffix: str) -> list[tuple[Any, Any]]:
        """(body, answer) of each request whose path ends with suffix."""
        with self._record_lock:
            return [(b, a) for m, p, b, a in self.sent if p.endswith(suffix)]

    def bodies(self, suffix: str) -> list[tuple[str, Any]]:
        with self._record_lock:
            return [(p, b) for m, p, b, a in self.sent if p.endswith(suffix)]


class DlqdTests(unittest.TestCase):
    """One dlqd per test class, started with CONFIG (None: the quiet default), and a recording
    client per test."""

    CONFIG: dict[str, Any] | None = None
    dlqd: Dlqd

    @classmethod
    def setUpClass(cls) -> None:
        cls.dlqd = Dlqd(cls.CONFIG).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.dlqd.cleanup()

    def client(self) -> RecordingClient:
        c = RecordingClient(self.dlqd.url)
        self.addCleanup(c.close)
        return c


class RunningWorker:
    """A Worker's run() on a thread (no signals there); stop() joins it."""

    def __init__(self, worker: dlq.Worker) -> None:
        self.worker = worker
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self.error = e

    def stop(self, timeout: float = 30) -> float:
        t0 = time.monotonic()
        self.worker.stop()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError("worker did not stop")
        if self.error:
            raise self.error
        return time.monotonic() - t0


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def worker(queue: str, client: dlq.Client, **options: Any) -> dlq.Worker:
    """A Worker for tests: no start-up wait unless asked."""
    options.setdefault("startup_delay", 0)
    return dlq.Worker(queue, client=client, **options)


def outcomes(client: dlq.Client, queue: str, message_id: int) -> list[str]:
    return [a["outcome"] for a in client.attempts(queue, message_id)]

#!/usr/bin/env python3
"""Times SQLite's PRAGMA quick_check (and integrity_check) on a dlq database of about SIZE GB.

  scripts/quick-check-timing.py [SIZE_GB] [DIR]    SIZE_GB default 1; DIR default /tmp

dlqd (build/release/app/dlqd) creates the file and its schema and takes a few hundred messages,
some failed to dead; this script then copies those rows, with 2 KB payloads, until the file holds
SIZE_GB (every index of the messages table filled as dlqd fills it), and times quick_check with
the file dropped from the page cache (as at a start after a reboot), then in it, then
integrity_check. Not part of ctest: the figure is in
docs/reliability.md, "Damaged files (SQLite)". Needs python3's sqlite3 module only.
"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DLQD = os.path.join(ROOT, "build/release/app/dlqd")


def seed(path):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as config:
        config.write('{"log": {"level": "warn"}}')
    dlqd = subprocess.Popen([DLQD, "--config", config.name, "--listen", "127.0.0.1:0",
                             "--db", "sqlite:" + path], stdout=subprocess.PIPE)
    port = int(dlqd.stdout.readline().decode().rsplit(":", 1)[1])

    def post(route, body):
        request = urllib.request.Request(f"http://127.0.0.1:{port}{route}",
                                         data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as answer:
            return json.loads(answer.read())

    for i in range(400):
        post(f"/queues/q{i % 8}/messages", {"payload": f"message {i}"})
    for i in range(100):
        m = post(f"/queues/q{i % 8}/claim", {"visibility_timeout": 3600})["message"]
        post(f"/queues/q{i % 8}/messages/{m['id']}/fail",
             {"lease_id": m["lease_id"], "error": "boom", "retryable": False})
    dlqd.send_signal(signal.SIGTERM)
    dlqd.wait()
    os.unlink(config.name)


def grow(path, size):
    db = sqlite3.connect(path)
    db.execute("UPDATE messages SET payload = payload || ' ' || hex(randomblob(1000))")
    db.commit()
    columns = [row[1] for row in db.execute("PRAGMA table_info(messages)") if row[1] != "id"]
    listed = ", ".join(columns)
    while os.path.getsize(path) < size:
        rows = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        wanted = (size - os.path.getsize(path)) * rows // os.path.getsize(path)
        db.execute(f"INSERT INTO messages ({listed}) SELECT {listed} FROM messages "
                   f"ORDER BY id LIMIT {max(1000, min(50000, wanted))}")
        db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def timed(path, pragma, cold):
    if cold:  # out of the page cache: read from the disk, as at a start after a reboot
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    db = sqlite3.connect(path)
    began = time.monotonic()
    result = db.execute(f"PRAGMA {pragma}").fetchall()
    seconds = time.monotonic() - began
    db.close()
    return seconds, result[0][0]


def main():
    size_gb = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    folder = tempfile.mkdtemp(prefix="quick-check-", dir=sys.argv[2] if len(sys.argv) > 2 else None)
    path = os.path.join(folder, "dlq.db")
    began = time.monotonic()
    seed(path)
    grow(path, int(size_gb * 1024 ** 3))
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    print(f"{path}: {os.path.getsize(path) / 1024 ** 3:.2f} GiB, {rows} messages, "
          f"built in {time.monotonic() - began:.0f} s")
    for pragma, cold in (("quick_check", True), ("quick_check", False),
                         ("integrity_check", False)):
        seconds, result = timed(path, pragma, cold)
        print(f"PRAGMA {pragma}, file {'not ' if cold else ''}in the page cache: "
              f"{seconds:.2f} s ({result})")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()

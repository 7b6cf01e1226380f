#!/usr/bin/python3
"""dlqd's SQS front over the query protocol, with dead-letter queues: tests/sqs/query.sh <dlqd>.

Debian 12's boto3 1.26.27 (botocore 1.29.27) and aws CLI 2.9.19 speak SQS's query protocol
(form-urlencoded requests, XML answers). Each scenario class runs against a real dlqd on loopback
port 0, once on a temporary SQLite file and once on a fresh database of the PostgreSQL cluster at
DLQ_TEST_PG_URL (required: no URL is a failure, never a skip). Only the standard library, Debian's
boto3/botocore and /usr/bin/aws are used; run it with /usr/bin/python3 (a pyenv python3 or aws
earlier on PATH may be a newer one that speaks JSON).

Digests (MD5OfMessageBody, MD5OfMessageAttributes) are computed here, independently of dlqd and of
botocore (which checks none of them).

Environment: DLQD (default build/release/app/dlqd), DLQ_TEST_PG_URL (required), DLQ_TEST_TIMES=1
(prints each test's time), DLQ_TEST_KEEP=1 (keeps the temporary folders: dlqd's logs).
"""

import atexit
import base64
import concurrent.futures
import hashlib
import json
import os
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ACCOUNT = "000000000000"
REGION = "us-east-1"
NS = "http://queue.amazonaws.com/doc/2012-11-05/"
Q = "{" + NS + "}"
AWS_CLI = "/usr/bin/aws"
FORM = "application/x-www-form-urlencoded"


def dlqd_path():
    p = os.environ.get("DLQD") or os.path.join(REPO, "build", "release", "app", "dlqd")
    # The binary may be rebuilt under us; give a rebuild a moment to put it back.
    deadline = time.monotonic() + 90
    while not os.access(p, os.X_OK):
        if time.monotonic() > deadline:
            raise RuntimeError(f"dlqd not found at {p}: set DLQD=/path/to/dlqd")
        time.sleep(2)
    return p


# ---------------------------------------------------------------------------------------------
# Cleanups that must run even when a class dies before its tearDownClass: kill dlqd, drop the
# temporary folders and the PostgreSQL databases.
_cleanups = []


def _run_cleanups():
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception:  # best effort
            pass


atexit.register(_run_cleanups)


def _on_signal(signum, _frame):
    # (unittest would catch a SystemExit raised inside a test and go on with the next one.)
    print(f"\nquery_test.py: signal {signum}: stopping dlqd, removing folders, dropping databases",
          file=sys.stderr, flush=True)
    _run_cleanups()
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, _on_signal)


def temp_dir():
    d = tempfile.mkdtemp(prefix="dlq-sqsq-")
    if not os.environ.get("DLQ_TEST_KEEP"):
        _cleanups.append(lambda: shutil.rmtree(d, ignore_errors=True))
    return d


def psql(url, sql):
    subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], check=True, timeout=30,
                   stdout=subprocess.DEVNULL)


def fresh_postgres():
    """A fresh database on the cluster at DLQ_TEST_PG_URL: (url, drop)."""
    admin = os.environ.get("DLQ_TEST_PG_URL")
    if not admin:
        raise AssertionError("set DLQ_TEST_PG_URL (scripts/pg-cluster.sh start prints one); "
                             "the PostgreSQL pass is not optional")
    name = "dlq_sqsq_" + secrets.token_hex(6)
    psql(admin, f"CREATE DATABASE {name}")
    parts = urllib.parse.urlsplit(admin)
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    dropped = []

    def drop():
        if not dropped:
            dropped.append(True)
            psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    _cleanups.append(drop)
    return url, drop


def tail(path, n=3000):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


class Dlqd:
    """dlqd on 127.0.0.1:0 with `db` ("sqlite" or "postgres") and an optional config (a dict)."""

    def __init__(self, db, config=None, dir=None):
        self.dir = dir or temp_dir()
        self.drop = lambda: None
        if db == "sqlite":
            db_url = "sqlite:" + os.path.join(self.dir, "dlq.db")
        elif db == "postgres":
            db_url, self.drop = fresh_postgres()
        else:
            raise ValueError(db)
        args = [dlqd_path(), "--db", db_url, "--listen", "127.0.0.1:0"]
        if config is not None:
            cfg = os.path.join(self.dir, "dlq.json")
            with open(cfg, "w") as f:
                json.dump(config, f, indent=2)
            args += ["--config", cfg]
        self.log_file = os.path.join(self.dir, "dlqd.log")
        self.stopping = False
        with open(self.log_file, "ab") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
        proc = self.proc
        _cleanups.append(lambda: proc.poll() is None and proc.kill())
        port = []
        ready = threading.Event()

        def read_stdout():
            # The first line names the port; the rest is drained so that dlqd never blocks on it.
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                if not port and "listening on http" in line:
                    port.append(int(line.strip().rsplit(":", 1)[1].strip('/"')))
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read_stdout, daemon=True)
        self.reader.start()
        if not ready.wait(15) or not port:
            proc.kill()
            proc.wait()
            self.drop()
            raise RuntimeError(f"dlqd did not become ready (exit {proc.poll()}):\n{tail(self.log_file)}")
        self.port = port[0]
        self.url = f"http://127.0.0.1:{self.port}"

    def log(self):
        return tail(self.log_file)

    def alive_or_fail(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"dlqd exited by itself ({self.proc.returncode}); its log ends:\n{self.log()}")

    def stop(self):
        """SIGTERM, wait, drop the database; fails when dlqd had died or did not exit 0."""
        died = self.proc.poll()
        if died is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        self.proc.stdout.close()
        self.drop()
        if died is not None:
            raise AssertionError(f"dlqd exited by itself ({died}) while the tests ran; its log ends:\n{self.log()}")
        if self.proc.returncode != 0:
            raise AssertionError(f"dlqd did not exit cleanly on SIGTERM ({self.proc.returncode}); "
                                 f"its log ends:\n{self.log()}")


# ---------------------------------------------------------------------------------------------
# SQS's digests, computed here.

def md5_hex(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.md5(data).hexdigest()


def _prefixed(b):
    return struct.pack(">I", len(b)) + b


def md5_of_attributes(attributes):
    """MD5OfMessageAttributes: per attribute in (UTF-8 byte) name order, the length-prefixed name and
    DataType, one transport byte (1 string/number, 2 binary) and the length-prefixed value."""
    out = b""
    for name in sorted(attributes, key=lambda n: n.encode("utf-8")):
        a = attributes[name]
        out += _prefixed(name.encode("utf-8")) + _prefixed(a["DataType"].encode("utf-8"))
        if "BinaryValue" in a:
            out += b"\x02" + _prefixed(bytes(a["BinaryValue"]))
        else:
            out += b"\x01" + _prefixed(a["StringValue"].encode("utf-8"))
    return hashlib.md5(out).hexdigest()


# ---------------------------------------------------------------------------------------------
# Raw requests.

class Raw:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def xml(self):
        return ET.fromstring(self.body)

    def json(self):
        return json.loads(self.body) if self.body else None


def http(url, method="GET", body=None, headers=None, timeout=30):
    data = None
    headers = dict(headers or {})
    if body is not None:
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Raw(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        with e:
            return Raw(e.code, e.headers, e.read())


def raw_query(base, params, path="/", headers=None):
    """An unsigned query-protocol POST: form body, no Authorization."""
    body = urllib.parse.urlencode(params) if isinstance(params, (dict, list)) else params
    return http(base + path, "POST", body, {"Content-Type": FORM, **(headers or {})})


def error_of(raw):
    """(Type, Code, Message, RequestId) of an <ErrorResponse>, checking its shape."""
    root = raw.xml()
    assert root.tag == Q + "ErrorResponse", raw.text
    err = root.find(Q + "Error")
    assert err is not None, raw.text
    return (err.findtext(Q + "Type"), err.findtext(Q + "Code"), err.findtext(Q + "Message"),
            root.findtext(Q + "RequestId"))


def client(base, key_id="AKIAIOSFODNN7EXAMPLE", secret="anonymous-front-ignores-this", region=REGION):
    """A boto3 SQS client for dlqd: one attempt (a retry would hide a refusal or a 500)."""
    c = boto3.session.Session().client(
        "sqs", endpoint_url=base, region_name=region, aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        config=Config(retries={"total_max_attempts": 1}, read_timeout=60, connect_timeout=10))
    _clients.append(c)
    return c


_clients = []


def close_clients():
    while _clients:
        _clients.pop().close()


_serial = [0]


def unique(stem):
    _serial[0] += 1
    return f"{stem}-{_serial[0]}-{secrets.token_hex(3)}"


def wait_for(what, fn, timeout=10.0, every=0.05):
    end = time.monotonic() + timeout
    last = None
    while True:
        try:
            v = fn()
            if v:
                return v
        except Exception as e:  # keep polling; report the last failure
            last = e
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}" + (f": {last!r}" if last else ""))
        time.sleep(every)


# ---------------------------------------------------------------------------------------------

class Scenarios:
    """Shared by the SQLite and PostgreSQL classes below: an anonymous dlqd per class."""

    DB = None
    CONFIG = None

    @classmethod
    def setUpClass(cls):
        cls.dlqd = Dlqd(cls.DB, cls.CONFIG)
        cls.base = cls.dlqd.url
        cls.sqs = client(cls.base)

    @classmethod
    def tearDownClass(cls):
        close_clients()
        cls.dlqd.stop()

    def setUp(self):
        self._t0 = time.monotonic()

    def tearDown(self):
        if os.environ.get("DLQ_TEST_TIMES"):
            print(f" [{time.monotonic() - self._t0:.1f} s]", end=" ", file=sys.stderr)
        self.dlqd.alive_or_fail()

    # helpers ---------------------------------------------------------------------------------
    def queue(self, stem, **attributes):
        name = unique(stem)
        kw = {"Attributes": attributes} if attributes else {}
        url = self.sqs.create_queue(QueueName=name, **kw)["QueueUrl"]
        self.assertEqual(url, f"{self.base}/{ACCOUNT}/{name}")
        return name, url

    def arn(self, url):
        return self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def api(self, path, method="GET", body=None):
        r = http(self.base + path, method, body)
        self.assertLess(r.status, 300, f"{method} {path}: {r.status} {r.text}")
        return r.json()

    def refused(self, fn, code, status=400, **kw):
        with self.assertRaises(ClientError, msg=f"expected {code}") as cm:
            fn(**kw)
        err = cm.exception.response
        seen = json.dumps({"Error": err.get("Error"), "status": err["ResponseMetadata"].get("HTTPStatusCode")})
        self.assertEqual(err["Error"]["Code"], code, seen)
        self.assertEqual(err["ResponseMetadata"]["HTTPStatusCode"], status, seen)
        self.assertEqual(err["Error"].get("Type"), "Receiver" if status >= 500 else "Sender", seen)
        self.assertTrue(err["ResponseMetadata"].get("RequestId"), seen)
        self.assertTrue(err["Error"].get("Message"), seen)
        return cm.exception

    def receive_n(self, url, n, timeout=5.0, **kw):
        """Receives until n messages came (ReceiveMessage may answer fewer than asked)."""
        got = []
        end = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < end:
            r = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=min(10, n - len(got)),
                                         WaitTimeSeconds=1, **kw)
            got += r.get("Messages", [])
        self.assertEqual(len(got), n, f"received {[m['MessageId'] for m in got]}")
        return got

    def counts(self, url):
        a = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        return (int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"]),
                int(a["ApproximateNumberOfMessagesDelayed"]))

    # 1 ---------------------------------------------------------------------------------------
    def test_01_dlq_api_beside_sqs(self):
        """Query-protocol requests are form bodies; dlq's own API sees SQS's messages and back."""
        name, url = self.queue("beside")
        seen = []

        def capture(request, **_):
            seen.append(request)  # returns None: the request is sent

        self.sqs.meta.events.register("before-send.sqs.SendMessage", capture)
        try:
            sent = self.sqs.send_message(QueueUrl=url, MessageBody='{"to": "a@example.com"}')
        finally:
            self.sqs.meta.events.unregister("before-send.sqs.SendMessage", capture)
        self.assertEqual(len(seen), 1)
        body = seen[0].body.decode() if isinstance(seen[0].body, bytes) else seen[0].body
        form = urllib.parse.parse_qs(body)
        self.assertEqual(form.get("Action"), ["SendMessage"], body)
        self.assertEqual(form.get("Version"), ["2012-11-05"], body)
        self.assertEqual(form.get("MessageBody"), ['{"to": "a@example.com"}'], body)
        ctype = seen[0].headers["Content-Type"]
        ctype = ctype.decode() if isinstance(ctype, bytes) else ctype
        self.assertTrue(ctype.startswith(FORM), seen[0].headers)
        self.assertEqual(sent["ResponseMetadata"]["HTTPHeaders"]["content-type"].split(";")[0], "text/xml")
        self.assertEqual(sent["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"],
                         sent["ResponseMetadata"]["RequestId"])

        # The MessageId is dlq's id: its own API shows the message.
        mid = sent["MessageId"]
        self.assertRegex(mid, r"^[0-9]+$")
        m = self.api(f"/queues/{name}/messages/{mid}")
        self.assertEqual((m["id"], m["queue"], m["payload"], m["status"]),
                         (int(mid), name, '{"to": "a@example.com"}', "pending"))

        # A message enqueued through dlq's API is received through SQS with that id, then deleted.
        mine = self.api(f"/queues/{name}/messages", "POST", {"payload": "from dlq's own API"})
        got = self.receive_n(url, 2, AttributeNames=["All"])
        by_id = {g["MessageId"]: g for g in got}
        self.assertEqual(set(by_id), {mid, str(mine["id"])})
        self.assertEqual(by_id[str(mine["id"])]["Body"], "from dlq's own API")
        self.assertEqual(by_id[str(mine["id"])]["MD5OfBody"], md5_hex("from dlq's own API"))
        self.assertEqual(by_id[mid]["Attributes"]["ApproximateReceiveCount"], "1")
        self.assertEqual(self.api(f"/queues/{name}/messages/{mine['id']}")["status"], "processing")
        for g in got:
            self.sqs.delete_message(QueueUrl=url, ReceiptHandle=g["ReceiptHandle"])
        for g in got:
            self.assertEqual(self.api(f"/queues/{name}/messages/{g['MessageId']}")["status"], "succeeded")
        attempts = self.api(f"/queues/{name}/messages/{mid}/attempts")
        self.assertEqual(len(attempts.get("attempts", [])), 1, json.dumps(attempts))

        # A queue only dlq's API knows is not an SQS queue until CreateQueue adopts it.
        other = unique("own-only")
        self.api(f"/queues/{other}/messages", "POST", {"payload": "kept"})
        self.refused(self.sqs.get_queue_url, "AWS.SimpleQueueService.NonExistentQueue", QueueName=other)
        adopted = self.sqs.create_queue(QueueName=other)["QueueUrl"]
        self.assertEqual([g["Body"] for g in self.receive_n(adopted, 1)], ["kept"])

    # 2 ---------------------------------------------------------------------------------------
    ATTRS = {
        "tenant.name": {"DataType": "String", "StringValue": "acme — ünïcode ✓ & <x> ]]>"},
        "Zeta": {"DataType": "String", "StringValue": "upper case sorts first"},
        "count": {"DataType": "Number", "StringValue": "-12.50"},
        "blob": {"DataType": "Binary", "BinaryValue": bytes(range(256))},
    }

    def test_02_message_attributes_with_md5s(self):
        _, url = self.queue("attrs")
        body = "attributes of three types"
        sent = self.sqs.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=self.ATTRS)
        self.assertEqual(sent["MD5OfMessageBody"], md5_hex(body))
        self.assertEqual(sent["MD5OfMessageAttributes"], md5_of_attributes(self.ATTRS))
        # The digest covers the DataType (a Number is not the String of the same text).
        self.assertNotEqual(md5_of_attributes(self.ATTRS),
                            md5_of_attributes({**self.ATTRS, "count": {"DataType": "String", "StringValue": "-12.50"}}))

        batch = self.sqs.send_message_batch(QueueUrl=url, Entries=[
            {"Id": "one", "MessageBody": "b1", "MessageAttributes": {"k": {"DataType": "Number", "StringValue": "7"}}},
            {"Id": "two", "MessageBody": "b2", "MessageAttributes": {"bin": {"DataType": "Binary", "BinaryValue": b"\x00"}}},
        ])
        self.assertEqual(batch.get("Failed", []), [])
        res = {e["Id"]: e for e in batch["Successful"]}
        self.assertEqual(res["one"]["MD5OfMessageAttributes"],
                         md5_of_attributes({"k": {"DataType": "Number", "StringValue": "7"}}))
        self.assertEqual(res["two"]["MD5OfMessageAttributes"],
                         md5_of_attributes({"bin": {"DataType": "Binary", "BinaryValue": b"\x00"}}))
        self.assertEqual(res["one"]["MD5OfMessageBody"], md5_hex("b1"))

        got = {m["MessageId"]: m for m in self.receive_n(url, 3, MessageAttributeNames=["All"])}
        m = got[sent["MessageId"]]
        self.assertEqual(m["Body"], body)
        self.assertEqual(m["MD5OfBody"], md5_hex(body))
        self.assertEqual(m["MessageAttributes"], self.ATTRS)
        self.assertEqual(m["MD5OfMessageAttributes"], md5_of_attributes(self.ATTRS))
        # The digest is computed from what was received, too.
        self.assertEqual(md5_of_attributes(m["MessageAttributes"]), sent["MD5OfMessageAttributes"])
        self.assertEqual(got[res["two"]["MessageId"]]["MessageAttributes"]["bin"]["BinaryValue"], b"\x00")

        # Asking for some attributes by name or prefix returns only those.
        self.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
        again = wait_for("the message again", lambda: [
            x for x in self.sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, MessageAttributeNames=["tenant.*", "blob"]).get("Messages", [])
            if x["MessageId"] == sent["MessageId"]], timeout=5)[0]
        self.assertEqual(again["MessageAttributes"], {k: self.ATTRS[k] for k in ("tenant.name", "blob")})
        self.assertEqual(again["MD5OfMessageAttributes"],
                         md5_of_attributes({k: self.ATTRS[k] for k in ("tenant.name", "blob")}))

    # 3 ---------------------------------------------------------------------------------------
    def test_03_batch_split_and_eleven_refused(self):
        name, url = self.queue("batch")
        entries = [{"Id": f"e{i}", "MessageBody": f"body {i}"} for i in range(10)]
        r = self.sqs.send_message_batch(QueueUrl=url, Entries=entries)
        self.assertEqual(r.get("Failed", []), [])
        self.assertEqual(sorted(e["Id"] for e in r["Successful"]), sorted(e["Id"] for e in entries))
        for e in r["Successful"]:
            self.assertEqual(e["MD5OfMessageBody"], md5_hex("body " + e["Id"][1:]), e)
        ids = {e["MessageId"] for e in r["Successful"]}
        self.assertEqual(len(ids), 10)
        self.assertEqual(self.counts(url), (10, 0, 0))

        # A batch split between Successful and Failed: the bad entry fails alone.
        r = self.sqs.send_message_batch(QueueUrl=url, Entries=[
            {"Id": "good", "MessageBody": "fine"},
            {"Id": "bad", "MessageBody": "control \x01 character"},
            {"Id": "good2", "MessageBody": "fine too", "DelaySeconds": 0},
        ])
        self.assertEqual(sorted(e["Id"] for e in r["Successful"]), ["good", "good2"])
        self.assertEqual(len(r["Failed"]), 1, r["Failed"])
        self.assertEqual((r["Failed"][0]["Id"], r["Failed"][0]["Code"], r["Failed"][0]["SenderFault"]),
                         ("bad", "InvalidMessageContents", True))
        self.assertEqual(self.counts(url), (12, 0, 0))

        # 11 entries: the whole request refused, nothing enqueued.
        eleven = [{"Id": f"x{i}", "MessageBody": f"x {i}"} for i in range(11)]
        self.refused(self.sqs.send_message_batch, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
                     QueueUrl=url, Entries=eleven)
        self.refused(self.sqs.send_message_batch, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
                     QueueUrl=url, Entries=[{"Id": "d", "MessageBody": "1"}, {"Id": "d", "MessageBody": "2"}])
        self.assertEqual(self.counts(url), (12, 0, 0))
        listed = self.api(f"/queues/{name}/messages?limit=100")
        self.assertEqual(listed["count"], 12)

    # 4 ---------------------------------------------------------------------------------------
    def test_04_visibility_batch_and_delete_batch(self):
        name, url = self.queue("visibility")
        for i in range(3):
            self.sqs.send_message(QueueUrl=url, MessageBody=f"v{i}")
        got = self.receive_n(url, 3, VisibilityTimeout=300)
        self.assertEqual(self.counts(url), (0, 3, 0))
        self.assertEqual(self.sqs.receive_message(QueueUrl=url).get("Messages", []), [])

        r = self.sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
            {"Id": f"c{i}", "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0} for i, m in enumerate(got)])
        self.assertEqual(r.get("Failed", []), [])
        self.assertEqual(sorted(e["Id"] for e in r["Successful"]), ["c0", "c1", "c2"])
        start = time.monotonic()
        again = self.receive_n(url, 3, timeout=4, AttributeNames=["ApproximateReceiveCount"])
        self.assertLess(time.monotonic() - start, 3.5, "visible again within about a second")
        self.assertEqual({m["MessageId"] for m in again}, {m["MessageId"] for m in got})
        self.assertEqual({m["Attributes"]["ApproximateReceiveCount"] for m in again}, {"2"})

        # The first receive's handles are no longer current for a visibility change.
        stale = self.sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
            {"Id": "old", "ReceiptHandle": got[0]["ReceiptHandle"], "VisibilityTimeout": 10}])
        self.assertEqual([(f["Id"], f["Code"]) for f in stale.get("Failed", [])], [("old", "ReceiptHandleIsInvalid")])

        bad = base64.b64encode(b"no handle at all").decode()
        r = self.sqs.delete_message_batch(QueueUrl=url, Entries=[
            {"Id": "d0", "ReceiptHandle": again[0]["ReceiptHandle"]},
            {"Id": "bad", "ReceiptHandle": bad},
            {"Id": "d1", "ReceiptHandle": again[1]["ReceiptHandle"]},
            {"Id": "d2", "ReceiptHandle": again[2]["ReceiptHandle"]},
        ])
        self.assertEqual(sorted(e["Id"] for e in r["Successful"]), ["d0", "d1", "d2"])
        self.assertEqual(len(r["Failed"]), 1, r["Failed"])
        self.assertEqual((r["Failed"][0]["Id"], r["Failed"][0]["Code"], r["Failed"][0]["SenderFault"]),
                         ("bad", "ReceiptHandleIsInvalid", True))
        for m in again:
            self.assertEqual(self.api(f"/queues/{name}/messages/{m['MessageId']}")["status"], "succeeded")
        self.assertEqual(self.counts(url), (0, 0, 0))

    # 5 ---------------------------------------------------------------------------------------
    def test_05_redrive_policy_and_death(self):
        src_name, src = self.queue("src")
        dlq_name, dlq = self.queue("dlq")
        dlq_arn = self.arn(dlq)
        self.sqs.set_queue_attributes(QueueUrl=src, Attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"})})
        attrs = self.sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["All"])["Attributes"]
        self.assertIsInstance(attrs["RedrivePolicy"], str)
        self.assertEqual(json.loads(attrs["RedrivePolicy"]), {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2})
        self.assertIs(type(json.loads(attrs["RedrivePolicy"])["maxReceiveCount"]), int)
        self.assertEqual(self.sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"], [src])

        mid = self.sqs.send_message(QueueUrl=src, MessageBody="poison")["MessageId"]
        first = self.sqs.receive_message(QueueUrl=src, VisibilityTimeout=1, AttributeNames=["All"])["Messages"]
        self.assertEqual([(m["MessageId"], m["Attributes"]["ApproximateReceiveCount"]) for m in first], [(mid, "1")])
        second = self.sqs.receive_message(QueueUrl=src, VisibilityTimeout=1, WaitTimeSeconds=5,
                                          AttributeNames=["All"]).get("Messages", [])
        self.assertEqual([(m["MessageId"], m["Attributes"]["ApproximateReceiveCount"]) for m in second], [(mid, "2")])
        # Never deleted: when its second lease ends it dies instead of coming back.
        dead = wait_for("the message dead in /dlq?dead_letter_queue", lambda: [
            m for m in self.api(f"/dlq?dead_letter_queue={dlq_name}")["messages"] if str(m["id"]) == mid], timeout=10)
        self.assertEqual((dead[0]["queue"], dead[0]["status"], dead[0]["dead_reason"], dead[0]["last_error"]),
                         (src_name, "dead", "max_receive_count", "received 2 times without being deleted"))
        by_reason = self.api("/dlq?dead_reason=max_receive_count&limit=100")["messages"]
        self.assertIn(mid, [str(m["id"]) for m in by_reason])
        for m in by_reason:
            self.assertEqual(m["dead_reason"], "max_receive_count")
        self.assertEqual(self.api(f"/queues/{src_name}/messages/{mid}")["status"], "dead")
        self.assertEqual(self.sqs.receive_message(QueueUrl=src, WaitTimeSeconds=1).get("Messages", []), [])
        self.assertEqual(self.sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"], [src])

        # The DLQ cannot be deleted while a dead letter is stamped with it.
        self.refused(self.sqs.delete_queue, "InvalidParameterValue", QueueUrl=dlq)
        self.assertEqual(self.sqs.get_queue_url(QueueName=dlq_name)["QueueUrl"], dlq)

    def test_05b_redrive_policy_refusals_and_removal(self):
        _, src = self.queue("src")
        dlq_name, dlq = self.queue("dlq")
        dlq_arn = self.arn(dlq)
        src_arn = self.arn(src)
        _, denying = self.queue("deny")
        self.sqs.set_queue_attributes(QueueUrl=denying, Attributes={
            "RedriveAllowPolicy": json.dumps({"redrivePermission": "denyAll"})})
        deny_attrs = self.sqs.get_queue_attributes(QueueUrl=denying, AttributeNames=["RedriveAllowPolicy"])["Attributes"]
        self.assertEqual(json.loads(deny_attrs["RedriveAllowPolicy"])["redrivePermission"], "denyAll")

        def policy(target, count):
            return {"RedrivePolicy": json.dumps({"deadLetterTargetArn": target, "maxReceiveCount": count})}

        for what, attrs in [
            ("maxReceiveCount 0", policy(dlq_arn, 0)),
            ("maxReceiveCount 1001", policy(dlq_arn, 1001)),
            ("maxReceiveCount '1001'", policy(dlq_arn, "1001")),
            ("a target that does not exist", policy(f"arn:aws:sqs:{REGION}:{ACCOUNT}:{unique('nope')}", 3)),
            ("the queue itself", policy(src_arn, 3)),
            ("a target that denies all", policy(self.arn(denying), 3)),
        ]:
            with self.subTest(what):
                self.refused(self.sqs.set_queue_attributes, "InvalidParameterValue", QueueUrl=src, Attributes=attrs)
                got = self.sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["All"])["Attributes"]
                self.assertNotIn("RedrivePolicy", got)

        self.sqs.set_queue_attributes(QueueUrl=src, Attributes=policy(dlq_arn, 1000))
        got = self.sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["RedrivePolicy"])["Attributes"]
        self.assertEqual(json.loads(got["RedrivePolicy"])["maxReceiveCount"], 1000)
        self.assertEqual(self.sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"], [src])
        # "" removes the policy.
        self.sqs.set_queue_attributes(QueueUrl=src, Attributes={"RedrivePolicy": ""})
        got = self.sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["All"])["Attributes"]
        self.assertNotIn("RedrivePolicy", got)
        self.assertEqual(self.sqs.list_dead_letter_source_queues(QueueUrl=dlq).get("queueUrls", []), [])
        # With no dead letter stamped with it, the former DLQ can be deleted.
        self.sqs.delete_queue(QueueUrl=dlq)
        self.refused(self.sqs.get_queue_url, "AWS.SimpleQueueService.NonExistentQueue", QueueName=dlq_name)

    # 6 ---------------------------------------------------------------------------------------
    def test_06_typed_errors(self):
        name = unique("nope")
        with self.assertRaises(self.sqs.exceptions.QueueDoesNotExist) as cm:
            self.sqs.get_queue_url(QueueName=name)
        self.assertEqual(cm.exception.response["Error"]["Code"], "AWS.SimpleQueueService.NonExistentQueue")
        self.assertEqual(cm.exception.response["ResponseMetadata"]["HTTPStatusCode"], 400)
        with self.assertRaises(self.sqs.exceptions.QueueDoesNotExist):
            self.sqs.send_message(QueueUrl=f"{self.base}/{ACCOUNT}/{name}", MessageBody="x")
        with self.assertRaises(self.sqs.exceptions.QueueDoesNotExist):
            self.sqs.get_queue_attributes(QueueUrl=f"{self.base}/111111111111/{name}", AttributeNames=["All"])

        qname, url = self.queue("typed", VisibilityTimeout="40")
        with self.assertRaises(self.sqs.exceptions.QueueNameExists) as cm:
            self.sqs.create_queue(QueueName=qname, Attributes={"VisibilityTimeout": "41"})
        self.assertEqual(cm.exception.response["Error"]["Code"], "QueueAlreadyExists")
        self.assertEqual(self.sqs.create_queue(QueueName=qname, Attributes={"VisibilityTimeout": "40"})["QueueUrl"], url)
        with self.assertRaises(self.sqs.exceptions.ReceiptHandleIsInvalid):
            self.sqs.delete_message(QueueUrl=url, ReceiptHandle="bm90IGEgaGFuZGxl")
        with self.assertRaises(self.sqs.exceptions.InvalidAttributeName):
            self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["NoSuchAttribute"])
        self.refused(self.sqs.create_queue, "InvalidParameterValue", QueueName="bad.fifo")
        self.refused(self.sqs.receive_message, "InvalidParameterValue", QueueUrl=url, MaxNumberOfMessages=11)
        self.refused(self.sqs.set_queue_attributes, "InvalidAttributeValue", QueueUrl=url,
                     Attributes={"VisibilityTimeout": "99999"})

    def test_06b_raw_xml(self):
        def check_error(r, status, code, type_="Sender"):
            self.assertEqual(r.status, status, r.text)
            self.assertEqual(r.headers.get("Content-Type", "").split(";")[0], "text/xml", r.text)
            self.assertTrue(r.headers.get("x-amzn-RequestId"), dict(r.headers))
            t, c, msg, rid = error_of(r)
            self.assertEqual((t, c), (type_, code), r.text)
            self.assertTrue(msg, r.text)
            self.assertEqual(rid, r.headers.get("x-amzn-RequestId"), r.text)
            # The root names SQS's namespace exactly.
            self.assertIn(b'<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">', r.body)

        r = raw_query(self.base, "Action=GetQueueUrl&Version=2012-11-05&QueueName=nope")
        check_error(r, 400, "AWS.SimpleQueueService.NonExistentQueue")
        self.assertIn(b'<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type>'
                      b'<Code>AWS.SimpleQueueService.NonExistentQueue</Code>', r.body)
        check_error(raw_query(self.base, "Version=2012-11-05&QueueName=nope"), 400, "MissingAction")
        check_error(raw_query(self.base, "Action=FlyToTheMoon&Version=2012-11-05"), 400, "InvalidAction")
        check_error(raw_query(self.base, "Action=ListQueues&Version=2011-01-01"), 400, "InvalidParameterValue")

        # A success, and a request at a queue's URL without QueueUrl.
        name, url = self.queue("raw")
        r = raw_query(self.base, {"Action": "GetQueueUrl", "Version": "2012-11-05", "QueueName": name})
        self.assertEqual(r.status, 200, r.text)
        root = r.xml()
        self.assertEqual(root.tag, Q + "GetQueueUrlResponse")
        self.assertEqual(root.findtext(f"{Q}GetQueueUrlResult/{Q}QueueUrl"), url)
        self.assertEqual(root.findtext(f"{Q}ResponseMetadata/{Q}RequestId"), r.headers.get("x-amzn-RequestId"))
        r = raw_query(self.base, [("Action", "SendMessage"), ("Version", "2012-11-05"), ("MessageBody", "at its url"),
                                  ("MessageAttribute.1.Name", "n"), ("MessageAttribute.1.Value.DataType", "Number"),
                                  ("MessageAttribute.1.Value.StringValue", "5")], path=f"/{ACCOUNT}/{name}")
        self.assertEqual(r.status, 200, r.text)
        res = r.xml().find(f"{Q}SendMessageResult")
        self.assertEqual(res.findtext(f"{Q}MD5OfMessageBody"), md5_hex("at its url"))
        self.assertEqual(res.findtext(f"{Q}MD5OfMessageAttributes"),
                         md5_of_attributes({"n": {"DataType": "Number", "StringValue": "5"}}))
        r = raw_query(self.base, "Action=GetQueueAttributes&Version=2012-11-05&AttributeName.1=ApproximateNumberOfMessages",
                      path=f"/{ACCOUNT}/{name}")
        self.assertEqual(r.status, 200, r.text)
        attrs = {a.findtext(Q + "Name"): a.findtext(Q + "Value")
                 for a in r.xml().iterfind(f"{Q}GetQueueAttributesResult/{Q}Attribute")}
        self.assertEqual(attrs, {"ApproximateNumberOfMessages": "1"})

    # 7 ---------------------------------------------------------------------------------------
    def test_07_xml_round_trips(self):
        _, url = self.queue("xml")
        bodies = ["a & b < c > d ]]> e", "cr\ronly", "crlf\r\nline\nlf", "\U0010FFFF top of unicode \uFFFD\uE000",
                  "tab\there '\"quotes\"' &amp; &#xD; <![CDATA[x]]>", " leading and trailing spaces ", "\r"]
        attr_value = "v & <w> ]]> \r\n \U0010FFFF"
        attrs = {"x.y_z-1": {"DataType": "String", "StringValue": attr_value}}
        sent = {}
        for b in bodies:
            r = self.sqs.send_message(QueueUrl=url, MessageBody=b, MessageAttributes=attrs)
            self.assertEqual(r["MD5OfMessageBody"], md5_hex(b), repr(b))
            self.assertEqual(r["MD5OfMessageAttributes"], md5_of_attributes(attrs))
            sent[r["MessageId"]] = b
        got = self.receive_n(url, len(bodies), MessageAttributeNames=["All"])
        for m in got:
            b = sent[m["MessageId"]]
            self.assertEqual(m["Body"], b)
            self.assertEqual(m["MD5OfBody"], md5_hex(b), repr(b))
            self.assertEqual(m["MessageAttributes"], attrs)
            self.assertEqual(m["MD5OfMessageAttributes"], md5_of_attributes(attrs))
        # The raw answer escapes the markup and writes CR as a character reference (&#xD;), so that
        # any XML parser keeps it (a literal CR would be normalised to LF).
        _, raw_url = self.queue("xml-raw")
        body = "1 & 2 < 3 ]]> cr\r crlf\r\n \U0010FFFF"
        r = raw_query(self.base, {"Action": "SendMessage", "Version": "2012-11-05", "QueueUrl": raw_url,
                                  "MessageBody": body})
        self.assertEqual(r.status, 200, r.text)
        r = raw_query(self.base, {"Action": "ReceiveMessage", "Version": "2012-11-05", "QueueUrl": raw_url,
                                  "WaitTimeSeconds": "2"})
        self.assertEqual(r.status, 200, r.text)
        self.assertNotIn(b"\r", r.body)
        self.assertRegex(r.body, rb"&#[xX]0*[dD];")
        msgs = r.xml().findall(f"{Q}ReceiveMessageResult/{Q}Message")
        self.assertEqual(len(msgs), 1, r.text)
        self.assertEqual(msgs[0].findtext(Q + "Body"), body)
        self.assertEqual(msgs[0].findtext(Q + "MD5OfBody"), md5_hex(body))
        # A character outside SQS's set is refused.
        self.refused(self.sqs.send_message, "InvalidMessageContents", QueueUrl=url, MessageBody="nul \x00 here")

    # 8 ---------------------------------------------------------------------------------------
    def test_08_delay_and_long_poll(self):
        _, delayed = self.queue("delay")
        _, empty = self.queue("empty")
        # The empty long poll runs beside the delay checks (they take about as long).
        poll = {}

        def empty_poll():
            c = client(self.base)
            t0 = time.monotonic()
            poll["messages"] = c.receive_message(QueueUrl=empty, WaitTimeSeconds=5).get("Messages", [])
            poll["elapsed"] = time.monotonic() - t0

        poller = threading.Thread(target=empty_poll)
        poller.start()
        try:
            mid = self.sqs.send_message(QueueUrl=delayed, MessageBody="later", DelaySeconds=2)["MessageId"]
            sent_at = time.monotonic()
            self.assertEqual(self.counts(delayed), (0, 0, 1))
            self.assertEqual(self.sqs.receive_message(QueueUrl=delayed).get("Messages", []), [])
            got = self.sqs.receive_message(QueueUrl=delayed, WaitTimeSeconds=5).get("Messages", [])
            waited = time.monotonic() - sent_at
            self.assertEqual([m["MessageId"] for m in got], [mid])
            self.assertGreaterEqual(waited, 1.5, "not before its delay")
            self.assertLess(waited, 4.5, "received soon after its delay")
        finally:
            poller.join(15)
        self.assertEqual(poll.get("messages"), [], poll)
        self.assertTrue(4.0 <= poll["elapsed"] <= 8.0, f"an empty WaitTimeSeconds 5 took {poll['elapsed']:.2f} s")

        # A long poll woken by a send.
        _, woken = self.queue("woken")
        res = {}

        def waiter():
            c = client(self.base)
            res["messages"] = c.receive_message(QueueUrl=woken, WaitTimeSeconds=10).get("Messages", [])
            res["at"] = time.monotonic()

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.7)  # let the poll reach dlqd (it does not answer early on an empty queue)
        self.assertNotIn("at", res, "the long poll answered before anything was sent")
        sent_at = time.monotonic()
        mid = self.sqs.send_message(QueueUrl=woken, MessageBody="wake up")["MessageId"]
        t.join(15)
        self.assertEqual([m["MessageId"] for m in res["messages"]], [mid])
        self.assertLess(res["at"] - sent_at, 1.5, "woken within about a second of the send")

    # 10 --------------------------------------------------------------------------------------
    def cli(self, *args, check=True):
        home = self._cli_home
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({
            "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": "anonymous-front",
            "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
            "AWS_PAGER": "", "AWS_EC2_METADATA_DISABLED": "true", "HOME": home,
        })
        p = subprocess.run([AWS_CLI, "--endpoint-url", self.base, "--region", REGION, "--output", "json", "sqs", *args],
                           env=env, capture_output=True, text=True, timeout=60)
        if check:
            self.assertEqual(p.returncode, 0, f"aws sqs {' '.join(args)}: {p.stderr}")
            return json.loads(p.stdout) if p.stdout.strip() else None
        return p

    def test_10_aws_cli(self):
        name = unique("cli")
        fresh = unique("cli-defaults")
        unknown = unique("cli-nope")
        self._cli_home = temp_dir()  # the CLI's HOME: nothing of ~/.aws is read or written
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
        try:
            # The refusals run beside the round trip.
            nonexistent = pool.submit(self.cli, "get-queue-url", "--queue-name", unknown, check=False)
            url = self.cli("create-queue", "--queue-name", name)["QueueUrl"]
            self.assertEqual(url, f"{self.base}/{ACCOUNT}/{name}")
            bad_name = pool.submit(self.cli, "create-queue", "--queue-name", "bad.fifo", check=False)
            sent = self.cli("send-message", "--queue-url", url, "--message-body", "from the CLI & <co>",
                            "--message-attributes", '{"k": {"DataType": "String", "StringValue": "v"}}')
            self.assertEqual(sent["MD5OfMessageBody"], md5_hex("from the CLI & <co>"))
            self.assertEqual(sent["MD5OfMessageAttributes"],
                             md5_of_attributes({"k": {"DataType": "String", "StringValue": "v"}}))
            too_many = pool.submit(self.cli, "receive-message", "--queue-url", url, "--max-number-of-messages", "11",
                                   check=False)
            got = self.cli("receive-message", "--queue-url", url, "--wait-time-seconds", "2",
                           "--attribute-names", "All", "--message-attribute-names", "All")["Messages"]
            self.assertEqual([(m["MessageId"], m["Body"]) for m in got], [(sent["MessageId"], "from the CLI & <co>")])
            self.assertEqual(got[0]["MessageAttributes"], {"k": {"DataType": "String", "StringValue": "v"}})
            self.assertEqual(got[0]["Attributes"]["ApproximateReceiveCount"], "1")
            fresh_url = self.sqs.create_queue(QueueName=fresh)["QueueUrl"]
            defaults = pool.submit(self.cli, "get-queue-attributes", "--queue-url", fresh_url, "--attribute-names", "All")
            self.assertIsNone(self.cli("delete-message", "--queue-url", url, "--receipt-handle", got[0]["ReceiptHandle"]))
            self.assertEqual(self.api(f"/queues/{name}/messages/{sent['MessageId']}")["status"], "succeeded")

            attrs = defaults.result()["Attributes"]
            expected = {
                "VisibilityTimeout": "30", "DelaySeconds": "0", "ReceiveMessageWaitTimeSeconds": "0",
                "MessageRetentionPeriod": "345600", "MaximumMessageSize": "262144",
                "QueueArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{fresh}",
                "ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0",
                "ApproximateNumberOfMessagesDelayed": "0",
            }
            self.assertEqual({k: attrs.get(k) for k in expected}, expected, attrs)
            now = time.time()
            for k in ("CreatedTimestamp", "LastModifiedTimestamp"):
                self.assertLess(abs(int(attrs[k]) - now), 120, attrs)
            self.assertNotIn("RedrivePolicy", attrs)

            for what, fut, code in [("get-queue-url of an unknown name", nonexistent, "NonExistentQueue"),
                                    ("create-queue bad.fifo", bad_name, "InvalidParameterValue"),
                                    ("receive-message --max-number-of-messages 11", too_many, "InvalidParameterValue")]:
                with self.subTest(what):
                    p = fut.result()
                    self.assertEqual(p.returncode, 254, f"{what}: {p.stdout} {p.stderr}")
                    self.assertRegex(p.stderr, rf"An error occurred \((AWS\.SimpleQueueService\.)?{code}\)", p.stderr)
        finally:
            pool.shutdown(wait=True)


class KeyedScenarios:
    """SigV4 with sqs.access_keys: a second dlqd per database, every request signed."""

    DB = None

    @classmethod
    def setUpClass(cls):
        cls.key_id = "AKIA" + secrets.token_hex(8).upper()
        cls.secret = base64.b64encode(secrets.token_bytes(30)).decode()
        d = temp_dir()
        secret_file = os.path.join(d, "ops.sqs-secret")
        fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(cls.secret + "\n")  # dlqd strips one trailing newline
        os.chmod(secret_file, 0o600)
        config = {"sqs": {"region": REGION, "account_id": ACCOUNT, "access_keys": [
            {"name": "ops", "access_key_id": cls.key_id, "secret_file": secret_file, "roles": ["admin"]}]}}
        cls.dlqd = Dlqd(cls.DB, config, dir=d)
        cls.base = cls.dlqd.url

    @classmethod
    def tearDownClass(cls):
        close_clients()
        cls.dlqd.stop()

    def setUp(self):
        self._t0 = time.monotonic()

    def tearDown(self):
        if os.environ.get("DLQ_TEST_TIMES"):
            print(f" [{time.monotonic() - self._t0:.1f} s]", end=" ", file=sys.stderr)
        self.dlqd.alive_or_fail()

    def test_09_sigv4(self):
        good = client(self.base, self.key_id, self.secret)
        name = unique("signed")
        url = good.create_queue(QueueName=name)["QueueUrl"]
        body = "signed & sent: ünïcode \r\n"
        sent = good.send_message(QueueUrl=url, MessageBody=body,
                                 MessageAttributes={"a": {"DataType": "String", "StringValue": "x y+z=%"}})
        self.assertEqual(sent["MD5OfMessageBody"], md5_hex(body))
        got = good.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageAttributeNames=["All"])["Messages"]
        self.assertEqual([m["Body"] for m in got], [body])
        good.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
        self.assertEqual(good.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                                                   "ApproximateNumberOfMessagesNotVisible"])["Attributes"],
                         {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"})

        wrong = client(self.base, self.key_id, self.secret + "x")
        other = unique("wrong-secret")
        with self.assertRaises(ClientError) as cm:
            wrong.create_queue(QueueName=other)
        err = cm.exception.response
        self.assertEqual((err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]), ("SignatureDoesNotMatch", 403), err)
        self.assertEqual(err["Error"].get("Type"), "Sender", err)
        with self.assertRaises(ClientError) as cm:
            client(self.base, "AKIA" + secrets.token_hex(8).upper(), self.secret).get_queue_url(QueueName=name)
        self.assertEqual(cm.exception.response["Error"]["Code"], "InvalidClientTokenId")
        with self.assertRaises(good.exceptions.QueueDoesNotExist):
            good.get_queue_url(QueueName=other)  # the refused create left nothing

        # Unsigned: a form body without Authorization.
        r = raw_query(self.base, {"Action": "CreateQueue", "Version": "2012-11-05", "QueueName": other})
        self.assertEqual(r.status, 403, r.text)
        self.assertEqual(r.headers.get("Content-Type", "").split(";")[0], "text/xml", r.text)
        self.assertIsNone(r.headers.get("WWW-Authenticate"), "no Bearer challenge on the SQS front")
        t, code, msg, rid = error_of(r)
        self.assertEqual((t, code), ("Sender", "MissingAuthenticationToken"), r.text)
        self.assertTrue(msg)
        self.assertEqual(rid, r.headers.get("x-amzn-RequestId"))
        r = raw_query(self.base, {"Action": "ListQueues", "Version": "2012-11-05"},
                      headers={"Authorization": "Bearer some-token"})
        self.assertEqual((r.status, error_of(r)[1]), (403, "MissingAuthenticationToken"), r.text)
        with self.assertRaises(good.exceptions.QueueDoesNotExist):
            good.get_queue_url(QueueName=other)
        # The secret appears in no log line.
        self.assertNotIn(self.secret, tail(self.dlqd.log_file, 10 ** 7))


class QueryProtocolSqlite(Scenarios, unittest.TestCase):
    DB = "sqlite"


class QueryProtocolPostgres(Scenarios, unittest.TestCase):
    DB = "postgres"


class SigV4Sqlite(KeyedScenarios, unittest.TestCase):
    DB = "sqlite"


class SigV4Postgres(KeyedScenarios, unittest.TestCase):
    DB = "postgres"


if __name__ == "__main__":
    # botocore 1.29 speaks the query protocol to SQS; a newer one (JSON) would test something else.
    assert boto3.client("sqs", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="y") \
        .meta.service_model.protocol == "query", f"botocore {botocore.__version__} does not speak SQS's query protocol"
    unittest.main(verbosity=2)

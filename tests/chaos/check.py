#!/usr/bin/env python3
"""The history checker of scripts/chaos.sh: Jepsen's total-queue, for dlq.

Reads the histories `dlq-bench chaos_load` wrote (one JSON line per call: op, request_id, args,
invoked_ms, completed_ms, outcome ok/fail/info, status, result), dlqd's logs (for the calls lost in
COMMIT, logged `database unavailable` with `ambiguous`) and the database after the run, and prints

  ok N fail N info N ambiguous N recovered N | lost N unexpected N duplicated N undone N
  stale_accepted N replayed_twice N audit_missing N stuck N

A count after `|` above 0 is a broken promise: exit 1, with up to five examples of each on stderr
(exit 2: the checker could not read its inputs).
  lost            an acknowledged enqueue whose message is not in the database (and could not
                  have been purged: only succeeded messages are, and only a succeed makes one)
  unexpected      a message no enqueue made, or one that only refused enqueues could have made;
                  a refused succeed, fail or replay whose change is there all the same; a
                  status dlq does not know
  duplicated      one enqueue stored twice; a message with two `succeeded` entries
  undone          an acknowledged change missing from the history: succeed, ack, fail, release,
                  effect, replay, dismiss, a batch run, a batch dismissal
  stale_accepted  a call accepted under a lease the history shows was lost: a succeed or fail
                  whose attempt ended otherwise, an extend of an attempt that had already expired
  replayed_twice  a message replayed twice by one call or one batch run
  audit_missing   an acknowledged admin action without exactly one audit entry (or any call
                  with two; a purge: entries, one per batch, that do not add up to its answer)
  stuck           `processing` past its lease once the reaper had its chance

`--selftest` (SQLite) doctors a copy of the database once per count and checks that each
doctored history trips its own count.

  check.py --db URL --history FILE [--history FILE ...] [--log FILE ...] [--queue Q]
           [--checked-at MS] [--selftest]
"""
import argparse
import collections
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

VIOLATIONS = ["lost", "unexpected", "duplicated", "undone", "stale_accepted", "replayed_twice",
              "audit_missing", "stuck"]
SUCCEED_LIKE = ("succeed", "ack")


def query(db, sql):
    """Rows of one query as dicts, from SQLite (read-only) or PostgreSQL (psql, JSON)."""
    if db.startswith("sqlite:"):
        con = sqlite3.connect("file:%s?mode=ro" % db[len("sqlite:"):], uri=True, timeout=30)
        con.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in con.execute(sql)]
        finally:
            con.close()
    out = subprocess.run(
        ["psql", "-qAt", db, "-c", "SELECT coalesce(json_agg(t), '[]') FROM (%s) t" % sql],
        check=True, capture_output=True, text=True,
        env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning")).stdout
    return json.loads(out)


class Database:
    def __init__(self, db, queue):
        self.messages = {r["id"]: r for r in query(
            db, "SELECT id, status, payload, lease_expires_at FROM messages WHERE queue = '%s'" % queue)}
        self.attempts = collections.defaultdict(list)
        for r in query(db, "SELECT message_id, attempt, outcome, reason, replay_id, finished_at, count "
                           "FROM attempts ORDER BY id"):
            if r["message_id"] in self.messages:
                self.attempts[r["message_id"]].append(r)
        self.audit = query(db, "SELECT action, reason, filter, details FROM audit_log")
        self.runs = {r["id"] for r in query(db, "SELECT id FROM replay_runs")}
        self.run_items = query(db, "SELECT run_id, message_id FROM replay_run_items")
        self.effects = {(r["message_id"], r["effect_key"])
                        for r in query(db, "SELECT message_id, effect_key FROM effects")}


def read_history(paths):
    calls, torn = [], 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    calls.append(json.loads(line))
                except ValueError:
                    torn += 1  # a line cut short: the load was killed while writing it
    return calls, torn


def ambiguous_ids(paths):
    """Request ids dlqd logged as lost in COMMIT: refused with a 503 that may have happened."""
    ids = set()
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if "database unavailable" not in line or "ambiguous" not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("ambiguous") in (True, "true") and entry.get("request_id"):
                    ids.add(entry["request_id"])
    return ids


def check(calls, d, ambiguous, checked_at):
    counts = collections.Counter({k: 0 for k in ["ok", "fail", "info", "ambiguous", "recovered"] + VIOLATIONS})
    examples = collections.defaultdict(list)

    def bad(kind, what):
        counts[kind] += 1
        if len(examples[kind]) < 5:
            examples[kind].append(what)

    for c in calls:
        counts[c["outcome"]] += 1
        c["maybe"] = c["outcome"] == "info" or c["request_id"] in ambiguous
        if c["maybe"]:
            counts["ambiguous"] += 1
    refused = lambda c: c["outcome"] == "fail" and not c["maybe"]
    recovered = lambda c, found: counts.update(["recovered"]) if c["maybe"] and found else None

    # Messages by the token their enqueue put in the payload.
    rows_by_n = collections.defaultdict(list)
    for m in d.messages.values():
        try:
            rows_by_n[json.loads(m["payload"]).get("n")].append(m["id"])
        except (ValueError, AttributeError):
            rows_by_n[None].append(m["id"])

    # Which messages a succeed was sent for, and whether a purge ran: a succeeded message may go.
    succeed_sent = set()
    for c in calls:
        if c["op"] in SUCCEED_LIKE:
            succeed_sent.add(c["args"]["id"])
        elif c["op"] == "claim":
            succeed_sent.update(a["id"] for a in c["args"].get("ack", []))
    purged = any(c["op"] == "purge" and not refused(c) for c in calls)
    may_be_gone = lambda mid: purged and mid in succeed_sent

    # Enqueues: nothing acknowledged lost, nothing made twice, nothing from nowhere.
    enqueues = collections.defaultdict(list)  # n -> [(call, id or None)]
    for c in calls:
        if c["op"] == "enqueue":
            enqueues[c["args"]["n"]].append((c, c.get("result", {}).get("id")))
        elif c["op"] == "enqueue_batch":
            ids = c.get("result", {}).get("ids", [None] * len(c["args"]["ns"]))
            for n, mid in zip(c["args"]["ns"], ids):
                enqueues[n].append((c, mid))
    for n, made in enqueues.items():
        rows = rows_by_n.get(n, [])
        for c, mid in made:
            if c["outcome"] == "ok" and mid not in rows and not may_be_gone(mid):
                bad("lost", "enqueue %s (%s) answered id %s, not in the database" % (n, c["request_id"], mid))
            recovered(c, bool(rows))
        if len(rows) > 1:
            bad("duplicated", "enqueue %s stored as messages %s" % (n, rows))
    for m in d.messages.values():
        if m["status"] not in ("pending", "processing", "succeeded", "dead", "dismissed"):
            bad("unexpected", "message %s has the unknown status %r" % (m["id"], m["status"]))
    for n, rows in rows_by_n.items():
        made = enqueues.get(n)
        if not made:
            bad("unexpected", "messages %s (token %s): no enqueue sent it" % (rows, n))
        elif all(refused(c) for c, _ in made):
            bad("unexpected", "messages %s: every enqueue of %s was refused" % (rows, n))
    for mid, history in d.attempts.items():
        if sum(1 for a in history if a["outcome"] == "succeeded") > 1:
            bad("duplicated", "message %s succeeded twice" % mid)

    def attempt_row(mid, k):
        rows = [a for a in d.attempts.get(mid, []) if a["attempt"] == k and a["outcome"] not in ("replayed", "dismissed")]
        return rows[-1] if rows else None

    # Attempts: every acknowledged end of an attempt is in the history, under a lease still held.
    def ended(c, mid, k, expect, label):
        row = attempt_row(mid, k)
        if c["outcome"] == "ok":
            if row is None:
                if not (mid not in d.messages and may_be_gone(mid)):
                    bad("undone", "%s of message %s attempt %s (%s) acknowledged, not in its history" % (label, mid, k, c["request_id"]))
            elif row["outcome"] != expect:
                bad("stale_accepted", "%s of message %s attempt %s (%s) acknowledged; the attempt ended %s" % (label, mid, k, c["request_id"], row["outcome"]))
        elif refused(c) and row is not None and row["outcome"] == expect:
            bad("unexpected", "%s of message %s attempt %s (%s) refused (%s), made all the same" % (label, mid, k, c["request_id"], c["status"]))
        else:
            recovered(c, row is not None and row["outcome"] == expect)

    def as_item(c, item_ok):
        """One acknowledgement of a call that carries several: ok only with its own 200; an answered
        call's other items were refused; an unanswered call's stay unknown."""
        return dict(c, outcome="ok" if item_ok else ("fail" if c["outcome"] == "ok" else c["outcome"]))

    for c in calls:
        op, args = c["op"], c["args"]
        if op == "succeed":
            ended(c, args["id"], args["attempt"], "succeeded", "succeed")
        elif op == "ack":
            ended(as_item(c, c.get("result", {}).get("item_status") == 200), args["id"], args["attempt"],
                  "succeeded", "ack")
        elif op == "claim":
            acked = c.get("result", {}).get("acked", [])
            for i, a in enumerate(args.get("ack", [])):
                item_ok = i < len(acked) and acked[i].get("status") == 200
                ended(as_item(c, item_ok), a["id"], a["attempt"], "succeeded", "ack in claim")
        elif op == "fail":
            ended(c, args["id"], args["attempt"], "failed", "fail")
        elif op == "release" and c["outcome"] == "ok":
            mid, k = args["id"], args["attempt"]
            # Releases in a row share one entry: its attempt is the last one's, its count theirs.
            released = [a for a in d.attempts.get(mid, []) if a["outcome"] == "released"
                        and a["attempt"] - a["count"] < k <= a["attempt"]]
            other = attempt_row(mid, k)
            if other is not None and other["outcome"] != "released":
                bad("stale_accepted", "release of message %s attempt %s (%s) acknowledged; the attempt ended %s" % (mid, k, c["request_id"], other["outcome"]))
            elif not released and not (mid not in d.messages and may_be_gone(mid)):
                bad("undone", "release of message %s attempt %s (%s) acknowledged, not in its history" % (mid, k, c["request_id"]))
        elif op == "extend" and c["outcome"] == "ok":
            row = attempt_row(args["id"], args["attempt"])
            if row is not None and row["outcome"] == "lease_expired" and row["finished_at"] < c["invoked_ms"]:
                bad("stale_accepted", "extend of message %s attempt %s (%s) acknowledged after its lease expired" % (args["id"], args["attempt"], c["request_id"]))
        elif op == "effect":
            found = (args["id"], args["key"]) in d.effects
            if c["outcome"] == "ok" and not found and not (args["id"] not in d.messages and may_be_gone(args["id"])):
                bad("undone", "effect %s of message %s (%s) acknowledged, not stored" % (args["key"], args["id"], c["request_id"]))
            recovered(c, found)

    # Admin actions: each leaves its history entries and exactly one audit entry.
    audit_by_reason = collections.Counter(e["reason"] for e in d.audit if e["reason"])
    # A purge writes one entry per batch it deletes: together they must count what it answered.
    purge_audits = collections.defaultdict(list)
    for e in d.audit:
        if e["action"] == "purge" and e["filter"]:
            purge_audits[json.loads(e["filter"]).get("before")].append(json.loads(e["details"] or "{}").get("purged", 0))
    events_by_reason = collections.defaultdict(list)
    for mid, history in d.attempts.items():
        for a in history:
            if a["outcome"] in ("replayed", "dismissed") and a["reason"]:
                events_by_reason[a["reason"]].append((mid, a))
    for c in calls:
        op, args = c["op"], c["args"]
        if op not in ("replay", "dismiss", "batch_replay", "batch_dismiss", "purge"):
            continue
        if op == "purge":
            batches = purge_audits.get(args["before"], [])
            answered = c.get("result", {}).get("purged")
            if c["outcome"] == "ok" and answered and sum(batches) != answered:
                bad("audit_missing", "purge (%s) answered %s purged, its audit entries count %s" % (c["request_id"], answered, sum(batches)))
            recovered(c, bool(batches))
            continue
        entries = audit_by_reason.get(args["reason"], 0)
        if (c["outcome"] == "ok" and entries != 1) or entries > 1:
            bad("audit_missing", "%s %s (%s): %d audit entries" % (op, c["outcome"], c["request_id"], entries))
        events = events_by_reason.get(args["reason"], [])
        if op in ("replay", "dismiss"):
            mine = [a for mid, a in events if mid == args["id"]]
            if op == "replay" and len(mine) > 1:
                bad("replayed_twice", "message %s replayed %d times by %s" % (args["id"], len(mine), c["request_id"]))
            if c["outcome"] == "ok" and not mine and args["id"] in d.messages:
                bad("undone", "%s of message %s (%s) acknowledged, not in its history" % (op, args["id"], c["request_id"]))
            if refused(c) and mine:
                bad("unexpected", "%s of message %s (%s) refused (%s), made all the same" % (op, args["id"], c["request_id"], c["status"]))
            recovered(c, bool(mine))
        elif op == "batch_replay":
            run = c.get("result", {}).get("replay_id")
            if c["outcome"] == "ok" and run not in d.runs:
                bad("undone", "batch replay %s (%s) acknowledged, no such run" % (run, c["request_id"]))
            recovered(c, entries > 0)
        else:
            dismissed = len(events)
            if c["outcome"] == "ok" and dismissed < c.get("result", {}).get("dismissed", 0):
                bad("undone", "batch dismissal %s answered %s, %d in the history" % (c["request_id"], c["result"]["dismissed"], dismissed))
            if refused(c) and dismissed:
                bad("unexpected", "batch dismissal %s refused (%s), made all the same" % (c["request_id"], c["status"]))
            recovered(c, dismissed > 0)
    # A batch run replays each of its messages at most once.
    per_run = collections.Counter()
    for mid, history in d.attempts.items():
        for a in history:
            if a["outcome"] == "replayed" and a["replay_id"] is not None:
                per_run[(a["replay_id"], mid)] += 1
    for (run, mid), n in per_run.items():
        if n > 1:
            bad("replayed_twice", "message %s replayed %d times by run %s" % (mid, n, run))
    items = collections.Counter((r["run_id"], r["message_id"]) for r in d.run_items)
    for (run, mid), n in items.items():
        if n > 1:
            bad("replayed_twice", "message %s listed %d times in run %s" % (mid, n, run))

    for m in d.messages.values():
        if m["status"] == "processing" and (m["lease_expires_at"] or 0) < checked_at - 1000:
            bad("stuck", "message %s processing, its lease ran out at %s" % (m["id"], m["lease_expires_at"]))
    return counts, examples


def report(counts):
    left = " ".join("%s %d" % (k, counts[k]) for k in ["ok", "fail", "info", "ambiguous", "recovered"])
    right = " ".join("%s %d" % (k, counts[k]) for k in VIOLATIONS)
    return "%s | %s" % (left, right)


def selftest(args, calls, ambiguous):
    """Doctors a copy of the SQLite database once per count; each must trip its count."""
    src = args.db[len("sqlite:"):]
    ok = lambda op: [c for c in calls if c["op"] == op and c["outcome"] == "ok"]
    d = Database(args.db, args.queue)
    never_succeeded = [c["result"]["id"] for c in ok("enqueue") if c["result"]["id"] in d.messages
                       and d.messages[c["result"]["id"]]["status"] != "succeeded"]
    succeeds = [c for c in ok("succeed") if c["args"]["id"] in d.messages]
    replays = [c for c in ok("replay") if c["args"]["id"] in d.messages]
    if not never_succeeded or not succeeds or not replays:
        sys.exit("selftest: the history holds too little to doctor (no enqueue, succeed or replay)")
    s, r = succeeds[0]["args"], replays[0]["args"]
    doctors = {
        "lost": "DELETE FROM messages WHERE id = %d" % never_succeeded[0],
        "unexpected": "INSERT INTO messages (queue, payload, status, max_retries, created_at, updated_at, "
                      "life_started_at, status_at) VALUES ('%s', '{\"n\":\"doctored\"}', 'pending', 1, 0, 0, 0, 0)" % args.queue,
        "duplicated": "INSERT INTO attempts (message_id, attempt, outcome, finished_at) VALUES (%d, 99, 'succeeded', 0)" % s["id"],
        "undone": "DELETE FROM attempts WHERE message_id = %d AND attempt = %d" % (s["id"], s["attempt"]),
        "stale_accepted": "UPDATE attempts SET outcome = 'lease_expired' WHERE message_id = %d AND attempt = %d" % (s["id"], s["attempt"]),
        "replayed_twice": "INSERT INTO attempts (message_id, attempt, outcome, finished_at, reason) "
                          "SELECT message_id, attempt, outcome, finished_at, reason FROM attempts "
                          "WHERE message_id = %d AND reason = '%s'" % (r["id"], r["reason"]),
        "audit_missing": "DELETE FROM audit_log WHERE reason = '%s'" % r["reason"],
        "stuck": "UPDATE messages SET status = 'processing', lease_expires_at = 1 WHERE id = %d" % never_succeeded[0],
    }
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kind, sql in doctors.items():
            copy = os.path.join(tmp, "doctored.db")
            con = sqlite3.connect(src)
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            dst = sqlite3.connect(copy)
            con.backup(dst)
            con.close()
            dst.execute(sql)
            dst.commit()
            dst.close()
            counts, _ = check([dict(c) for c in calls], Database("sqlite:" + copy, args.queue), ambiguous,
                              args.checked_at)
            tripped = counts[kind] > 0
            print("selftest %-15s %s  (%s)" % (kind, "tripped" if tripped else "NOT TRIPPED", report(counts)))
            failed += 0 if tripped else 1
            os.remove(copy)
    if failed:
        sys.exit("selftest: %d doctored histories passed the checker" % failed)
    print("selftest: each of the %d doctored histories tripped its count" % len(doctors))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--db", required=True, help="sqlite:PATH or postgresql://…")
    p.add_argument("--history", action="append", required=True)
    p.add_argument("--log", action="append", default=[], help="dlqd's log (stderr), for ambiguous 503s")
    p.add_argument("--queue", default="chaos")
    p.add_argument("--checked-at", type=int, default=int(time.time() * 1000),
                   help="ms since the epoch when the reaper had had its chance (default: now)")
    p.add_argument("--selftest", action="store_true")
    args = p.parse_args()
    calls, torn = read_history(args.history)
    ambiguous = ambiguous_ids(args.log)
    if args.selftest:
        if not args.db.startswith("sqlite:"):
            sys.exit("--selftest doctors a SQLite database")
        selftest(args, calls, ambiguous)
        return
    counts, examples = check(calls, Database(args.db, args.queue), ambiguous, args.checked_at)
    for kind in VIOLATIONS:
        for what in examples.get(kind, []):
            print("%s: %s" % (kind, what), file=sys.stderr)
    if torn:
        print("(%d history lines cut short, skipped)" % torn, file=sys.stderr)
    print(report(counts))
    sys.exit(1 if any(counts[k] for k in VIOLATIONS) else 0)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception:  # the checker's own failure is not a verdict: exit 2, not 1
        import traceback
        traceback.print_exc()
        sys.exit(2)

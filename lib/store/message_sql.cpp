// The statements that change messages, each beside its named binds, and the transitions built
// on them: read under a lock, let the core decide, write the row with its history.
#include "store/message_sql.hpp"

#include <algorithm>
#include <stdexcept>

#include "store/audit_sql.hpp"
#include "store/effect_sql.hpp"
#include "store/incident_sql.hpp"
#include "store/message_group_sql.hpp"
#include "store/message_row.hpp"
#include "store/pg_listener.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

const std::string kColumns = kMessageColumns;

// The message a transition reads, locked until the transaction ends.
struct SelectForUpdate {
  MessageRow row;
  long long id = 0;
  std::string queue;

  static std::string sql(const Dialect& d) {
    return "SELECT " + kColumns + " FROM messages WHERE id = :id AND queue = :queue" + d.for_update;
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(id, "id"));
    st.exchange(use(queue, "queue"));
  }
};

// The statuses of the other messages of a queue that share a key.
struct KeyHolders {
  std::string status, queue, key;
  long long id = 0;

  static std::string sql(const Dialect&) {
    return "SELECT status FROM messages WHERE queue = :queue AND idempotency_key = :key "
           "AND id <> :id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(status));
    st.exchange(use(queue, "queue"));
    st.exchange(use(key, "key"));
    st.exchange(use(id, "id"));
  }
};

struct UpdateMessage {
  MessageUpdateRow row;

  static std::string sql(const Dialect&) { return MessageUpdateRow::kSql; }
  void exchange(soci::statement& st, const Dialect&) { row.exchange_use(st); }
};

// PostgreSQL: the UPDATE and one history entry in one statement (a data-modifying WITH).
struct UpdateWithAttempt {
  MessageUpdateRow row;
  AttemptRow attempt;

  static std::string sql(const Dialect&) {
    return std::string("WITH updated AS (") + MessageUpdateRow::kSql + ") " +
           AttemptRow::kInsertSql;
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_use(st);
    attempt.exchange_use(st);
  }
};

struct InsertAttempt {
  AttemptRow attempt;

  static std::string sql(const Dialect&) { return AttemptRow::kInsertSql; }
  void exchange(soci::statement& st, const Dialect&) { attempt.exchange_use(st); }
};

// A message's latest history entry, with its row id (read under the message's lock).
struct LastAttempt {
  long long entry_id = 0;
  AttemptRow attempt;
  long long message_id = 0;

  static std::string sql(const Dialect&) {
    return std::string("SELECT id, ") + AttemptRow::kColumns +
           " FROM attempts WHERE message_id = :message_id ORDER BY id DESC LIMIT 1";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(entry_id));
    attempt.exchange_into(st);
    st.exchange(use(message_id, "message_id"));
  }
};

// A folded release: the entry it joins takes the latest attempt's number, finish and worker and
// the new count (its claimed_at stays the first one's; core::release decides all four).
struct FoldAttempt {
  long long entry_id = 0, attempt = 0, finished_at = 0, count = 0;
  std::optional<long long> claimed_at;
  std::optional<std::string> worker, worker_version;

  static std::string sql(const Dialect&) {
    return "UPDATE attempts SET attempt = :attempt, claimed_at = :claimed_at, "
           "finished_at = :finished_at, worker = :worker, worker_version = :worker_version, "
           "count = :count WHERE id = :entry_id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(attempt, "attempt"));
    st.exchange(use(claimed_at, "claimed_at"));
    st.exchange(use(finished_at, "finished_at"));
    st.exchange(use(worker, "worker"));
    st.exchange(use(worker_version, "worker_version"));
    st.exchange(use(count, "count"));
    st.exchange(use(entry_id, "entry_id"));
  }
};

// Processing messages whose lease expired, oldest expiry first; PostgreSQL skips those another
// node is reaping.
struct SelectExpired {
  MessageRow row;
  long long now = 0, limit = 0;

  static std::string sql(const Dialect& d) {
    return "SELECT " + kColumns + " FROM messages WHERE status = 'processing' "
           "AND lease_expires_at <= :now ORDER BY lease_expires_at LIMIT :limit" +
           d.for_update_skip_locked;
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(now, "now"));
    st.exchange(use(limit, "limit"));
  }
};

}  // namespace

struct MessageSql::Statements {
  Prepared<SelectForUpdate> select_for_update;
  Prepared<KeyHolders> key_holders;
  Prepared<UpdateMessage> update;
  Prepared<UpdateWithAttempt> update_with_attempt;
  Prepared<InsertAttempt> insert_attempt;
  Prepared<LastAttempt> last_attempt;
  Prepared<FoldAttempt> fold_attempt;
  Prepared<SelectExpired> expired;
};

MessageSql::MessageSql(Connection& c, AuditSql& audit, QueueNamesSql& names,
                       IncidentSql& incidents, EffectSql& effects, std::string node)
    : c_(c),
      audit_(audit),
      incidents_(incidents),
      effects_(effects),
      inserts_(c, names),
      group_(std::make_unique<MessageGroupSql>(
          c, [this](const Message& m, const AttemptRecord& a) { write_with_history(m, a); })),
      node_(std::move(node)),
      kept_(std::make_unique<Statements>()) {}

MessageSql::~MessageSql() = default;

void MessageSql::insert_later(InsertParams p) {
  // One stored now (a keyed enqueue reads the key's other holders) sees the rows as they are.
  if (!inserts_.waits(p)) group_->write_waiting();
  inserts_.insert_later(std::move(p), [this](const Message& m) { note_due(m); });
}

// ---- transitions -----------------------------------------------------------------------------

// Every entry is written with the life it belongs to: the replay_count the change leaves (a
// `replayed` entry opens the life its replay begins). One place, so no transition can forget it.
void MessageSql::stamp_life(Change& change) {
  for (auto& entry : change.history) entry.life = change.next.replay_count;
}

void MessageSql::append_entry(const Message& m, AttemptRecord entry) {
  group_->write_waiting();
  entry.life = m.replay_count;
  append_history({std::move(entry)});
}

void MessageSql::write(const Message& m) {
  group_->forget(m.id);
  auto& s = kept_->update;
  s.binds().row.assign(m);
  run_once(c_, s.on(c_));
}

void MessageSql::write_with_history(const Message& m, const AttemptRecord& a) {
  group_->forget(m.id);
  auto& s = kept_->update_with_attempt;
  s.binds().row.assign(m);
  s.binds().attempt.assign(a);
  run_once(c_, s.on(c_));
}

void MessageSql::append_history(const std::vector<AttemptRecord>& history) {
  auto& s = kept_->insert_attempt;
  for (const auto& a : history) {
    s.binds().attempt.assign(a);
    run_once(c_, s.on(c_));
  }
}

std::optional<std::pair<long long, AttemptRecord>> MessageSql::last_entry(MessageId id) {
  auto& s = kept_->last_attempt;
  s.binds().message_id = id;
  if (!run_once(c_, s.on(c_))) return std::nullopt;
  return std::pair{s.binds().entry_id, s.binds().attempt.to_record()};
}

void MessageSql::fold_into(long long entry_id, const AttemptRecord& a) {
  auto& s = kept_->fold_attempt;
  auto& b = s.binds();
  b.entry_id = entry_id;
  b.attempt = a.attempt;
  b.claimed_at = a.claimed_at;
  b.finished_at = a.finished_at;
  b.worker = a.worker;
  b.worker_version = a.worker_version;
  b.count = a.count;
  run_once(c_, s.on(c_));
}

std::vector<Status> MessageSql::other_key_holders(const Message& m) {
  auto& s = kept_->key_holders;
  auto& b = s.binds();
  b.queue = m.queue;
  b.key = *m.idempotency_key;
  b.id = m.id;
  std::vector<Status> out;
  for_each_row(c_, s.on(c_), [&] {
    if (auto status = parse_status(b.status)) out.push_back(*status);
  });
  return out;
}

void MessageSql::lock_later(MessageId id) {
  if (c_.is_sqlite()) return;  // one writer: a lock costs nothing, a statement little
  group_->name(id);
}

void MessageSql::catch_up() {
  group_->write_waiting();
  group_->forget_all();
}

void MessageSql::start_job(bool through_messages) {
  if (!through_messages) catch_up();
  writes_later_ = through_messages;
}

void MessageSql::end_transaction() {
  writes_later_ = false;
  group_->clear();
}

std::optional<Message> MessageSql::lock(const std::string& queue, MessageId id) {
  if (group_->waits(id)) group_->write_waiting();
  if (auto held = group_->take(id)) {
    if (held->queue != queue) return std::nullopt;
    return held;
  }
  auto& select = kept_->select_for_update;
  select.binds().id = id;
  select.binds().queue = queue;
  if (!run_once(c_, select.on(c_))) return std::nullopt;
  return select.binds().row.to_message();
}

Result<Message> MessageSql::update(const UpdateParams& p) {
  auto locked = lock(p.queue, p.id);
  if (!locked) return Error(Errc::message_not_found, "message not found");
  const Message current = std::move(*locked);

  Related related;
  if (p.load_key_holders && current.idempotency_key) {
    group_->write_waiting();  // the other holders' rows as they are now
    related.key_holders = other_key_holders(current);
  }
  if (p.load_effects && current.effect_count > 0) related.effects = effects_.of(current.id);
  std::optional<long long> last_entry_id;
  if (p.load_last_entry) {
    if (auto last = last_entry(current.id)) {
      last_entry_id = last->first;
      related.last_entry = std::move(last->second);
    }
  }

  auto change = p.decide(current, related);
  if (!change) return change.error();
  if (p.dry_run || change->unchanged) return std::move(change->next);
  stamp_life(*change);
  if (change->fold && (!last_entry_id || change->history.empty())) {
    throw std::logic_error("a history fold without the entry it folds into");
  }
  // The key holders were read without a lock on rows that did not exist yet: another node may
  // have put the key in flight since. The partial unique index has the last word; a savepoint
  // keeps its refusal from aborting the whole (group) transaction.
  const Message& next = change->next;
  bool guard_key = p.load_key_holders && next.idempotency_key &&
                   (next.status == Status::pending || next.status == Status::processing);
  // PostgreSQL: the usual single history entry rides in the UPDATE's statement (one round
  // trip fewer per succeed or fail), and the usual acknowledgement (a success, a retry, a death)
  // is written with the group's others at its end.
  bool with_history =
      c_.dialect().combines_statements && change->history.size() == 1 && !change->fold;
  if (with_history && !guard_key && writes_later_) {
    group_->leave(next, change->history.front());
  } else {
    group_->write_waiting();  // the rows in the order their transitions were made
    if (guard_key) c_.execute("SAVEPOINT key_guard");
    try {
      if (with_history) {
        write_with_history(next, change->history.front());
      } else {
        write(next);
      }
    } catch (const soci::soci_error& e) {
      if (!guard_key || !is_unique_violation(e)) throw;
      c_.execute("ROLLBACK TO SAVEPOINT key_guard");
      c_.execute("RELEASE SAVEPOINT key_guard");
      return Error(Errc::idempotency_conflict,
                   "another message with this idempotency key is already in flight");
    }
    if (guard_key) c_.execute("RELEASE SAVEPOINT key_guard");
  }
  if (change->fold) {
    fold_into(*last_entry_id, change->history.front());
    append_history({change->history.begin() + 1, change->history.end()});
  } else if (!with_history) {
    append_history(change->history);
  }
  if (!change->resolutions.empty()) effects_.resolve(next.id, change->resolutions);
  if (change->audit) audit_.append(*change->audit);
  note_due(next);
  note_death(current, next);
  return std::move(change->next);
}

std::vector<Message> MessageSql::reap(const ReapParams& p) {
  group_->write_waiting();
  auto& s = kept_->expired;
  s.binds().now = p.now;
  s.binds().limit = p.limit;
  auto expired = fetch_messages(c_, s.on(c_), s.binds().row);
  std::vector<Message> out;
  out.reserve(expired.size());
  for (const auto& m : expired) {
    Change change = p.decide(m);
    stamp_life(change);
    write(change.next);
    append_history(change.history);
    note_due(change.next);
    note_death(m, change.next);
    out.push_back(std::move(change.next));
  }
  return out;
}

// ---- before the commit -----------------------------------------------------------------------

void MessageSql::note_work(const std::string& queue) {
  if (c_.is_sqlite()) return;
  notes_[queue] = 0;
}

void MessageSql::note_due(const Message& m) {
  if (c_.is_sqlite() || m.status != Status::pending) return;
  TimeMs due = m.retry_after.value_or(0);
  auto [it, inserted] = notes_.try_emplace(m.queue, due);
  if (!inserted) it->second = std::min(it->second, due);
}

void MessageSql::note_death(const Message& before, const Message& next) {
  incidents_.note_change(before, next);
  if (next.status != Status::dead || before.status == Status::dead || !next.dead_at) return;
  deaths_[{next.queue, *next.dead_at / kMillisPerHour * kMillisPerHour}] += 1;
}

void MessageSql::discard_pending() {
  end_transaction();
  inserts_.discard();
  notes_.clear();
  deaths_.clear();
}

void MessageSql::before_commit() {
  group_->write_waiting();
  end_transaction();
  inserts_.flush([this](const Message& m) { note_due(m); });
  for (const auto& [queue, due] : notes_) {
    // Queue names are [A-Za-z0-9_-]: safe inside the literal (NOTIFY takes no parameters). It
    // travels with the COMMIT (a round trip fewer per group; docs/performance.md).
    c_.commit_with(std::string("NOTIFY ") + kNotifyChannel + ", '" + encode_change(node_, queue, due) + "'");
  }
  notes_.clear();
  for (const auto& [key, count] : deaths_) {
    std::string queue = key.first;
    long long hour = key.second, n = count;
    c_.session() << "INSERT INTO dead_letter_hours (queue, hour, count) VALUES (:queue, :hour, :n) "
                    "ON CONFLICT (queue, hour) DO UPDATE SET count = dead_letter_hours.count + :n",
        use(queue, "queue"), use(hour, "hour"), use(n, "n");
  }
  deaths_.clear();
}

}  // namespace dlq::store

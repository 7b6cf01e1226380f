// The queue operations that write, in SQL on one connection, with statements prepared once and
// reused (the queries are in queries.cpp).
#include "store/operations.hpp"

#include <algorithm>

#include <boost/json/serialize.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "store/pg_listener.hpp"

namespace dlq::store {

Operations::Operations(Connection& connection, std::string node)
    : c_(connection), node_(std::move(node)) {}

Operations::~Operations() = default;

soci::statement& Operations::statement(std::optional<soci::statement>& slot,
                                       const std::string& sql, Binder bind) {
  if (!slot) {
    slot.emplace(c_.session());
    bind(*this, *slot);
    slot->alloc();
    slot->prepare(sql);
    slot->define_and_bind();
  }
  return *slot;
}

std::vector<Message> Operations::fetch_messages(soci::statement& st) {
  std::vector<Message> out;
  st.execute(false);
  while (st.fetch()) out.push_back(row_.to_message());
  c_.finish(st);
  return out;
}

std::optional<Message> Operations::fetch_one(soci::statement& st) {
  std::optional<Message> out;
  if (st.execute(true)) out = row_.to_message();
  c_.finish(st);
  return out;
}

namespace {

// A message as its INSERT just stored it: the columns the statement does not set keep their
// defaults, which are Message's own.
Message stored_message(const std::string& queue, const NewMessage& m, TimeMs now, MessageId id) {
  Message out;
  out.id = id;
  out.queue = queue;
  out.payload = m.payload;
  out.status = Status::pending;
  out.max_retries = m.max_retries;
  out.retry_after = m.run_at;
  out.created_at = now;
  out.updated_at = now;
  out.priority = m.priority;
  out.job_type = m.job_type;
  out.idempotency_key = m.idempotency_key;
  out.life_started_at = now;
  out.status_at = now;
  return out;
}

}  // namespace

std::optional<MessageId> Operations::insert_row() {
  auto& st = statement(insert_, c_.dialect().insert_message,
                       [](Operations& o, soci::statement& s) {
                         if (!o.c_.is_sqlite()) s.exchange(soci::into(o.out_id_));
                         s.exchange(soci::use(o.in_queue_));
                         s.exchange(soci::use(o.in_payload_));
                         s.exchange(soci::use(o.in_max_retries_));
                         s.exchange(soci::use(o.in_retry_after_));
                         s.exchange(soci::use(o.in_now_));  // created_at
                         s.exchange(soci::use(o.in_now_));  // updated_at
                         s.exchange(soci::use(o.in_priority_));
                         s.exchange(soci::use(o.in_job_type_));
                         s.exchange(soci::use(o.in_key_));
                         s.exchange(soci::use(o.in_now_));  // life_started_at
                         s.exchange(soci::use(o.in_now_));  // status_at
                       });
  std::optional<MessageId> id;
  if (c_.is_sqlite()) {
    st.execute(true);
    c_.finish(st);
    // No change: the idempotency index turned the row away (ON CONFLICT DO NOTHING).
    if (c_.changes() == 1) id = c_.last_insert_rowid();
  } else if (st.execute(true)) {
    id = out_id_;
  }
  return id;
}

// PostgreSQL: one statement for a whole batch without idempotency keys, instead of a round
// trip per message.
std::vector<Inserted> Operations::insert_many(const InsertParams& p) {
  auto& st = statement(insert_many_, c_.dialect().insert_messages,
                       [](Operations& o, soci::statement& s) {
                         s.exchange(soci::into(o.out_id_));
                         s.exchange(soci::use(o.in_queue_));
                         s.exchange(soci::use(o.in_now_));   // created_at
                         s.exchange(soci::use(o.in_now_));   // updated_at
                         s.exchange(soci::use(o.in_now_));   // life_started_at
                         s.exchange(soci::use(o.in_now_));   // status_at
                         s.exchange(soci::use(o.in_items_));
                       });
  boost::json::array items;
  items.reserve(p.messages.size());
  for (const auto& m : p.messages) {
    boost::json::object item;
    item["payload"] = m.payload;
    item["max_retries"] = m.max_retries;
    item["priority"] = m.priority;
    if (m.run_at) item["run_at"] = *m.run_at;
    if (m.job_type) item["job_type"] = *m.job_type;
    items.push_back(std::move(item));
  }
  in_queue_ = p.queue;
  in_now_ = p.now;
  in_items_ = boost::json::serialize(items);
  std::vector<MessageId> ids;
  ids.reserve(p.messages.size());
  st.execute(false);
  while (st.fetch()) ids.push_back(out_id_);
  if (ids.size() != p.messages.size()) throw std::runtime_error("batch insert lost rows");
  std::sort(ids.begin(), ids.end());
  std::vector<Inserted> out;
  out.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    Message created = stored_message(p.queue, p.messages[i], p.now, ids[i]);
    note_due(created);
    out.push_back({std::move(created), true});
  }
  return out;
}

std::vector<Inserted> Operations::insert(const InsertParams& p) {
  bool keyless = std::none_of(p.messages.begin(), p.messages.end(),
                              [](const NewMessage& m) { return m.idempotency_key.has_value(); });
  if (!c_.is_sqlite() && keyless && p.messages.size() > 1) return insert_many(p);
  auto& find_holder = statement(find_key_holder_, c_.dialect().find_key_holder,
                                [](Operations& o, soci::statement& st) {
                                  o.row_.exchange_into(st);
                                  st.exchange(soci::use(o.in_queue_));
                                  st.exchange(soci::use(o.in_key_));
                                });
  std::vector<Inserted> out;
  out.reserve(p.messages.size());
  in_queue_ = p.queue;
  in_now_ = p.now;
  for (const auto& m : p.messages) {
    in_key_ = m.idempotency_key;
    if (in_key_) {
      if (auto holder = fetch_one(find_holder)) {
        out.push_back({std::move(*holder), false});
        continue;
      }
    }
    in_payload_ = m.payload;
    in_max_retries_ = m.max_retries;
    in_retry_after_ = m.run_at;
    in_priority_ = m.priority;
    in_job_type_ = m.job_type;
    if (auto id = insert_row()) {
      Message created = stored_message(p.queue, m, p.now, *id);
      note_due(created);
      out.push_back({std::move(created), true});
      continue;
    }
    // Another transaction (another node) inserted the key between our check and our insert.
    auto holder = fetch_one(find_holder);
    if (!holder) throw std::runtime_error("idempotency key conflict without a holder");
    out.push_back({std::move(*holder), false});
  }
  return out;
}

// Which rows a claim takes: queue, due at or before, job types (count and JSON array), how many.
void Operations::bind_claim_filter(Operations& o, soci::statement& s) {
  s.exchange(soci::use(o.in_queue_));
  s.exchange(soci::use(o.in_now_));
  s.exchange(soci::use(o.in_njobs_));
  s.exchange(soci::use(o.in_jobs_));
  s.exchange(soci::use(o.in_limit_));
}

std::vector<Message> Operations::claim(const ClaimParams& p) {
  in_token_ = p.lease_token;
  in_until_ = p.lease_expires_at;
  in_worker_ = p.worker;
  in_now_ = p.now;
  in_queue_ = p.queue;
  in_njobs_ = static_cast<long long>(p.job_types.size());
  in_jobs_ = "[]";  // most claims take any job type: no JSON to build
  if (!p.job_types.empty()) {
    boost::json::array jobs;
    for (const auto& j : p.job_types) jobs.emplace_back(j);
    in_jobs_ = boost::json::serialize(jobs);
  }
  in_limit_ = p.max;
  if (c_.is_sqlite()) return claim_in_two_steps(p);

  auto& st = statement(claim_, c_.dialect().claim, [](Operations& o, soci::statement& s) {
    o.row_.exchange_into(s);
    s.exchange(soci::use(o.in_token_));
    s.exchange(soci::use(o.in_until_));
    s.exchange(soci::use(o.in_worker_));
    s.exchange(soci::use(o.in_now_));  // first_attempt_at
    s.exchange(soci::use(o.in_now_));  // last_attempt_at
    s.exchange(soci::use(o.in_now_));  // updated_at
    s.exchange(soci::use(o.in_now_));  // status_at
    bind_claim_filter(o, s);
  });
  auto out = fetch_messages(st);
  // RETURNING gives no order guarantee: restore the claim order.
  std::sort(out.begin(), out.end(), [](const Message& a, const Message& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.created_at != b.created_at) return a.created_at < b.created_at;
    return a.id < b.id;
  });
  return out;
}

// SQLite: read the claimable rows, then mark each claimed. The write transaction is the lock
// (one writer), so nothing can take the rows in between. The same changes as the one-statement
// claim, made in C++ on the rows read.
std::vector<Message> Operations::claim_in_two_steps(const ClaimParams& p) {
  auto& select = statement(claim_select_, c_.dialect().claim_select,
                           [](Operations& o, soci::statement& s) {
                             o.row_.exchange_into(s);
                             bind_claim_filter(o, s);
                           });
  auto out = fetch_messages(select);
  if (out.empty()) return out;
  auto& mark = statement(claim_mark_, c_.dialect().claim_mark, [](Operations& o, soci::statement& s) {
    s.exchange(soci::use(o.in_lease_id_));
    s.exchange(soci::use(o.in_until_));
    s.exchange(soci::use(o.in_worker_));
    s.exchange(soci::use(o.in_first_at_));
    s.exchange(soci::use(o.in_now_));  // last_attempt_at
    s.exchange(soci::use(o.in_now_));  // updated_at
    s.exchange(soci::use(o.in_now_));  // status_at
    s.exchange(soci::use(o.in_id_));
  });
  for (Message& m : out) {
    m.status = Status::processing;
    m.lease_id = p.lease_token + "-" + std::to_string(m.id);
    m.lease_expires_at = p.lease_expires_at;
    m.worker = p.worker;
    m.attempts += 1;
    if (!m.first_attempt_at) m.first_attempt_at = p.now;
    m.last_attempt_at = p.now;
    m.updated_at = p.now;
    m.status_at = p.now;
    in_lease_id_ = *m.lease_id;
    in_first_at_ = *m.first_attempt_at;
    in_id_ = m.id;
    mark.execute(true);
    c_.finish(mark);
  }
  return out;
}

void Operations::write_message(const Message& m) {
  auto& st = statement(update_, c_.dialect().update_message, [](Operations& o, soci::statement& s) {
    o.update_row_.exchange_use(s);
  });
  update_row_.assign(m);
  st.execute(true);
  c_.finish(st);
}

void Operations::write_message_and_history(const Message& m, const AttemptRecord& a) {
  auto& st = statement(update_with_attempt_, c_.dialect().update_message_with_attempt,
                       [](Operations& o, soci::statement& s) {
                         o.update_row_.exchange_use(s);
                         o.attempt_row_.exchange_use(s);
                       });
  update_row_.assign(m);
  attempt_row_.assign(a);
  st.execute(true);
}

void Operations::append_history(const std::vector<AttemptRecord>& history) {
  if (history.empty()) return;
  auto& st = statement(insert_attempt_, c_.dialect().insert_attempt,
                       [](Operations& o, soci::statement& s) { o.attempt_row_.exchange_use(s); });
  for (const auto& a : history) {
    attempt_row_.assign(a);
    st.execute(true);
    c_.finish(st);
  }
}

Result<Message> Operations::update(const UpdateParams& p) {
  in_queue_ = p.queue;
  in_id_ = p.id;
  auto& select = statement(select_locked_, c_.dialect().select_message_locked,
                           [](Operations& o, soci::statement& s) {
                             o.row_.exchange_into(s);
                             s.exchange(soci::use(o.in_id_));
                             s.exchange(soci::use(o.in_queue_));
                           });
  auto current = fetch_one(select);
  if (!current) return Error(Errc::message_not_found, "message not found");

  Related related;
  if (p.load_key_holders && current->idempotency_key) {
    auto& holders = statement(key_holders_, c_.dialect().select_key_holders,
                              [](Operations& o, soci::statement& s) {
                                s.exchange(soci::into(o.out_status_));
                                s.exchange(soci::use(o.in_queue_));
                                s.exchange(soci::use(o.in_key_));
                                s.exchange(soci::use(o.in_id_));
                              });
    in_queue_ = p.queue;
    in_key_ = current->idempotency_key;
    in_id_ = p.id;
    holders.execute(false);
    while (holders.fetch()) {
      if (auto s = parse_status(out_status_)) related.key_holders.push_back(*s);
    }
    c_.finish(holders);
  }

  auto change = p.decide(*current, related);
  if (!change) return change.error();
  if (p.dry_run || change->unchanged) return std::move(change->next);
  // The key holders were read without a lock on rows that did not exist yet: another node may
  // have put the key in flight since. The partial unique index has the last word; a savepoint
  // keeps its refusal from aborting the whole (group) transaction.
  const Message& next = change->next;
  bool guard_key = p.load_key_holders && next.idempotency_key &&
                   (next.status == Status::pending || next.status == Status::processing);
  // PostgreSQL: the usual single history entry rides in the UPDATE's statement (one round
  // trip fewer per succeed or fail).
  bool with_history = !c_.is_sqlite() && change->history.size() == 1;
  if (guard_key) c_.execute("SAVEPOINT key_guard");
  try {
    if (with_history) {
      write_message_and_history(next, change->history.front());
    } else {
      write_message(next);
    }
  } catch (const soci::soci_error& e) {
    if (!guard_key || !is_unique_violation(e)) throw;
    c_.execute("ROLLBACK TO SAVEPOINT key_guard");
    c_.execute("RELEASE SAVEPOINT key_guard");
    return Error(Errc::idempotency_conflict,
                 "another message with this idempotency key is already in flight");
  }
  if (guard_key) c_.execute("RELEASE SAVEPOINT key_guard");
  if (!with_history) append_history(change->history);
  if (change->audit) append_audit(*change->audit);
  note_due(next);
  note_death(current->status, next);
  return std::move(change->next);
}

std::vector<Message> Operations::reap(const ReapParams& p) {
  auto& st = statement(reap_, c_.dialect().reap_select, [](Operations& o, soci::statement& s) {
    o.row_.exchange_into(s);
    s.exchange(soci::use(o.in_now_));
    s.exchange(soci::use(o.in_limit_));
  });
  in_now_ = p.now;
  in_limit_ = p.limit;
  auto expired = fetch_messages(st);
  std::vector<Message> out;
  out.reserve(expired.size());
  for (const auto& m : expired) {
    Change change = p.decide(m);
    write_message(change.next);
    append_history(change.history);
    note_due(change.next);
    note_death(m.status, change.next);
    out.push_back(std::move(change.next));
  }
  return out;
}

void Operations::note_due(const Message& m) {
  if (c_.is_sqlite() || m.status != Status::pending) return;
  TimeMs due = m.retry_after.value_or(0);
  auto [it, inserted] = notes_.try_emplace(m.queue, due);
  if (!inserted) it->second = std::min(it->second, due);
}

void Operations::note_death(Status before, const Message& next) {
  if (next.status != Status::dead || before == Status::dead || !next.dead_at) return;
  deaths_[{next.queue, *next.dead_at / kMillisPerHour * kMillisPerHour}] += 1;
}

void Operations::before_commit() {
  for (const auto& [queue, due] : notes_) {
    // Queue names are [A-Za-z0-9_-]: safe inside the literal (NOTIFY takes no parameters).
    c_.execute(std::string("NOTIFY ") + kNotifyChannel + ", '" + encode_change(node_, queue, due) + "'");
  }
  notes_.clear();
  for (const auto& [key, count] : deaths_) {
    std::string queue = key.first;
    long long hour = key.second, n = count;
    c_.session() << "INSERT INTO dead_letter_hours (queue, hour, count) VALUES (:queue, :hour, :n) "
                    "ON CONFLICT (queue, hour) DO UPDATE SET count = dead_letter_hours.count + :n2",
        soci::use(queue, "queue"), soci::use(hour, "hour"), soci::use(n, "n"), soci::use(n, "n2");
  }
  deaths_.clear();
}

// Rare (a few times a minute): plain statements with named binds, not kept prepared.
LeadershipRecord Operations::leadership_renew(const LeadershipRenewParams& p) {
  long long now = p.now, renewed = p.now, stale_before = p.stale_before;
  std::string node = p.node;
  c_.session() << c_.dialect().leadership_renew, soci::use(node, "node"), soci::use(now, "now"),
      soci::use(renewed, "renewed"), soci::use(stale_before, "stale_before");
  LeadershipRecord record;
  long long since = 0, renewed_at = 0;
  c_.session() << c_.dialect().leadership_select, soci::into(record.node), soci::into(since),
      soci::into(renewed_at);
  record.since = since;
  record.renewed_at = renewed_at;
  return record;
}

}  // namespace dlq::store

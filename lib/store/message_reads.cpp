// The reads of messages and their history, each statement beside its named binds and kept
// prepared for the connection's life.
#include "store/message_reads.hpp"

#include "store/message_row.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

const std::string kColumns = kMessageColumns;

// A page of a queue, oldest first: every status, or one.
struct ListPage {
  std::string queue, status;
  long long limit = 0, offset = 0;

  void fill(const ListParams& p) {
    queue = p.queue;
    if (p.status) status = std::string(to_string(*p.status));
    limit = p.limit;
    offset = p.offset;
  }
  static std::string where(bool by_status) {
    return std::string(" FROM messages WHERE queue = :queue") +
           (by_status ? " AND status = :status" : "") +
           " ORDER BY created_at, id LIMIT :limit OFFSET :offset";
  }
  void exchange_page(soci::statement& st, bool by_status) {
    st.exchange(use(queue, "queue"));
    if (by_status) st.exchange(use(status, "status"));
    st.exchange(use(limit, "limit"));
    st.exchange(use(offset, "offset"));
  }
};

template <bool ByStatus>
struct ListMessages : ListPage {
  MessageRow row;

  static std::string sql(const Dialect&) { return "SELECT " + kColumns + where(ByStatus); }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    exchange_page(st, ByStatus);
  }
};

template <bool ByStatus>
struct ListIds : ListPage {
  long long id = 0;

  static std::string sql(const Dialect&) { return "SELECT id" + where(ByStatus); }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(id));
    exchange_page(st, ByStatus);
  }
};

struct FindMessage {
  MessageRow row;
  long long id = 0;
  std::string queue;

  static std::string sql(const Dialect&) {
    return "SELECT " + kColumns + " FROM messages WHERE id = :id AND queue = :queue";
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(id, "id"));
    st.exchange(use(queue, "queue"));
  }
};

// A page of a message's history entries, oldest first.
struct SelectAttempts {
  AttemptRow attempt;
  long long id = 0, limit = 0, offset = 0;

  static std::string sql(const Dialect&) {
    return std::string("SELECT ") + AttemptRow::kColumns +
           " FROM attempts WHERE message_id = :id ORDER BY id LIMIT :limit OFFSET :offset";
  }
  void exchange(soci::statement& st, const Dialect&) {
    attempt.exchange_into(st);
    st.exchange(use(id, "id"));
    st.exchange(use(limit, "limit"));
    st.exchange(use(offset, "offset"));
  }
};

// How many history entries a message has (read from the index on (message_id, id)).
struct CountAttempts {
  long long count = 0, id = 0;

  static std::string sql(const Dialect&) {
    return "SELECT COUNT(*) FROM attempts WHERE message_id = :id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(count));
    st.exchange(use(id, "id"));
  }
};

// The earliest retry still in the future: when the due-time timer must look again.
struct NextDue {
  std::optional<long long> at;
  long long now = 0;

  static std::string sql(const Dialect&) {
    return "SELECT MIN(retry_after) FROM messages WHERE status = 'pending' "
           "AND retry_after IS NOT NULL AND retry_after > :now";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(at));
    st.exchange(use(now, "now"));
  }
};

// The earliest lease to expire: when the reaper must look again.
struct NextLeaseExpiry {
  std::optional<long long> at;

  static std::string sql(const Dialect&) {
    return "SELECT MIN(lease_expires_at) FROM messages WHERE status = 'processing' "
           "AND lease_expires_at IS NOT NULL";
  }
  void exchange(soci::statement& st, const Dialect&) { st.exchange(into(at)); }
};

}  // namespace

struct MessageReads::Statements {
  Prepared<ListMessages<false>> list_all;
  Prepared<ListMessages<true>> list_by_status;
  Prepared<ListIds<false>> ids_all;
  Prepared<ListIds<true>> ids_by_status;
  Prepared<FindMessage> find;
  Prepared<SelectAttempts> attempts;
  Prepared<CountAttempts> count_attempts;
  Prepared<NextDue> next_due;
  Prepared<NextLeaseExpiry> next_lease;
};

MessageReads::MessageReads(Connection& c) : c_(c), kept_(std::make_unique<Statements>()) {}

MessageReads::~MessageReads() = default;

namespace {

template <class S>
std::vector<Message> list_with(Connection& c, Prepared<S>& s, const ListParams& p) {
  s.binds().fill(p);
  return fetch_messages(c, s.on(c), s.binds().row);
}

template <class S>
std::vector<MessageId> ids_with(Connection& c, Prepared<S>& s, const ListParams& p) {
  s.binds().fill(p);
  std::vector<MessageId> out;
  for_each_row(c, s.on(c), [&] { out.push_back(s.binds().id); });
  return out;
}

// A page with the filters or the order the kept statements do not cover, prepared for the call:
// `select` is the column list, `row_into` registers the into elements.
template <class RowInto>
soci::statement filtered_page(Connection& c, const ListParams& p, const std::string& select,
                              RowInto&& row_into, ListPage& b, std::string& job_type,
                              std::string& error_class) {
  std::string sql = "SELECT " + select + " FROM messages WHERE queue = :queue";
  if (p.status) sql += " AND status = :status";
  if (p.job_type) sql += " AND job_type = :job_type";
  if (p.error_class) sql += " AND error_class = :error_class";
  if (p.retrying) sql += " AND (retry_count >= 1 OR lease_expiries >= 1)";
  sql += p.descending ? " ORDER BY created_at DESC, id DESC" : " ORDER BY created_at, id";
  sql += " LIMIT :limit OFFSET :offset";
  b.fill(p);
  job_type = p.job_type.value_or("");
  error_class = p.error_class ? std::string(to_string(*p.error_class)) : "";
  return prepare_call(c, sql, [&](soci::statement& st) {
    row_into(st);
    st.exchange(use(b.queue, "queue"));
    if (p.status) st.exchange(use(b.status, "status"));
    if (p.job_type) st.exchange(use(job_type, "job_type"));
    if (p.error_class) st.exchange(use(error_class, "error_class"));
    st.exchange(use(b.limit, "limit"));
    st.exchange(use(b.offset, "offset"));
  });
}

}  // namespace

std::vector<Message> MessageReads::list(const ListParams& p) {
  if (!p.plain()) {
    ListPage b;
    MessageRow row;
    std::string job_type, error_class;
    soci::statement st = filtered_page(
        c_, p, kColumns, [&](soci::statement& s) { row.exchange_into(s); }, b, job_type,
        error_class);
    return fetch_messages(c_, st, row);
  }
  if (p.status) return list_with(c_, kept_->list_by_status, p);
  return list_with(c_, kept_->list_all, p);
}

std::vector<MessageId> MessageReads::list_ids(const ListParams& p) {
  if (!p.plain()) {
    ListPage b;
    long long id = 0;
    std::string job_type, error_class;
    soci::statement st = filtered_page(
        c_, p, "id", [&](soci::statement& s) { s.exchange(into(id)); }, b, job_type, error_class);
    std::vector<MessageId> out;
    for_each_row(c_, st, [&] { out.push_back(id); });
    return out;
  }
  if (p.status) return ids_with(c_, kept_->ids_by_status, p);
  return ids_with(c_, kept_->ids_all, p);
}

std::optional<Message> MessageReads::find(const std::string& queue, MessageId id) {
  auto& s = kept_->find;
  s.binds().id = id;
  s.binds().queue = queue;
  if (!run_once(c_, s.on(c_))) return std::nullopt;
  return s.binds().row.to_message();
}

// Rare (the desk's samples and batches): not kept prepared.
std::optional<std::string> MessageReads::queue_of(MessageId id) {
  std::optional<std::string> queue;
  long long in_id = id;
  c_.session() << "SELECT queue FROM messages WHERE id = :id", into(queue), use(in_id, "id");
  return queue;
}

std::vector<AttemptRecord> MessageReads::attempts(MessageId id, const HistoryPage& page) {
  auto& s = kept_->attempts;
  s.binds().id = id;
  s.binds().limit = page.limit;
  s.binds().offset = page.after;
  std::vector<AttemptRecord> out;
  for_each_row(c_, s.on(c_), [&] { out.push_back(s.binds().attempt.to_record()); });
  return out;
}

std::optional<MessageHistory> MessageReads::history(const std::string& queue, MessageId id,
                                                    const HistoryPage& page) {
  auto found = find(queue, id);
  if (!found) return std::nullopt;
  auto& count = kept_->count_attempts;
  count.binds().id = id;
  run_once(c_, count.on(c_));
  return MessageHistory{std::move(*found), attempts(id, page), count.binds().count};
}

// Rare (an operator looking at a message's versions): not kept prepared.
std::optional<MessageEdits> MessageReads::edits(const std::string& queue, MessageId id,
                                                long long from, long long count) {
  auto found = find(queue, id);
  if (!found) return std::nullopt;
  MessageEdits out{std::move(*found), {}};
  long long in_id = id, limit = count, offset = from, at = 0;
  std::string previous;
  std::optional<std::string> actor, reason;
  auto st = prepare_call(c_,
                         "SELECT previous_payload, finished_at, actor, reason FROM attempts "
                         "WHERE message_id = :id AND outcome = 'replayed' "
                         "AND previous_payload IS NOT NULL ORDER BY id LIMIT :limit OFFSET :offset",
                         [&](soci::statement& s) {
                           s.exchange(into(previous));
                           s.exchange(into(at));
                           s.exchange(into(actor));
                           s.exchange(into(reason));
                           s.exchange(use(in_id, "id"));
                           s.exchange(use(limit, "limit"));
                           s.exchange(use(offset, "offset"));
                         });
  for_each_row(c_, st, [&] { out.edits.push_back({previous, at, actor, reason}); });
  return out;
}

Schedule MessageReads::schedule(TimeMs now) {
  Schedule out;
  auto& due = kept_->next_due;
  due.binds().now = now;
  due.binds().at.reset();
  run_once(c_, due.on(c_));
  out.next_due = due.binds().at;
  auto& lease = kept_->next_lease;
  lease.binds().at.reset();
  run_once(c_, lease.on(c_));
  out.next_lease_expiry = lease.binds().at;
  return out;
}

}  // namespace dlq::store

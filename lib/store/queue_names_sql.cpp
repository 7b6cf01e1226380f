// The queue names' statements, and the order in which admitting and removing a name take their
// locks on PostgreSQL so that the table always holds every queue that has a message.
#include "store/queue_names_sql.hpp"

#include <boost/json.hpp>

#include "store/connection.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

// New names are admitted one at a time across nodes: the transaction holding this lock counts
// with a snapshot taken after the previous holder committed.
constexpr const char* kAdmitLock = "SELECT pg_advisory_xact_lock(7274011)";
// Bounds the SQLite cache of known names (the table may hold many more).
constexpr std::size_t kMaxKnown = 10000;

// Whether a name is kept. PostgreSQL: FOR KEY SHARE holds the row until the transaction ends,
// so remove_emptied (which locks it FOR UPDATE first) waits for this transaction's messages.
struct FindName {
  std::string queue;
  long long one = 0;

  static std::string sql(const Dialect& d) {
    return std::string("SELECT 1 FROM queue_names WHERE queue = :queue") +
           (d.kind == Dialect::Kind::postgresql ? " FOR KEY SHARE" : "");
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(one));
    st.exchange(use(queue, "queue"));
  }
};

}  // namespace

struct QueueNamesSql::Statements {
  Prepared<FindName> find;
};

QueueNamesSql::QueueNamesSql(Connection& c) : c_(c), kept_(std::make_unique<Statements>()) {}

QueueNamesSql::~QueueNamesSql() = default;

bool QueueNamesSql::lookup(const std::string& queue) {
  auto& s = kept_->find;
  s.binds().queue = queue;
  return run_once(c_, s.on(c_));
}

bool QueueNamesSql::admit(const std::string& queue, long long max_queues) {
  if (held_.contains(queue)) return true;
  bool sqlite = c_.is_sqlite();
  if (sqlite && known_.contains(queue)) return true;
  if (lookup(queue)) {
    held_.insert(queue);
    if (sqlite && !added_.contains(queue)) {
      if (known_.size() >= kMaxKnown) known_.clear();
      known_.insert(queue);
    }
    return true;
  }
  if (!sqlite) {
    c_.execute(kAdmitLock);
    // Another transaction may have added it while this one waited for the lock.
    if (lookup(queue)) {
      held_.insert(queue);
      return true;
    }
  }
  std::string name = queue;
  if (max_queues > 0) {
    // The SQS front's registered queues count too (issue 38), this one aside: a first send to
    // a queue CreateQueue made is not refused for that queue's own name.
    long long kept = 0;
    c_.session() << "SELECT COUNT(*) FROM (SELECT queue AS name FROM queue_names UNION "
                    "SELECT name FROM sqs_queues) AS names WHERE name <> :queue",
        into(kept), use(name, "queue");
    if (kept >= max_queues) return false;
  }
  c_.session() << "INSERT INTO queue_names (queue) VALUES (:queue)", use(name, "queue");
  held_.insert(queue);
  added_.insert(queue);
  return true;
}

void QueueNamesSql::remove_emptied(const std::vector<std::string>& queues) {
  if (queues.empty()) return;
  boost::json::array list;
  for (const auto& q : queues) {
    list.emplace_back(q);
    known_.erase(q);
    held_.erase(q);  // a later enqueue in this transaction looks again
  }
  std::string names = boost::json::serialize(list);
  const std::string in = " IN (" + c_.dialect().json_texts("names") + ")";
  if (!c_.is_sqlite()) {
    // First wait for every transaction that holds one of these names (it may be inserting
    // messages), in name order; the DELETE below is a new statement, so its snapshot sees what
    // they committed. A transaction that looks a name up after this lock waits for this one to
    // end, and then finds the name gone (and admits it anew) or kept.
    std::string queue;
    soci::statement st = prepare_call(c_,
                                      "SELECT queue FROM queue_names WHERE queue" + in +
                                          " ORDER BY queue FOR UPDATE",
                                      [&](soci::statement& s) {
                                        s.exchange(into(queue));
                                        s.exchange(use(names, "names"));
                                      });
    for_each_row(c_, st, [] {});
  }
  // PostgreSQL: the names compare as bytes (COLLATE "C"), messages.queue in the database's
  // collation; comparing in the latter lets the messages' (queue, …) indexes answer.
  const std::string name = c_.is_sqlite() ? "queue_names.queue" : "queue_names.queue COLLATE \"default\"";
  c_.session() << "DELETE FROM queue_names WHERE queue" + in +
                      " AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.queue = " + name + ")",
      use(names, "names");
}

std::vector<std::string> QueueNamesSql::page(const std::optional<std::string>& after, int limit) {
  std::string from = after.value_or("");
  long long n = limit;
  std::string queue;
  std::vector<std::string> out;
  soci::statement st = prepare_call(
      c_,
      std::string("SELECT queue FROM queue_names") + (after ? " WHERE queue > :after" : "") +
          " ORDER BY queue LIMIT :limit",
      [&](soci::statement& s) {
        s.exchange(into(queue));
        if (after) s.exchange(use(from, "after"));
        s.exchange(use(n, "limit"));
      });
  for_each_row(c_, st, [&] { out.push_back(queue); });
  return out;
}

void QueueNamesSql::end_transaction() {
  held_.clear();
  added_.clear();
}

}  // namespace dlq::store

// Enqueue's statements, each beside its named binds: one INSERT per message (or, on
// PostgreSQL, one for every keyless request of a transaction), and the holder of an idempotency
// key to hand back.
#include "store/message_insert_sql.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "store/message_row.hpp"
#include "store/prepared.hpp"
#include "store/queue_names_sql.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

const std::string kColumns = kMessageColumns;

// One new message, or no row when its idempotency key is in flight.
struct InsertMessage {
  std::string queue, payload;
  long long max_retries = 0, priority = 0, now = 0;
  std::optional<long long> run_at;
  std::optional<std::string> job_type, key;
  long long id = 0;  // RETURNING id, where the dialect answers it

  static std::string sql(const Dialect& d) {
    return std::string(
               "INSERT INTO messages (queue, payload, status, retry_count, max_retries, "
               "retry_after, created_at, updated_at, priority, job_type, idempotency_key, "
               "life_started_at, status_at) VALUES (:queue, :payload, 'pending', 0, :max_retries, "
               ":run_at, :now, :now, :priority, :job_type, :key, :now, :now) "
               "ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL "
               "AND status IN ('pending', 'processing') DO NOTHING") +
           (d.insert_returns_id ? " RETURNING id" : "");
  }
  void exchange(soci::statement& st, const Dialect& d) {
    if (d.insert_returns_id) st.exchange(into(id));
    st.exchange(use(queue, "queue"));
    st.exchange(use(payload, "payload"));
    st.exchange(use(max_retries, "max_retries"));
    st.exchange(use(run_at, "run_at"));
    st.exchange(use(now, "now"));
    st.exchange(use(priority, "priority"));
    st.exchange(use(job_type, "job_type"));
    st.exchange(use(key, "key"));
  }
};

// PostgreSQL: the first INSERT of a transaction into a queue also finds and key-share locks the
// queue's name (QueueNamesSql::admit's lock) in its own statement, one round trip instead of
// two. No row: the name is not kept yet, or the key is in flight; admit() tells them apart.
// The parameters are cast because a SELECT's list, unlike VALUES, takes no type from the
// columns it fills.
struct InsertMessageGuarded : InsertMessage {
  static std::string sql(const Dialect&) {
    return "WITH name AS (SELECT 1 FROM queue_names WHERE queue = :queue FOR KEY SHARE) "
           "INSERT INTO messages (queue, payload, status, retry_count, max_retries, retry_after, "
           "created_at, updated_at, priority, job_type, idempotency_key, life_started_at, "
           "status_at) SELECT CAST(:queue AS TEXT), CAST(:payload AS TEXT), 'pending', 0, "
           "CAST(:max_retries AS BIGINT), CAST(:run_at AS BIGINT), CAST(:now AS BIGINT), "
           "CAST(:now AS BIGINT), CAST(:priority AS BIGINT), CAST(:job_type AS TEXT), "
           "CAST(:key AS TEXT), CAST(:now AS BIGINT), CAST(:now AS BIGINT) FROM name "
           "ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL "
           "AND status IN ('pending', 'processing') DO NOTHING RETURNING id";
  }
};

// PostgreSQL: the waiting keyless requests of a transaction, of any queues, in one statement
// (one round trip; docs/performance.md). json_to_recordset parses the array once. The rows are
// inserted in the order of the sorted SELECT and the identity default is evaluated as each is
// inserted, so the ids ascend in input order (a store test checks it).
struct InsertMessages {
  std::string items;   // a JSON array of the new messages, each with its queue, time and ord
  std::string queues;  // the guarded form: a JSON array of the queues' names
  long long id = 0;
  std::string queue;

  static std::string sql(const Dialect&) { return body("", ""); }
  // `with`, `where`: the guarded form's locked names.
  static std::string body(const std::string& with, const std::string& where) {
    return with +
           "INSERT INTO messages (queue, payload, status, retry_count, max_retries, retry_after, "
           "created_at, updated_at, priority, job_type, sqs_attributes, life_started_at, "
           "status_at) SELECT t.queue, t.payload, 'pending', 0, t.max_retries, t.run_at, t.now, "
           "t.now, t.priority, t.job_type, t.sqs_attributes, t.now, t.now "
           "FROM json_to_recordset(CAST(:items AS json)) AS t(ord BIGINT, queue TEXT, "
           "payload TEXT, max_retries BIGINT, run_at BIGINT, now BIGINT, priority BIGINT, "
           "job_type TEXT, sqs_attributes TEXT)" +
           where + " ORDER BY t.ord RETURNING id, queue";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(id));
    st.exchange(into(queue));
    st.exchange(use(items, "items"));
  }
};

// The same with the queues' names found and key-share locked (QueueNamesSql::admit's lock) in
// the statement: a queue whose name is not kept yet stores no row.
struct InsertMessagesGuarded : InsertMessages {
  static std::string sql(const Dialect&) {
    return body("WITH name AS MATERIALIZED (SELECT queue FROM queue_names WHERE queue IN "
                "(SELECT json_array_elements_text(CAST(:queues AS json))) FOR KEY SHARE) ",
                " WHERE t.queue IN (SELECT queue FROM name)");
  }
  void exchange(soci::statement& st, const Dialect& d) {
    InsertMessages::exchange(st, d);
    st.exchange(use(queues, "queues"));
  }
};

// The holder of a key to hand back: in flight first (there is at most one), then the newest
// succeeded one.
struct FindKeyHolder {
  MessageRow row;
  std::string queue, key;

  static std::string sql(const Dialect&) {
    return "SELECT " + kColumns + " FROM messages WHERE queue = :queue AND idempotency_key = :key "
           "AND status IN ('pending', 'processing', 'succeeded') "
           "ORDER BY CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END, id DESC LIMIT 1";
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(queue, "queue"));
    st.exchange(use(key, "key"));
  }
};

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

Result<std::vector<Inserted>> refusal(long long max_queues) {
  return Error::validation({{"queue",
                             "too many queues: at most " + std::to_string(max_queues) +
                                 " may hold messages (limits.max_queues)",
                             "limit"}});
}

}  // namespace

struct MessageInsertSql::Statements {
  Prepared<InsertMessage> insert;
  Prepared<InsertMessageGuarded> insert_guarded;
  Prepared<InsertMessages> insert_waiting;
  Prepared<InsertMessagesGuarded> insert_waiting_guarded;
  Prepared<FindKeyHolder> find_key_holder;
};

MessageInsertSql::MessageInsertSql(Connection& c, QueueNamesSql& names)
    : c_(c), names_(names), kept_(std::make_unique<Statements>()) {}

MessageInsertSql::~MessageInsertSql() = default;

std::optional<MessageId> MessageInsertSql::insert_row(const std::string& queue, const NewMessage& m,
                                                      TimeMs now, bool guarded) {
  auto fill = [&](InsertMessage& b) {
    b.queue = queue;
    b.payload = m.payload;
    b.max_retries = m.max_retries;
    b.run_at = m.run_at;
    b.now = now;
    b.priority = m.priority;
    b.job_type = m.job_type;
    b.key = m.idempotency_key;
  };
  if (guarded) {
    auto& s = kept_->insert_guarded;
    fill(s.binds());
    if (s.on(c_).execute(true)) return s.binds().id;
    return std::nullopt;
  }
  auto& s = kept_->insert;
  fill(s.binds());
  auto& st = s.on(c_);
  if (c_.dialect().insert_returns_id) {
    if (st.execute(true)) return s.binds().id;
    return std::nullopt;
  }
  run_once(c_, st);
  // No change: the idempotency index turned the row away (ON CONFLICT DO NOTHING).
  if (c_.changes() == 1) return c_.last_insert_rowid();
  return std::nullopt;
}

std::optional<Message> MessageInsertSql::key_holder(const std::string& queue, const std::string& key) {
  auto& s = kept_->find_key_holder;
  s.binds().queue = queue;
  s.binds().key = key;
  if (!run_once(c_, s.on(c_))) return std::nullopt;
  return s.binds().row.to_message();
}

Result<std::vector<Inserted>> MessageInsertSql::insert(const InsertParams& p) {
  auto rows = insert_rows(p);
  if (rows) store_sqs_attributes(p, *rows);
  return rows;
}

void MessageInsertSql::store_sqs_attributes(const InsertParams& p, std::vector<Inserted>& rows) {
  for (std::size_t i = 0; i < rows.size() && i < p.messages.size(); ++i) {
    const auto& attributes = p.messages[i].sqs_attributes;
    if (!attributes || !rows[i].created) continue;
    std::string text = *attributes;
    long long id = rows[i].message.id;
    c_.session() << "UPDATE messages SET sqs_attributes = :a WHERE id = :id", soci::use(text, "a"),
        soci::use(id, "id");
    rows[i].message.sqs_attributes = *attributes;
  }
}

Result<std::vector<Inserted>> MessageInsertSql::insert_rows(const InsertParams& p) {
  auto refused = [&] { return refusal(p.max_queues); };
  // PostgreSQL: the transaction's first INSERT into the queue finds and locks the name itself;
  // only when it stores nothing does admit() look, add or refuse the name (a refusal then still
  // leaves nothing behind). SQLite, or a name this transaction holds: admitted first.
  bool guarded = !c_.is_sqlite() && !names_.holds(p.queue);
  if (!guarded && !names_.admit(p.queue, p.max_queues)) return refused();
  std::vector<Inserted> out;
  out.reserve(p.messages.size());
  for (const auto& m : p.messages) {
    if (m.idempotency_key) {
      if (auto holder = key_holder(p.queue, *m.idempotency_key)) {
        out.push_back({std::move(*holder), false});
        continue;
      }
    }
    auto id = insert_row(p.queue, m, p.now, guarded);
    if (guarded) {
      guarded = false;
      if (id) {
        names_.hold(p.queue);
      } else {
        // No row: the name is not kept yet, or another transaction holds the key.
        if (!names_.admit(p.queue, p.max_queues)) return refused();
        id = insert_row(p.queue, m, p.now, false);
      }
    }
    if (id) {
      out.push_back({stored_message(p.queue, m, p.now, *id), true});
      continue;
    }
    // Another transaction (another node) inserted the key between our check and our insert.
    auto holder = key_holder(p.queue, *m.idempotency_key);
    if (!holder) throw std::runtime_error("idempotency key conflict without a holder");
    out.push_back({std::move(*holder), false});
  }
  return out;
}

// ---- keyless requests on PostgreSQL, stored together at the commit -------------------------

bool MessageInsertSql::waits(const InsertParams& p) const {
  bool keyless = std::none_of(p.messages.begin(), p.messages.end(),
                              [](const NewMessage& m) { return m.idempotency_key.has_value(); });
  return c_.dialect().combines_statements && keyless && !p.messages.empty();
}

void MessageInsertSql::insert_later(InsertParams p,
                                    const std::function<void(const Message&)>& created) {
  if (waits(p)) {
    blocks_.push_back({std::move(p), std::nullopt});
    return;
  }
  auto answer = insert(p);
  if (answer) {
    for (const auto& i : *answer) {
      if (i.created) created(i.message);
    }
  }
  blocks_.push_back({InsertParams{}, std::move(answer)});
}

std::vector<std::pair<MessageId, std::string>> MessageInsertSql::store_waiting(
    const std::vector<Block*>& waiting, bool guarded) {
  boost::json::array items;
  std::set<std::string> queues;
  long long ord = 0;
  for (const Block* b : waiting) {
    queues.insert(b->params.queue);
    for (const auto& m : b->params.messages) {
      boost::json::object item;
      item["ord"] = ord++;
      item["queue"] = b->params.queue;
      item["payload"] = m.payload;
      item["max_retries"] = m.max_retries;
      item["priority"] = m.priority;
      item["now"] = b->params.now;
      if (m.run_at) item["run_at"] = *m.run_at;
      if (m.job_type) item["job_type"] = *m.job_type;
      if (m.sqs_attributes) item["sqs_attributes"] = *m.sqs_attributes;
      items.push_back(std::move(item));
    }
  }
  std::vector<std::pair<MessageId, std::string>> rows;
  rows.reserve(static_cast<std::size_t>(ord));
  auto run = [&](auto& s) {
    s.binds().items = boost::json::serialize(items);
    for_each_row(c_, s.on(c_), [&] { rows.emplace_back(s.binds().id, s.binds().queue); });
  };
  if (guarded) {
    auto& s = kept_->insert_waiting_guarded;
    s.binds().queues = boost::json::serialize(boost::json::array(queues.begin(), queues.end()));
    run(s);
  } else {
    run(kept_->insert_waiting);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The rows of one statement to their requests: a queue's rows all came back or none did, and
// their ids ascend in the order the messages were sent.
void MessageInsertSql::answer_waiting(const std::vector<Block*>& waiting,
                                      const std::vector<std::pair<MessageId, std::string>>& rows,
                                      const std::function<void(const Message&)>& created) {
  std::set<std::string> stored;
  for (const auto& row : rows) stored.insert(row.second);
  std::size_t next = 0;
  for (Block* b : waiting) {
    if (!stored.contains(b->params.queue)) continue;
    std::vector<Inserted> out;
    out.reserve(b->params.messages.size());
    for (const auto& m : b->params.messages) {
      if (next == rows.size()) throw std::runtime_error("batch insert lost rows");
      out.push_back({stored_message(b->params.queue, m, b->params.now, rows[next++].first), true});
      created(out.back().message);
    }
    b->result = std::move(out);
  }
  if (next != rows.size()) throw std::runtime_error("batch insert stored rows nobody sent");
}

void MessageInsertSql::flush(const std::function<void(const Message&)>& created) {
  std::vector<Block*> waiting;
  for (auto& b : blocks_) {
    if (!b.result) waiting.push_back(&b);
  }
  if (waiting.empty()) return;
  // A name this transaction does not hold yet is found and locked by the INSERT itself; only
  // the queues that stored nothing are admitted (or refused) one by one, and tried again.
  bool guarded = std::any_of(waiting.begin(), waiting.end(),
                             [&](const Block* b) { return !names_.holds(b->params.queue); });
  answer_waiting(waiting, store_waiting(waiting, guarded), created);
  if (!guarded) return;
  std::vector<Block*> again;
  std::map<std::string, bool> admitted;
  for (Block* b : waiting) {
    if (b->result) {
      names_.hold(b->params.queue);
      continue;
    }
    auto [it, first] = admitted.try_emplace(b->params.queue, false);
    if (first) it->second = names_.admit(b->params.queue, b->params.max_queues);
    if (it->second) {
      again.push_back(b);
    } else {
      b->result = refusal(b->params.max_queues);
    }
  }
  if (again.empty()) return;
  answer_waiting(again, store_waiting(again, false), created);
  for (const Block* b : again) {
    if (!b->result) throw std::runtime_error("batch insert lost rows");
  }
}

Result<std::vector<Inserted>> MessageInsertSql::take() {
  if (blocks_.empty() || !blocks_.front().result) {
    throw std::logic_error("an enqueue's answer taken before the commit stored it");
  }
  auto out = std::move(*blocks_.front().result);
  blocks_.pop_front();
  return out;
}

void MessageInsertSql::discard() { blocks_.clear(); }

}  // namespace dlq::store

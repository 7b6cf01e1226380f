// Enqueue's statements, each beside its named binds: one INSERT per message (or, on
// PostgreSQL, one for a keyless batch), and the holder of an idempotency key to hand back.
#include "store/message_insert_sql.hpp"

#include <algorithm>
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

// PostgreSQL: many messages without idempotency keys in one statement (one round trip). The
// rows are inserted in the order of the sorted SELECT and the identity default is evaluated as
// each is inserted, so the ids ascend in input order (a store test checks it).
struct InsertMessages {
  std::string queue, items;  // items: a JSON array of the new messages
  long long now = 0;
  long long id = 0;

  static std::string sql(const Dialect&) { return body(""); }
  // `from`: more of the FROM list (the guarded form's locked name).
  static std::string body(const std::string& from) {
    return "INSERT INTO messages (queue, payload, status, retry_count, max_retries, retry_after, "
           "created_at, updated_at, priority, job_type, life_started_at, status_at) "
           "SELECT :queue, item->>'payload', 'pending', 0, CAST(item->>'max_retries' AS BIGINT), "
           "CAST(item->>'run_at' AS BIGINT), :now, :now, CAST(item->>'priority' AS BIGINT), "
           "item->>'job_type', :now, :now "
           "FROM json_array_elements(CAST(:items AS json)) WITH ORDINALITY AS t(item, ord)" +
           from + " ORDER BY ord RETURNING id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(id));
    st.exchange(use(queue, "queue"));
    st.exchange(use(now, "now"));
    st.exchange(use(items, "items"));
  }
};

// The batch with its queue's name found and locked, as InsertMessageGuarded: no rows when the
// name is not kept yet.
struct InsertMessagesGuarded : InsertMessages {
  static std::string sql(const Dialect&) {
    return "WITH name AS (SELECT 1 FROM queue_names WHERE queue = :queue FOR KEY SHARE) " +
           body(", name");
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

}  // namespace

struct MessageInsertSql::Statements {
  Prepared<InsertMessage> insert;
  Prepared<InsertMessageGuarded> insert_guarded;
  Prepared<InsertMessages> insert_many;
  Prepared<InsertMessagesGuarded> insert_many_guarded;
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

std::vector<Inserted> MessageInsertSql::insert_many(const InsertParams& p, bool guarded) {
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
  std::vector<MessageId> ids;
  ids.reserve(p.messages.size());
  auto run = [&](auto& s) {
    s.binds().queue = p.queue;
    s.binds().now = p.now;
    s.binds().items = boost::json::serialize(items);
    for_each_row(c_, s.on(c_), [&] { ids.push_back(s.binds().id); });
  };
  if (guarded) {
    run(kept_->insert_many_guarded);
    if (ids.empty()) return {};  // the name is not kept yet
  } else {
    run(kept_->insert_many);
  }
  if (ids.size() != p.messages.size()) throw std::runtime_error("batch insert lost rows");
  std::sort(ids.begin(), ids.end());
  std::vector<Inserted> out;
  out.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.push_back({stored_message(p.queue, p.messages[i], p.now, ids[i]), true});
  }
  return out;
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
  auto refused = [&]() -> Result<std::vector<Inserted>> {
    return Error::validation({{"queue",
                               "too many queues: at most " + std::to_string(p.max_queues) +
                                   " may hold messages (limits.max_queues)",
                               "limit"}});
  };
  // PostgreSQL: the transaction's first INSERT into the queue finds and locks the name itself;
  // only when it stores nothing does admit() look, add or refuse the name (a refusal then still
  // leaves nothing behind). SQLite, or a name this transaction holds: admitted first.
  bool guarded = !c_.is_sqlite() && !names_.holds(p.queue);
  if (!guarded && !names_.admit(p.queue, p.max_queues)) return refused();
  bool keyless = std::none_of(p.messages.begin(), p.messages.end(),
                              [](const NewMessage& m) { return m.idempotency_key.has_value(); });
  if (c_.dialect().combines_statements && keyless && p.messages.size() > 1) {
    if (guarded) {
      auto out = insert_many(p, true);
      if (!out.empty()) {
        names_.hold(p.queue);
        return out;
      }
      if (!names_.admit(p.queue, p.max_queues)) return refused();
    }
    return insert_many(p, false);
  }
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

}  // namespace dlq::store

// The SQS queue registry's SQL.
#include "store/sqs_queue_sql.hpp"

#include "store/connection.hpp"
#include "store/dialect.hpp"
#include "store/message_row.hpp"
#include "store/prepared.hpp"
#include "store/soci_optional.hpp"

namespace dlq::store {
namespace {

const char* const kRowColumns = "name, attributes, tags, created_at, updated_at, retention_set_at";
// New names are admitted one at a time across nodes, with queue_names' own admissions, so that
// the count limits.max_queues checks includes every committed name (QueueNamesSql::admit).
constexpr const char* kAdmitLock = "SELECT pg_advisory_xact_lock(7274011)";

struct RowBinds {
  std::string name, attributes, tags;
  long long created_at = 0, updated_at = 0;
  std::optional<long long> retention_set_at;

  void into_all(soci::statement& st) {
    st.exchange(soci::into(name));
    st.exchange(soci::into(attributes));
    st.exchange(soci::into(tags));
    st.exchange(soci::into(created_at));
    st.exchange(soci::into(updated_at));
    st.exchange(soci::into(retention_set_at));
  }
  SqsQueueRow row() const {
    return {name, attributes, tags, created_at, updated_at, retention_set_at};
  }
};

}  // namespace

std::optional<SqsQueueRow> SqsQueueSql::find_locked(const std::string& name, bool lock) {
  std::string key = name;
  RowBinds b;
  std::string sql = std::string("SELECT ") + kRowColumns + " FROM sqs_queues WHERE name = :name";
  if (lock && !c_.is_sqlite()) sql += " FOR UPDATE";
  soci::statement st = prepare_call(c_, sql, [&](soci::statement& s) {
    b.into_all(s);
    s.exchange(soci::use(key, "name"));
  });
  if (!run_once(c_, st)) return std::nullopt;
  return b.row();
}

std::optional<SqsQueueRow> SqsQueueSql::find(const std::string& name) {
  return find_locked(name, false);
}

Result<std::optional<SqsQueueRow>> SqsQueueSql::change(const std::string& name,
                                                       const DecideSqsQueue& decide) {
  auto existing = find_locked(name, true);
  long long in_use = 0;
  if (!existing) {
    if (!c_.is_sqlite()) {
      c_.execute(kAdmitLock);
      existing = find_locked(name, true);  // created while this one waited for the lock
    }
    if (!existing) {
      c_.session() << "SELECT COUNT(*) FROM (SELECT name FROM sqs_queues UNION "
                      "SELECT queue FROM queue_names) AS names",
          soci::into(in_use);
    }
  }
  auto decided = decide(existing, in_use);
  if (!decided) return decided.error();
  if (!decided->put) return existing;
  SqsQueueRow r = decided->row;
  std::string key = name;
  long long created_at = r.created_at, updated_at = r.updated_at;
  std::optional<long long> retention_set_at = r.retention_set_at;
  c_.session() << "INSERT INTO sqs_queues (name, attributes, tags, created_at, updated_at, "
                  "retention_set_at) VALUES (:name, :attributes, :tags, :created_at, :updated_at, "
                  ":retention_set_at) ON CONFLICT (name) DO UPDATE SET "
                  "attributes = excluded.attributes, tags = excluded.tags, "
                  "updated_at = excluded.updated_at, retention_set_at = excluded.retention_set_at",
      soci::use(key, "name"), soci::use(r.attributes, "attributes"), soci::use(r.tags, "tags"),
      soci::use(created_at, "created_at"), soci::use(updated_at, "updated_at"),
      soci::use(retention_set_at, "retention_set_at");
  r.name = name;
  return std::optional<SqsQueueRow>(std::move(r));
}

std::vector<SqsQueueRow> SqsQueueSql::page(const SqsQueuePage& p) {
  // Byte order: sqs_queues.name compares as bytes on both databases (COLLATE "C" on PostgreSQL).
  std::string after = p.after.value_or("");
  std::string low = std::max(after, p.prefix);
  // Names starting with the prefix are those from it up to (not including) the prefix with its
  // last byte raised; an empty prefix has no upper end.
  std::string sql = std::string("SELECT ") + kRowColumns + " FROM sqs_queues WHERE name " +
                    (p.after && after >= p.prefix ? ">" : ">=") + " :low";
  std::string high;
  if (!p.prefix.empty()) {
    high = p.prefix;
    high.back() = static_cast<char>(high.back() + 1);  // names are ASCII [A-Za-z0-9_-]
    sql += " AND name < :high";
  }
  sql += " ORDER BY name LIMIT :limit";
  long long limit = p.limit;
  RowBinds b;
  std::vector<SqsQueueRow> out;
  soci::statement st = prepare_call(c_, sql, [&](soci::statement& s) {
    b.into_all(s);
    s.exchange(soci::use(low, "low"));
    if (!p.prefix.empty()) s.exchange(soci::use(high, "high"));
    s.exchange(soci::use(limit, "limit"));
  });
  for_each_row(c_, st, [&] { out.push_back(b.row()); });
  return out;
}

bool SqsQueueSql::remove(const std::string& name) {
  std::string key = name;
  soci::statement st = prepare_call(c_, "DELETE FROM sqs_queues WHERE name = :name",
                                    [&](soci::statement& s) { s.exchange(soci::use(key, "name")); });
  st.execute(true);
  bool removed = st.get_affected_rows() > 0;
  c_.finish(st);
  return removed;
}

long long SqsQueueSql::dead_count(const std::string& queue) {
  std::string key = queue, target = queue;
  long long n = 0;
  c_.session() << "SELECT COUNT(*) FROM messages WHERE status = 'dead' AND (queue = :queue OR "
                  "dead_letter_queue = :target)",
      soci::into(n), soci::use(key, "queue"), soci::use(target, "target");
  return n;
}

// ---- the dead-letter queue's view (issue 39) -------------------------------------------------

namespace {
// Dead letters of one dead-letter queue that no receive hides at :now.
constexpr const char* kShown =
    " FROM messages WHERE dead_letter_queue = :dlq AND status = 'dead' AND "
    "(sqs_hidden_until IS NULL OR sqs_hidden_until <= :now)";
}  // namespace

std::vector<Message> SqsQueueSql::dead_receive(const SqsDeadReceive& p) {
  std::string dlq = p.dlq;
  long long now = p.now, limit = p.max;
  MessageRow row;
  // PostgreSQL: rows another node's receive holds are skipped, not waited for.
  auto st = prepare_call(c_,
                         "SELECT " + std::string(kMessageColumns) + kShown +
                             " ORDER BY dead_at, id LIMIT :limit" +
                             c_.dialect().for_update_skip_locked,
                         [&](soci::statement& s) {
                           row.exchange_into(s);
                           s.exchange(soci::use(dlq, "dlq"));
                           s.exchange(soci::use(now, "now"));
                           s.exchange(soci::use(limit, "limit"));
                         });
  auto found = fetch_messages(c_, st, row);
  MessageId id = 0;
  long long until = p.hidden_until;
  std::string receipt = p.receipt;
  soci::statement hide = prepare_call(
      c_, "UPDATE messages SET sqs_hidden_until = :until, sqs_receipt = :receipt WHERE id = :id",
      [&](soci::statement& s) {
        s.exchange(soci::use(until, "until"));
        s.exchange(soci::use(receipt, "receipt"));
        s.exchange(soci::use(id, "id"));
      });
  for (auto& m : found) {
    id = m.id;
    hide.execute(true);
    m.sqs_hidden_until = until;
    m.sqs_receipt = receipt;
  }
  c_.finish(hide);
  return found;
}

bool SqsQueueSql::dead_hide(const SqsDeadHide& p) {
  std::string dlq = p.dlq, receipt = p.receipt;
  long long id = p.id, until = p.hidden_until;
  soci::statement st = prepare_call(
      c_,
      "UPDATE messages SET sqs_hidden_until = :until WHERE id = :id AND status = 'dead' AND "
      "dead_letter_queue = :dlq AND sqs_receipt = :receipt",
      [&](soci::statement& s) {
        s.exchange(soci::use(until, "until"));
        s.exchange(soci::use(id, "id"));
        s.exchange(soci::use(dlq, "dlq"));
        s.exchange(soci::use(receipt, "receipt"));
      });
  st.execute(true);
  bool changed = st.get_affected_rows() > 0;
  c_.finish(st);
  return changed;
}

SqsDeadCounts SqsQueueSql::dead_counts(const std::string& dlq, TimeMs now) {
  std::string key = dlq;
  long long at = now;
  SqsDeadCounts out;
  c_.session() << "SELECT COUNT(CASE WHEN sqs_hidden_until IS NULL OR sqs_hidden_until <= :now "
                  "THEN 1 END), COUNT(CASE WHEN sqs_hidden_until > :later THEN 1 END) FROM "
                  "messages WHERE dead_letter_queue = :dlq AND status = 'dead'",
      soci::into(out.visible), soci::into(out.hidden), soci::use(at, "now"),
      soci::use(at, "later"), soci::use(key, "dlq");
  return out;
}

}  // namespace dlq::store

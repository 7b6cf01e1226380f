// The audit log's SQL. The same text serves both databases; binds are named and sit next to
// their SQL.
#include "store/audit_sql.hpp"

#include <boost/json.hpp>

#include "store/connection.hpp"
#include "store/prepared.hpp"

namespace dlq::store {
namespace json = boost::json;

namespace {

constexpr const char* kInsertAudit =
    "INSERT INTO audit_log (at, actor, action, queue, message_ids, filter, reason, details) "
    "VALUES (:at, :actor, :action, :queue, :message_ids, :filter, :reason, :details)";

constexpr const char* kSelectAudit =
    "SELECT id, at, actor, action, queue, message_ids, filter, reason, details FROM audit_log";

std::string ids_text(const std::vector<MessageId>& ids) {
  json::array a;
  for (auto id : ids) a.emplace_back(id);
  return json::serialize(a);
}

std::vector<MessageId> ids_from_text(const std::string& text) {
  std::vector<MessageId> out;
  std::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& item : v.get_array()) {
    if (item.is_int64()) out.push_back(item.get_int64());
  }
  return out;
}

soci::indicator null_if_empty(const std::optional<std::string>& v) {
  return v ? soci::i_ok : soci::i_null;
}

}  // namespace

void AuditSql::append(const AuditEntry& e) {
  long long at = e.at;
  std::string actor = e.actor.value_or(""), queue = e.queue.value_or(""),
              filter = e.filter.value_or(""), reason = e.reason.value_or(""),
              details = e.details.value_or(""), action = e.action;
  std::optional<std::string> ids;
  if (!e.message_ids.empty()) ids = ids_text(e.message_ids);
  std::string ids_value = ids.value_or("");
  soci::indicator actor_ind = null_if_empty(e.actor), queue_ind = null_if_empty(e.queue),
                  ids_ind = null_if_empty(ids), filter_ind = null_if_empty(e.filter),
                  reason_ind = null_if_empty(e.reason), details_ind = null_if_empty(e.details);
  c_.session() << kInsertAudit, soci::use(at, "at"), soci::use(actor, actor_ind, "actor"),
      soci::use(action, "action"), soci::use(queue, queue_ind, "queue"),
      soci::use(ids_value, ids_ind, "message_ids"), soci::use(filter, filter_ind, "filter"),
      soci::use(reason, reason_ind, "reason"), soci::use(details, details_ind, "details");
}

namespace {

// A query's filters as SQL: only the members given become clauses, so each page is served from
// the (filter, id) index. The binds must outlive the statement's execution.
struct AuditWhere {
  explicit AuditWhere(const AuditQuery& query)
      : q(query),
        action(q.action.value_or("")),
        actor(q.actor.value_or("")),
        queue(q.queue.value_or("")),
        since(q.since.value_or(0)),
        until(q.until.value_or(0)),
        before(q.before_id.value_or(0)),
        limit(q.limit) {}

  const AuditQuery& q;
  std::string action, actor, queue;
  long long since, until, before, limit;

  // " WHERE … ORDER BY id DESC LIMIT :limit": the page, newest first.
  std::string page_sql() const {
    std::string where;
    auto clause = [&where](const char* text) {
      where += (where.empty() ? " WHERE " : " AND ") + std::string(text);
    };
    if (q.action) clause("action = :action");
    if (q.actor) clause("actor = :actor");
    if (q.queue) clause("queue = :queue");
    if (q.since) clause("at >= :since");
    if (q.until) clause("at <= :until");
    if (q.before_id) clause("id < :before_id");
    return where + " ORDER BY id DESC LIMIT :limit";
  }
  void exchange(soci::statement& s) {
    if (q.action) s.exchange(soci::use(action, "action"));
    if (q.actor) s.exchange(soci::use(actor, "actor"));
    if (q.queue) s.exchange(soci::use(queue, "queue"));
    if (q.since) s.exchange(soci::use(since, "since"));
    if (q.until) s.exchange(soci::use(until, "until"));
    if (q.before_id) s.exchange(soci::use(before, "before_id"));
    s.exchange(soci::use(limit, "limit"));
  }
};

// One row of kSelectAudit: its buffers, bound in the column order, and the entry they make.
struct AuditRow {
  long long id = 0, at = 0;
  std::string action, actor, queue, ids, filter, reason, details;
  soci::indicator actor_ind{}, queue_ind{}, ids_ind{}, filter_ind{}, reason_ind{}, details_ind{};

  void exchange_into(soci::statement& s) {
    s.exchange(soci::into(id));
    s.exchange(soci::into(at));
    s.exchange(soci::into(actor, actor_ind));
    s.exchange(soci::into(action));
    s.exchange(soci::into(queue, queue_ind));
    s.exchange(soci::into(ids, ids_ind));
    s.exchange(soci::into(filter, filter_ind));
    s.exchange(soci::into(reason, reason_ind));
    s.exchange(soci::into(details, details_ind));
  }
  AuditEntry to_entry() {
    auto text = [](soci::indicator ind, std::string& v) -> std::optional<std::string> {
      if (ind != soci::i_ok) return std::nullopt;
      return std::move(v);
    };
    AuditEntry e;
    e.id = id;
    e.at = at;
    e.actor = text(actor_ind, actor);
    e.action = action;
    e.queue = text(queue_ind, queue);
    if (ids_ind == soci::i_ok) e.message_ids = ids_from_text(ids);
    e.filter = text(filter_ind, filter);
    e.reason = text(reason_ind, reason);
    e.details = text(details_ind, details);
    return e;
  }
};

}  // namespace

std::vector<AuditEntry> AuditSql::list(const AuditQuery& q) {
  AuditWhere where(q);
  AuditRow row;
  soci::statement st = prepare_call(c_, kSelectAudit + where.page_sql(), [&](soci::statement& s) {
    row.exchange_into(s);
    where.exchange(s);
  });
  std::vector<AuditEntry> out;
  for_each_row(c_, st, [&] { out.push_back(row.to_entry()); });
  return out;
}

std::vector<long long> AuditSql::ids(const AuditQuery& q) {
  AuditWhere where(q);
  long long id = 0;
  soci::statement st =
      prepare_call(c_, "SELECT id FROM audit_log" + where.page_sql(), [&](soci::statement& s) {
        s.exchange(soci::into(id));
        where.exchange(s);
      });
  std::vector<long long> out;
  for_each_row(c_, st, [&] { out.push_back(id); });
  return out;
}

std::optional<AuditEntry> AuditSql::find(long long id) {
  long long in_id = id;
  AuditRow row;
  soci::statement st =
      prepare_call(c_, std::string(kSelectAudit) + " WHERE id = :id", [&](soci::statement& s) {
        row.exchange_into(s);
        s.exchange(soci::use(in_id, "id"));
      });
  if (!run_once(c_, st)) return std::nullopt;
  return row.to_entry();
}

}  // namespace dlq::store

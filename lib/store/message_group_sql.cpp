// PostgreSQL: a commit group's acknowledged rows locked and read in one statement, and their
// transitions written in one, each row with its history entry, from a JSON array
// (json_to_recordset).
#include "store/message_group_sql.hpp"

#include <string>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "store/message_row.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::use;

namespace {

// Both statements below find their rows by `id = ANY(ARRAY(…))`, which the planner takes for
// about 10 ids and so probes the primary key for them once the table holds more than a few
// hundred rows; an `IN` over the set-returning function is taken for 100, and that picks a hash
// join over a scan of the whole table until it holds thousands. Both are prepared again at
// doubling run counts (kReplanFrom, Prepared): a plan cached once, while a fresh database's
// messages table was nearly empty, would scan the whole table for the connection's life
// (docs/performance.md, "Plans made for a young table").
constexpr long long kReplanRuns = 64;

// The messages a group's jobs will lock, locked in id order and read in one statement.
struct SelectNamedForUpdate {
  static constexpr long long kReplanFrom = kReplanRuns;
  MessageRow row;
  std::string ids;  // a JSON array

  static std::string sql(const Dialect& d) {
    return std::string("SELECT ") + kMessageColumns + " FROM messages WHERE id = ANY(ARRAY(" +
           d.json_ids("ids") + ")) ORDER BY id" + d.for_update;
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(ids, "ids"));
  }
};

// The SQL type and JSON value of a row's field, for json_to_recordset.
const char* pg_type(const long long&) { return "bigint"; }
const char* pg_type(const std::string&) { return "text"; }
template <class T>
const char* pg_type(const std::optional<T>&) {
  return pg_type(T{});
}
boost::json::value json_of(const long long& v) { return v; }
boost::json::value json_of(const std::string& v) { return boost::json::string(v); }
template <class T>
boost::json::value json_of(const std::optional<T>& v) {
  return v ? json_of(*v) : boost::json::value(nullptr);
}

// The transitions a group left to its end, each row with its one history entry, in one
// statement; the rows come as a JSON array, the history's fields prefixed a_, `ord` their order.
struct UpdateManyWithAttempts {
  static constexpr long long kReplanFrom = kReplanRuns;
  std::string rows;

  static std::string sql(const Dialect&) {
    std::string fields = "ord bigint", set, entry_columns = "message_id", entry_values = "v.id";
    MessageUpdateRow().each([&](std::string name, const auto& value) {
      fields += ", " + name + " " + pg_type(value);
      if (name != "id") set += (set.empty() ? "" : ", ") + name + " = v." + name;
    });
    AttemptRow().each([&](std::string name, const auto& value) {
      if (name == "message_id") return;
      fields += ", a_" + name + " " + pg_type(value);
      entry_columns += ", " + name;
      entry_values += ", v.a_" + name;
    });
    return "WITH v AS MATERIALIZED (SELECT * FROM json_to_recordset(CAST(:rows AS json)) AS t(" +
           fields + ")), updated AS (UPDATE messages SET " + set +
           " FROM v WHERE messages.id = v.id AND messages.id = ANY(ARRAY(SELECT id FROM v))) "
           "INSERT INTO attempts (" + entry_columns +
           ") SELECT " + entry_values + " FROM v ORDER BY v.ord";
  }
  void exchange(soci::statement& st, const Dialect&) { st.exchange(use(rows, "rows")); }
};

}  // namespace

struct MessageGroupSql::Statements {
  Prepared<SelectNamedForUpdate> select_named;
  Prepared<UpdateManyWithAttempts> update_many_with_attempts;
};

MessageGroupSql::MessageGroupSql(Connection& c, WriteOne write_one)
    : c_(c), write_one_(std::move(write_one)), kept_(std::make_unique<Statements>()) {}

MessageGroupSql::~MessageGroupSql() = default;

std::optional<Message> MessageGroupSql::take(MessageId id) {
  if (!named_.count(id)) return std::nullopt;
  // Alone, a named message is locked as any other: the group's statement would save nothing.
  if (!held_current_ && named_.size() > 1) lock_named();
  named_.erase(id);
  auto it = held_.find(id);
  if (it == held_.end()) return std::nullopt;
  Message m = std::move(it->second);
  held_.erase(it);
  return m;
}

void MessageGroupSql::lock_named() {
  boost::json::array ids;
  for (MessageId id : named_) ids.push_back(id);
  auto& s = kept_->select_named;
  s.binds().ids = boost::json::serialize(ids);
  held_.clear();
  for (auto& m : fetch_messages(c_, s.on(c_), s.binds().row)) {
    MessageId id = m.id;
    held_.emplace(id, std::move(m));
  }
  held_current_ = true;
}

void MessageGroupSql::forget_all() {
  held_.clear();
  held_current_ = false;
}

void MessageGroupSql::leave(const Message& m, const AttemptRecord& a) {
  held_.erase(m.id);
  waiting_ids_.insert(m.id);
  waiting_.emplace_back(m, a);
}

void MessageGroupSql::write_waiting() {
  if (waiting_.empty()) return;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  waiting_ids_.clear();
  if (waiting.size() == 1) {
    write_one_(waiting.front().first, waiting.front().second);
    return;
  }
  boost::json::array rows;
  rows.reserve(waiting.size());
  long long ord = 0;
  MessageUpdateRow row;
  AttemptRow entry;
  for (const auto& [m, a] : waiting) {
    boost::json::object o;
    o["ord"] = ord++;
    row.assign(m);
    row.each([&](const char* name, const auto& value) { o[name] = json_of(value); });
    entry.assign(a);
    entry.each([&](std::string name, const auto& value) {
      if (name != "message_id") o["a_" + name] = json_of(value);
    });
    rows.push_back(std::move(o));
  }
  auto& s = kept_->update_many_with_attempts;
  s.binds().rows = boost::json::serialize(rows);
  run_once(c_, s.on(c_));
}

void MessageGroupSql::clear() {
  named_.clear();
  forget_all();
  waiting_.clear();
  waiting_ids_.clear();
}

}  // namespace dlq::store

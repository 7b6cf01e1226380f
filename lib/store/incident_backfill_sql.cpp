// The backfill's statements beside their named binds.
#include "store/incident_backfill_sql.hpp"

#include <boost/json.hpp>

#include "store/connection.hpp"
#include "store/incident_sql.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

// Dead messages without a fingerprint after an id, with the stack of their last failed attempt
// (messages_dead_by_fingerprint_id answers the NULL fingerprints in id order). The ORDER BY names
// the index's own order: PostgreSQL does not take `IS NULL` as fixing its first column, and
// sorted every row still without a fingerprint for each batch under `ORDER BY m.id` (386 ms a
// batch with 300,000 left; 4.8 ms now). All of them are NULL: the order is the id's.
struct SelectUnprinted {
  long long id = 0, dead_at = 0, after = 0, limit = 0;
  std::string queue;
  std::optional<std::string> job_type, error_class, last_error, dead_reason, stack;

  static std::string sql(const Dialect&) {
    return "SELECT m.id, m.queue, m.job_type, m.error_class, m.last_error, m.dead_reason, "
           "m.dead_at, (SELECT a.stack FROM attempts a WHERE a.message_id = m.id "
           "AND a.outcome = 'failed' ORDER BY a.id DESC LIMIT 1) "
           "FROM messages m WHERE m.status = 'dead' AND m.fingerprint IS NULL "
           "AND m.dead_at IS NOT NULL AND m.id > :after ORDER BY m.fingerprint, m.id LIMIT :limit";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(id));
    st.exchange(into(queue));
    st.exchange(into(job_type));
    st.exchange(into(error_class));
    st.exchange(into(last_error));
    st.exchange(into(dead_reason));
    st.exchange(into(dead_at));
    st.exchange(into(stack));
    st.exchange(use(after, "after"));
    st.exchange(use(limit, "limit"));
  }
};

// One message's fingerprint and title, only while it is still dead without one.
struct SetPrint {
  long long id = 0;
  std::string fingerprint, title;

  static std::string sql(const Dialect&) {
    return "UPDATE messages SET fingerprint = :fingerprint, title = :title "
           "WHERE id = :id AND status = 'dead' AND fingerprint IS NULL";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(fingerprint, "fingerprint"));
    st.exchange(use(title, "title"));
    st.exchange(use(id, "id"));
  }
};

// PostgreSQL: a batch's fingerprints and titles in one statement over a JSON array of them (a
// round trip per row was most of a batch's time), the rows locked in id order as SetPrint locks
// them one by one, so that two nodes' backfills wait for each other rather than deadlock. A row
// that stopped being dead, or got its fingerprint from another node while this one waited, is
// left alone (the lock re-checks it) and not returned. The rows are found by id: `COALESCE(…) =
// ''` (no fingerprint is empty) keeps the planner off the NULL-fingerprint index, which it
// takes for a few rows when the column has no statistics yet, as after migration 012 — then it
// read every row without a fingerprint per batch (2.6 s a batch with 300,000 left; 94 ms now).
struct SetPrintsAtOnce {
  std::string rows;
  long long id = 0;

  static std::string sql(const Dialect&) {
    return "WITH v AS (SELECT * FROM json_to_recordset(CAST(:rows AS JSON)) "
           "AS v(id BIGINT, fingerprint TEXT, title TEXT)), "
           "locked AS (SELECT m.id FROM messages m WHERE m.id = ANY (ARRAY(SELECT id FROM v)) "
           "AND m.status = 'dead' AND COALESCE(m.fingerprint, '') = '' ORDER BY m.id FOR UPDATE) "
           "UPDATE messages m SET fingerprint = v.fingerprint, title = v.title "
           "FROM v JOIN locked ON locked.id = v.id "
           "WHERE m.id = v.id AND m.status = 'dead' AND COALESCE(m.fingerprint, '') = '' "
           "RETURNING m.id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(id));
    st.exchange(use(rows, "rows"));
  }
};

}  // namespace

struct IncidentBackfillSql::Statements {
  Prepared<SelectUnprinted> select;
  Prepared<SetPrint> set;
  Prepared<SetPrintsAtOnce> set_at_once;
};

IncidentBackfillSql::IncidentBackfillSql(Connection& c, IncidentSql& incidents)
    : c_(c), incidents_(incidents), kept_(std::make_unique<Statements>()) {}

IncidentBackfillSql::~IncidentBackfillSql() = default;

std::vector<UnprintedDead> IncidentBackfillSql::unprinted(MessageId after, int limit) {
  auto& s = kept_->select;
  auto& b = s.binds();
  b.after = after;
  b.limit = limit;
  std::vector<UnprintedDead> out;
  for_each_row(c_, s.on(c_), [&] {
    UnprintedDead m;
    m.id = b.id;
    m.queue = b.queue;
    m.job_type = b.job_type;
    if (b.error_class) m.error_class = parse_error_class(*b.error_class);
    m.last_error = b.last_error;
    if (b.dead_reason) m.dead_reason = parse_dead_reason(*b.dead_reason);
    m.dead_at = b.dead_at;
    m.stack = b.stack;
    out.push_back(std::move(m));
  });
  return out;
}

std::unordered_set<MessageId> IncidentBackfillSql::set_prints(const std::vector<PrintedDead>& rows) {
  std::unordered_set<MessageId> changed;
  if (!c_.is_sqlite()) {
    boost::json::array v;
    v.reserve(rows.size());
    for (const auto& r : rows) {
      // The title up to a NUL, as a text parameter holds it (JSON's escaped NUL is not text).
      v.push_back(boost::json::object{{"id", r.id},
                                      {"fingerprint", r.fingerprint},
                                      {"title", boost::json::string_view(r.title.c_str())}});
    }
    auto& s = kept_->set_at_once;
    s.binds().rows = boost::json::serialize(v);
    for_each_row(c_, s.on(c_), [&] { changed.insert(s.binds().id); });
    return changed;
  }
  auto& s = kept_->set;
  auto& b = s.binds();
  for (const auto& r : rows) {
    b.id = r.id;
    b.fingerprint = r.fingerprint;
    b.title = r.title;
    auto& st = s.on(c_);
    st.execute(true);
    if (st.get_affected_rows() > 0) changed.insert(r.id);
    c_.finish(st);
  }
  return changed;
}

long long IncidentBackfillSql::write(const std::vector<PrintedDead>& rows) {
  const auto changed = set_prints(rows);
  long long written = 0;
  for (const auto& r : rows) {
    if (!changed.contains(r.id)) continue;
    ++written;
    IncidentDeath d;
    d.fingerprint = r.fingerprint;
    d.title = r.title;
    if (r.incident_error_class) d.error_class = std::string(to_string(*r.incident_error_class));
    d.job_type = r.job_type;
    d.queue = r.queue;
    d.dead_at = r.dead_at;
    incidents_.note_death(d);
  }
  return written;
}

}  // namespace dlq::store

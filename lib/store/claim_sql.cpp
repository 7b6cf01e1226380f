// The claim's statements beside their named binds, in the dialect's shape: one UPDATE …
// RETURNING on PostgreSQL, a SELECT and an UPDATE per row on SQLite.
#include "store/claim_sql.hpp"

#include <algorithm>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "store/message_row.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::use;

namespace {

const std::string kColumns = kMessageColumns;

// Which rows a claim takes: due pending messages of the queue, of the asked job types (none
// asked: any), in claim order.
struct ClaimFilter {
  std::string queue, jobs = "[]";  // jobs: a JSON array of job types
  long long now = 0, njobs = 0, max = 0;

  static std::string claimable(const Dialect& d, const std::string& columns) {
    return "SELECT " + columns + " FROM messages WHERE queue = :queue AND status = 'pending' "
           "AND (retry_after IS NULL OR retry_after <= :now) "
           "AND (:njobs = 0 OR job_type IN (" + d.json_texts("jobs") + ")) "
           "ORDER BY priority DESC, created_at, id LIMIT :max";
  }
  void exchange_filter(soci::statement& st) {
    st.exchange(use(queue, "queue"));
    st.exchange(use(now, "now"));
    st.exchange(use(njobs, "njobs"));
    st.exchange(use(jobs, "jobs"));
    st.exchange(use(max, "max"));
  }
};

// PostgreSQL's claim, one statement: it sets everything a new attempt changes on the rows its
// subquery locks (rows another transaction holds are skipped, never waited for).
struct ClaimInOne : ClaimFilter {
  MessageRow row;
  std::string token;
  long long until = 0;
  std::optional<std::string> worker;

  static std::string sql(const Dialect& d) {
    return "UPDATE messages SET status = 'processing', lease_id = :token || '-' || id, "
           "lease_expires_at = :until, worker = :worker, attempts = attempts + 1, "
           "first_attempt_at = COALESCE(first_attempt_at, :now), last_attempt_at = :now, "
           "updated_at = :now, status_at = :now "
           "WHERE id IN (" + claimable(d, "id") + d.for_update_skip_locked + ") RETURNING " +
           kColumns;
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(token, "token"));
    st.exchange(use(until, "until"));
    st.exchange(use(worker, "worker"));
    exchange_filter(st);
  }
};

// SQLite's claim, first step: the claimable rows.
struct ClaimSelect : ClaimFilter {
  MessageRow row;

  static std::string sql(const Dialect& d) { return claimable(d, kColumns); }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    exchange_filter(st);
  }
};

// SQLite's claim, second step: one row marked claimed.
struct ClaimMark {
  std::string lease_id;
  std::optional<std::string> worker;
  long long until = 0, first_at = 0, now = 0, id = 0;

  static std::string sql(const Dialect&) {
    return "UPDATE messages SET status = 'processing', lease_id = :lease_id, "
           "lease_expires_at = :until, worker = :worker, attempts = attempts + 1, "
           "first_attempt_at = :first_at, last_attempt_at = :now, updated_at = :now, "
           "status_at = :now WHERE id = :id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(lease_id, "lease_id"));
    st.exchange(use(until, "until"));
    st.exchange(use(worker, "worker"));
    st.exchange(use(first_at, "first_at"));
    st.exchange(use(now, "now"));
    st.exchange(use(id, "id"));
  }
};

}  // namespace

struct ClaimSql::Statements {
  Prepared<ClaimInOne> in_one;
  Prepared<ClaimSelect> select;
  Prepared<ClaimMark> mark;
};

ClaimSql::ClaimSql(Connection& c) : c_(c), kept_(std::make_unique<Statements>()) {}

ClaimSql::~ClaimSql() = default;

namespace {

void fill_filter(ClaimFilter& f, const ClaimParams& p) {
  f.queue = p.queue;
  f.now = p.now;
  f.max = p.max;
  f.njobs = static_cast<long long>(p.job_types.size());
  f.jobs = "[]";  // most claims take any job type: no JSON to build
  if (!p.job_types.empty()) {
    boost::json::array jobs;
    for (const auto& j : p.job_types) jobs.emplace_back(j);
    f.jobs = boost::json::serialize(jobs);
  }
}

}  // namespace

std::vector<Message> ClaimSql::claim(const ClaimParams& p) {
  if (!c_.dialect().claim_in_one_statement) return claim_in_two_steps(p);
  auto& s = kept_->in_one;
  auto& b = s.binds();
  fill_filter(b, p);
  b.token = p.lease_token;
  b.until = p.lease_expires_at;
  b.worker = p.worker;
  auto out = fetch_messages(c_, s.on(c_), b.row);
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
std::vector<Message> ClaimSql::claim_in_two_steps(const ClaimParams& p) {
  auto& select = kept_->select;
  fill_filter(select.binds(), p);
  auto out = fetch_messages(c_, select.on(c_), select.binds().row);
  if (out.empty()) return out;
  auto& mark = kept_->mark;
  auto& b = mark.binds();
  b.until = p.lease_expires_at;
  b.worker = p.worker;
  b.now = p.now;
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
    b.lease_id = *m.lease_id;
    b.first_at = *m.first_attempt_at;
    b.id = m.id;
    run_once(c_, mark.on(c_));
  }
  return out;
}

}  // namespace dlq::store

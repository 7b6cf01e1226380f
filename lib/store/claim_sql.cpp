// The claim's statements beside their named binds, in the dialect's shape: one UPDATE …
// RETURNING on PostgreSQL, a SELECT and an UPDATE per row on SQLite.
#include "store/claim_sql.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
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

// What a claim sets on each row it takes (PostgreSQL), from these SQL expressions.
std::string claimed_set(const std::string& token, const std::string& until,
                        const std::string& worker, const std::string& version,
                        const std::string& now) {
  return "status = 'processing', lease_id = " + token + " || '-' || id, lease_expires_at = " +
         until + ", worker = " + worker + ", worker_version = " + version +
         ", attempts = attempts + 1, first_attempt_at = COALESCE(first_attempt_at, " + now +
         "), last_attempt_at = " + now + ", updated_at = " + now + ", status_at = " + now;
}

// What a claim answers (PostgreSQL): every column, the payload only when it is at most
// `per_row` bytes (else ''), then every payload's size.
std::string claimed_columns(const std::string& per_row) {
  std::string columns = kColumns;
  columns.replace(columns.find("payload"), 7,
                  "CASE WHEN octet_length(payload) <= " + per_row + " THEN payload ELSE '' END");
  return columns + ", octet_length(payload)";
}

// PostgreSQL's claim, one statement: it sets everything a new attempt changes on the rows its
// subquery locks (rows another transaction holds are skipped, never waited for). A payload
// comes back only if it is at most `per_row` bytes (the budget over the claim's size), so that
// libpq's result never holds more than the budget; `bytes` is every payload's size, from which
// ClaimSql::claim applies the budget in claim order.
struct ClaimInOne : ClaimFilter {
  MessageRow row;
  std::string token;
  long long until = 0, per_row = 0, bytes = 0;
  std::optional<std::string> worker, worker_version;

  static std::string sql(const Dialect& d) {
    return "UPDATE messages SET " +
           claimed_set(":token", ":until", ":worker", ":worker_version", ":now") +
           " WHERE id IN (" + claimable(d, "id") + d.for_update_skip_locked + ") RETURNING " +
           claimed_columns("CAST(:per_row AS BIGINT)");
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(soci::into(bytes));
    st.exchange(use(token, "token"));
    st.exchange(use(per_row, "per_row"));
    st.exchange(use(until, "until"));
    st.exchange(use(worker, "worker"));
    st.exchange(use(worker_version, "worker_version"));
    exchange_filter(st);
  }
};

// A claimed payload the claim's statement left out although it fits the budget (it alone was
// over the per-row share).
struct PayloadById {
  long long id = 0;
  std::string payload;

  static std::string sql(const Dialect&) { return "SELECT payload FROM messages WHERE id = :id"; }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(soci::into(payload));
    st.exchange(use(id, "id"));
  }
};

// PostgreSQL: the waiting claims of a commit group on one queue and filter, one statement
// (ClaimSql::flush). The rows are taken in claim order as one claim of them all would take them
// (due at the earliest claim's time), numbered, and handed out in the claims' order: each claim's
// rows are the numbers [lo, hi]. Each claim's own lease, worker and time are set on its rows and
// its payload share applies to them; `ord` says whose each row is.
struct ClaimWaiting : ClaimFilter {
  MessageRow row;
  std::string claims;  // a JSON array: one object per claim (rq_* below)
  long long bytes = 0, ord = 0;

  static std::string sql(const Dialect& d) {
    return "WITH rq AS (SELECT * FROM json_to_recordset(CAST(:claims AS json)) AS r(rq_ord BIGINT, "
           "rq_lo BIGINT, rq_hi BIGINT, rq_token TEXT, rq_until BIGINT, rq_worker TEXT, "
           "rq_version TEXT, rq_now BIGINT, rq_per_row BIGINT)), "
           "picked AS (SELECT id AS picked_id, row_number() OVER (ORDER BY priority DESC, "
           "created_at, id) AS picked_rn FROM (" +
           claimable(d, "id, priority, created_at") + d.for_update_skip_locked +
           ") AS c) UPDATE messages SET " +
           claimed_set("rq_token", "rq_until", "rq_worker", "rq_version", "rq_now") +
           " FROM picked JOIN rq ON picked_rn BETWEEN rq_lo AND rq_hi WHERE id = picked_id "
           "RETURNING " + claimed_columns("rq_per_row") + ", rq_ord";
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(soci::into(bytes));
    st.exchange(soci::into(ord));
    st.exchange(use(claims, "claims"));
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
  std::optional<std::string> worker, worker_version;
  long long until = 0, first_at = 0, now = 0, id = 0;

  static std::string sql(const Dialect&) {
    return "UPDATE messages SET status = 'processing', lease_id = :lease_id, "
           "lease_expires_at = :until, worker = :worker, worker_version = :worker_version, "
           "attempts = attempts + 1, "
           "first_attempt_at = :first_at, last_attempt_at = :now, updated_at = :now, "
           "status_at = :now WHERE id = :id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(lease_id, "lease_id"));
    st.exchange(use(until, "until"));
    st.exchange(use(worker, "worker"));
    st.exchange(use(worker_version, "worker_version"));
    st.exchange(use(first_at, "first_at"));
    st.exchange(use(now, "now"));
    st.exchange(use(id, "id"));
  }
};

}  // namespace

struct ClaimSql::Statements {
  Prepared<ClaimInOne> in_one;
  Prepared<ClaimWaiting> waiting;
  Prepared<PayloadById> payload_by_id;
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

// Each claimed row's payload comes back from the claim's statement when it is at most this
// many bytes (the claim's budget over its size), as a bind.
std::size_t payload_share(const ClaimParams& p) {
  return p.payload_budget / static_cast<std::size_t>(std::max(p.max, 1));
}
long long as_bind(std::size_t bytes) {
  return static_cast<long long>(std::min<std::size_t>(bytes, std::numeric_limits<long long>::max()));
}

// Tells, message by message in claim order, whether its payload still fits the claim's budget:
// the first always does, then each while the payloads so far add up to at most the budget (so
// once one does not, none after it does). PostgreSQL's claim computes the same in its SQL.
class PayloadBudget {
 public:
  explicit PayloadBudget(std::size_t budget) : left_(budget) {}
  bool fits(std::size_t bytes) {
    const bool first = first_;
    first_ = false;
    if (!past_ && bytes <= left_) {
      left_ -= bytes;
      return true;
    }
    past_ = true;  // none after this one fits
    return first;
  }

 private:
  std::size_t left_;
  bool first_ = true;
  bool past_ = false;  // one did not fit: none after it does
};

}  // namespace

std::vector<Message> ClaimSql::claim(const ClaimParams& p) {
  if (!c_.dialect().claim_in_one_statement) return claim_in_two_steps(p);
  auto& s = kept_->in_one;
  auto& b = s.binds();
  fill_filter(b, p);
  b.token = p.lease_token;
  b.until = p.lease_expires_at;
  b.worker = p.worker;
  b.worker_version = p.worker_version;
  b.per_row = as_bind(payload_share(p));
  std::vector<std::pair<Message, long long>> rows;  // with each payload's size
  for_each_row(c_, s.on(c_), [&] { rows.emplace_back(b.row.to_message(), b.bytes); });
  return in_claim_order(std::move(rows), p);
}

// RETURNING gives no order guarantee: restore the claim order, then apply the budget in it.
std::vector<Message> ClaimSql::in_claim_order(std::vector<std::pair<Message, long long>> rows,
                                              const ClaimParams& p) {
  const std::size_t share = payload_share(p);
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    const Message &a = x.first, &b = y.first;
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.created_at != b.created_at) return a.created_at < b.created_at;
    return a.id < b.id;
  });
  PayloadBudget budget(p.payload_budget);
  std::vector<Message> out;
  out.reserve(rows.size());
  for (auto& [m, bytes] : rows) {
    const bool left_out = static_cast<std::size_t>(bytes) > share;
    if (!budget.fits(static_cast<std::size_t>(bytes))) {
      m.payload.clear();
      m.payload_withheld = true;
    } else if (left_out) {
      auto& read = kept_->payload_by_id;
      read.binds().id = m.id;
      run_once(c_, read.on(c_));
      m.payload = std::move(read.binds().payload);
    }
    out.push_back(std::move(m));
  }
  return out;
}

// SQLite: read the claimable rows, then mark each claimed. The write transaction is the lock
// (one writer), so nothing can take the rows in between. The same changes as the one-statement
// claim, made in C++ on the rows read.
std::vector<Message> ClaimSql::claim_in_two_steps(const ClaimParams& p) {
  auto& select = kept_->select;
  fill_filter(select.binds(), p);
  // Row by row, so that payloads past the budget are never copied out of the row buffer.
  MessageRow& row = select.binds().row;
  PayloadBudget budget(p.payload_budget);
  std::vector<Message> out;
  for_each_row(c_, select.on(c_), [&] {
    bool within = budget.fits(row.payload.size());
    if (!within) row.payload.clear();
    out.push_back(row.to_message());
    out.back().payload_withheld = !within;
  });
  if (out.empty()) return out;
  auto& mark = kept_->mark;
  auto& b = mark.binds();
  b.until = p.lease_expires_at;
  b.worker = p.worker;
  b.worker_version = p.worker_version;
  b.now = p.now;
  for (Message& m : out) {
    m.status = Status::processing;
    m.lease_id = p.lease_token + "-" + std::to_string(m.id);
    m.lease_expires_at = p.lease_expires_at;
    m.worker = p.worker;
    m.worker_version = p.worker_version;
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

// ---- claims on PostgreSQL, made together at the commit -------------------------------------

void ClaimSql::claim_later(ClaimParams p) {
  if (!c_.dialect().claim_in_one_statement) {
    auto claimed = claim(p);
    blocks_.push_back({ClaimParams{}, std::move(claimed)});
    return;
  }
  blocks_.push_back({std::move(p), std::nullopt});
}

void ClaimSql::flush() {
  // The waiting claims by queue and job types, each set in the order the claims came.
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<Block*>> sets;
  for (auto& b : blocks_) {
    if (!b.result) sets[{b.params.queue, b.params.job_types}].push_back(&b);
  }
  for (auto& [filter, waiting] : sets) {
    if (waiting.size() == 1) {
      waiting.front()->result = claim(waiting.front()->params);
      continue;
    }
    claim_together(waiting);
  }
}

void ClaimSql::claim_together(const std::vector<Block*>& waiting) {
  auto& s = kept_->waiting;
  auto& b = s.binds();
  ClaimParams all = waiting.front()->params;
  boost::json::array claims;
  long long next = 1;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    const ClaimParams& p = waiting[i]->params;
    const int max = std::max(p.max, 0);
    all.now = std::min(all.now, p.now);  // due for every claim of the set
    boost::json::object c;
    c["rq_ord"] = static_cast<long long>(i);
    c["rq_lo"] = next;
    c["rq_hi"] = next + max - 1;
    c["rq_token"] = p.lease_token;
    c["rq_until"] = p.lease_expires_at;
    if (p.worker) c["rq_worker"] = *p.worker;
    if (p.worker_version) c["rq_version"] = *p.worker_version;
    c["rq_now"] = p.now;
    c["rq_per_row"] = as_bind(payload_share(p));
    claims.push_back(std::move(c));
    next += max;
  }
  all.max = static_cast<int>(next - 1);
  fill_filter(b, all);
  b.claims = boost::json::serialize(claims);
  std::vector<std::vector<std::pair<Message, long long>>> rows(waiting.size());
  for_each_row(c_, s.on(c_), [&] {
    if (b.ord < 0 || static_cast<std::size_t>(b.ord) >= rows.size()) {
      throw std::runtime_error("a combined claim answered a claim nobody made");
    }
    rows[static_cast<std::size_t>(b.ord)].emplace_back(b.row.to_message(), b.bytes);
  });
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    waiting[i]->result = in_claim_order(std::move(rows[i]), waiting[i]->params);
  }
}

std::vector<Message> ClaimSql::take() {
  if (blocks_.empty() || !blocks_.front().result) {
    throw std::logic_error("a claim's answer taken before the commit made it");
  }
  auto out = std::move(*blocks_.front().result);
  blocks_.pop_front();
  return out;
}

void ClaimSql::discard() { blocks_.clear(); }

}  // namespace dlq::store

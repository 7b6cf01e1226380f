// The trials' statements. Trials are rare (an operator starts them, one worker loop per process
// asks for them), so every statement is built per call, beside its named binds.
#include "store/trial_sql.hpp"

#include <boost/json.hpp>

#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

const char* const kTrialColumns =
    "id, message_id, queue, job_type, status, actor, reason, payload, created_at, claimed_at, "
    "finished_at, lease_id, lease_expires_at, worker, worker_version, error, error_class, stack, "
    "cause, would_effects";

// One row of `trials`, read or written.
struct TrialRow {
  long long id = 0, message_id = 0, created_at = 0;
  std::string queue, job_type, status, would_effects = "[]";
  std::optional<std::string> actor, reason, payload, lease_id, worker, worker_version, error,
      error_class, stack, cause;
  std::optional<long long> claimed_at, finished_at, lease_expires_at;

  void exchange_into(soci::statement& st) {
    st.exchange(into(id));
    st.exchange(into(message_id));
    st.exchange(into(queue));
    st.exchange(into(job_type));
    st.exchange(into(status));
    st.exchange(into(actor));
    st.exchange(into(reason));
    st.exchange(into(payload));
    st.exchange(into(created_at));
    st.exchange(into(claimed_at));
    st.exchange(into(finished_at));
    st.exchange(into(lease_id));
    st.exchange(into(lease_expires_at));
    st.exchange(into(worker));
    st.exchange(into(worker_version));
    st.exchange(into(error));
    st.exchange(into(error_class));
    st.exchange(into(stack));
    st.exchange(into(cause));
    st.exchange(into(would_effects));
  }
  // The fields a trial's life changes (write) and, for an insert, its identity too.
  void exchange_changes(soci::statement& st) {
    st.exchange(use(status, "status"));
    st.exchange(use(actor, "actor"));
    st.exchange(use(reason, "reason"));
    st.exchange(use(payload, "payload"));
    st.exchange(use(claimed_at, "claimed_at"));
    st.exchange(use(finished_at, "finished_at"));
    st.exchange(use(lease_id, "lease_id"));
    st.exchange(use(lease_expires_at, "lease_expires_at"));
    st.exchange(use(worker, "worker"));
    st.exchange(use(worker_version, "worker_version"));
    st.exchange(use(error, "error"));
    st.exchange(use(error_class, "error_class"));
    st.exchange(use(stack, "stack"));
    st.exchange(use(cause, "cause"));
    st.exchange(use(would_effects, "would_effects"));
  }
  Trial to_trial() const {
    Trial t;
    t.id = id;
    t.message_id = message_id;
    t.queue = queue;
    t.job_type = job_type;
    t.status = parse_trial_status(status).value_or(TrialStatus::expired);
    t.actor = actor;
    t.reason = reason;
    t.payload = payload;
    t.created_at = created_at;
    t.claimed_at = claimed_at;
    t.finished_at = finished_at;
    t.lease_id = lease_id;
    t.lease_expires_at = lease_expires_at;
    t.worker = worker;
    t.worker_version = worker_version;
    t.error = error;
    if (error_class) t.error_class = parse_error_class(*error_class);
    t.stack = stack;
    t.cause = cause;
    t.would_effects = parse_would_effects(would_effects);
    return t;
  }
  void assign(const Trial& t) {
    id = t.id;
    message_id = t.message_id;
    queue = t.queue;
    job_type = t.job_type;
    status = std::string(to_string(t.status));
    actor = t.actor;
    reason = t.reason;
    payload = t.payload;
    created_at = t.created_at;
    claimed_at = t.claimed_at;
    finished_at = t.finished_at;
    lease_id = t.lease_id;
    lease_expires_at = t.lease_expires_at;
    worker = t.worker;
    worker_version = t.worker_version;
    error = t.error;
    error_class = t.error_class ? std::optional<std::string>(std::string(to_string(*t.error_class)))
                                : std::nullopt;
    stack = t.stack;
    cause = t.cause;
    would_effects = would_effects_json(t.would_effects);
  }
};

}  // namespace

// `where` may bind :a and :b.
std::vector<Trial> TrialSql::select(const std::string& where, long long a, long long b) {
  TrialRow row;
  auto st = prepare_call(c_, std::string("SELECT ") + kTrialColumns + " FROM trials WHERE " + where,
                         [&](soci::statement& s) {
                           row.exchange_into(s);
                           if (where.find(":a") != std::string::npos) s.exchange(use(a, "a"));
                           if (where.find(":b") != std::string::npos) s.exchange(use(b, "b"));
                         });
  std::vector<Trial> out;
  for_each_row(c_, st, [&] { out.push_back(row.to_trial()); });
  return out;
}

std::optional<Trial> TrialSql::find(long long trial_id) {
  auto found = select("id = :a", trial_id, 0);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::optional<Trial> TrialSql::open_for(MessageId message_id) {
  auto found = select("message_id = :a AND status IN ('pending', 'running') ORDER BY id", message_id, 0);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::optional<Trial> TrialSql::lock(long long trial_id) {
  auto found = select("id = :a" + c_.dialect().for_update, trial_id, 0);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

Trial TrialSql::insert(Trial t) {
  const Dialect& d = c_.dialect();
  TrialRow row;
  row.assign(t);
  long long id = 0;
  auto st = prepare_call(
      c_,
      std::string("INSERT INTO trials (message_id, queue, job_type, created_at, status, actor, "
                  "reason, payload, claimed_at, finished_at, lease_id, lease_expires_at, worker, "
                  "worker_version, error, error_class, stack, cause, would_effects) VALUES "
                  "(:message_id, :queue, :job_type, :created_at, :status, :actor, :reason, "
                  ":payload, :claimed_at, :finished_at, :lease_id, :lease_expires_at, :worker, "
                  ":worker_version, :error, :error_class, :stack, :cause, :would_effects)") +
          (d.insert_returns_id ? " RETURNING id" : ""),
      [&](soci::statement& s) {
        if (d.insert_returns_id) s.exchange(into(id));
        s.exchange(use(row.message_id, "message_id"));
        s.exchange(use(row.queue, "queue"));
        s.exchange(use(row.job_type, "job_type"));
        s.exchange(use(row.created_at, "created_at"));
        row.exchange_changes(s);
      });
  run_once(c_, st);
  if (!d.insert_returns_id) id = c_.last_insert_rowid();
  t.id = id;
  return t;
}

void TrialSql::write(const Trial& t) {
  TrialRow row;
  row.assign(t);
  auto st = prepare_call(c_,
                         "UPDATE trials SET status = :status, actor = :actor, reason = :reason, "
                         "payload = :payload, claimed_at = :claimed_at, finished_at = :finished_at, "
                         "lease_id = :lease_id, lease_expires_at = :lease_expires_at, "
                         "worker = :worker, worker_version = :worker_version, error = :error, "
                         "error_class = :error_class, stack = :stack, cause = :cause, "
                         "would_effects = :would_effects WHERE id = :id",
                         [&](soci::statement& s) {
                           row.exchange_changes(s);
                           s.exchange(use(row.id, "id"));
                         });
  run_once(c_, st);
}

std::vector<Trial> TrialSql::claim(const ClaimParams& p) {
  if (p.job_types.empty() || p.max <= 0) return {};
  boost::json::array types;
  for (const auto& t : p.job_types) types.emplace_back(t);
  std::string job_types = boost::json::serialize(types);
  std::string queue = p.queue;
  long long limit = p.max;
  TrialRow row;
  auto st = prepare_call(c_,
                         std::string("SELECT ") + kTrialColumns +
                             " FROM trials WHERE queue = :queue AND status = 'pending' AND "
                             "job_type IN (" + c_.dialect().json_texts("job_types") +
                             ") ORDER BY id LIMIT :limit" + c_.dialect().for_update_skip_locked,
                         [&](soci::statement& s) {
                           row.exchange_into(s);
                           s.exchange(use(queue, "queue"));
                           s.exchange(use(job_types, "job_types"));
                           s.exchange(use(limit, "limit"));
                         });
  std::vector<Trial> taken;
  for_each_row(c_, st, [&] { taken.push_back(row.to_trial()); });
  for (Trial& t : taken) {
    t.status = TrialStatus::running;
    t.claimed_at = p.now;
    t.lease_id = p.lease_token + "-t" + std::to_string(t.id);
    t.lease_expires_at = p.lease_expires_at;
    t.worker = p.worker;
    t.worker_version = p.worker_version;
    write(t);
  }
  return taken;
}

namespace {
const char* const kExpired =
    "(status = 'running' AND lease_expires_at <= :a) OR (status = 'pending' AND created_at <= :b)";
}  // namespace

std::vector<Trial> TrialSql::expired(TimeMs now, TimeMs pending_before, long long limit) {
  return select(std::string(kExpired) + " ORDER BY id LIMIT " + std::to_string(limit) +
                    c_.dialect().for_update_skip_locked,
                now, pending_before);
}

bool TrialSql::any_expired(TimeMs now, TimeMs pending_before) {
  long long a = now, b = pending_before, one = 0;
  auto st = prepare_call(c_, std::string("SELECT 1 FROM trials WHERE ") + kExpired + " LIMIT 1",
                         [&](soci::statement& s) {
                           s.exchange(into(one));
                           s.exchange(use(a, "a"));
                           s.exchange(use(b, "b"));
                         });
  return run_once(c_, st);
}

void TrialSql::delete_for(const std::string& id_list) {
  std::string ids = id_list;
  c_.session() << "DELETE FROM trials WHERE message_id IN (" + c_.dialect().json_ids("ids") + ")",
      use(ids, "ids");
}

}  // namespace dlq::store

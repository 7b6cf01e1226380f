// The dead-letter desk's SQL: the dead view, batch previews and their confirmation, replay runs
// (paced steps, pause/resume/cancel, progress read back) and batch dismissal. Filters become SQL
// only for the members that are set, with named binds next to their text.
#include <algorithm>
#include <map>

#include <boost/json.hpp>

#include "store/operations.hpp"

namespace dlq::store {
namespace json = boost::json;

namespace {

// The binds of a dead-message filter; they must outlive the statement's execution.
struct DeadBinds {
  std::string queue, job_type, error_class, dead_reason, ids;
  long long since = 0, until = 0, after = 0;
};

std::string ids_json(const std::vector<MessageId>& ids) {
  json::array a;
  a.reserve(ids.size());
  for (auto id : ids) a.emplace_back(id);
  return json::serialize(a);
}

// " WHERE status = 'dead' AND …" for the members of `f` that are set.
std::string dead_where(const Dialect& d, const DeadFilter& f, std::optional<MessageId> after) {
  std::string w = " WHERE status = 'dead'";
  if (f.queue) w += " AND queue = :queue";
  if (f.job_type) w += " AND job_type = :job_type";
  if (f.error_class) w += " AND error_class = :error_class";
  if (f.dead_reason) w += " AND dead_reason = :dead_reason";
  if (f.since) w += " AND dead_at >= :since";
  if (f.until) w += " AND dead_at <= :until";
  if (!f.ids.empty()) w += " AND " + d.id_in_json_list;
  if (after) w += " AND id > :after_id";
  return w;
}

void bind_dead(soci::statement& st, const DeadFilter& f, std::optional<MessageId> after,
               DeadBinds& b) {
  if (f.queue) st.exchange(soci::use(b.queue = *f.queue, "queue"));
  if (f.job_type) st.exchange(soci::use(b.job_type = *f.job_type, "job_type"));
  if (f.error_class) {
    st.exchange(soci::use(b.error_class = std::string(to_string(*f.error_class)), "error_class"));
  }
  if (f.dead_reason) {
    st.exchange(soci::use(b.dead_reason = std::string(to_string(*f.dead_reason)), "dead_reason"));
  }
  if (f.since) st.exchange(soci::use(b.since = *f.since, "since"));
  if (f.until) st.exchange(soci::use(b.until = *f.until, "until"));
  if (!f.ids.empty()) st.exchange(soci::use(b.ids = ids_json(f.ids), "ids"));
  if (after) st.exchange(soci::use(b.after = *after, "after_id"));
}

void prepare(soci::statement& st, const std::string& sql) {
  st.alloc();
  st.prepare(sql);
  st.define_and_bind();
}

constexpr const char* kRunColumns =
    "id, status, filter, actor, reason, created_at, start_at, delay_seconds, rate_per_second, "
    "keep_order, matched, next_seq, replayed, skipped, paced_from, paced_count, updated_at";

// A row of replay_runs, in kRunColumns order.
struct RunRow {
  long long id = 0, created_at = 0, start_at = 0, keep_order = 0, matched = 0, next_seq = 0,
            replayed = 0, skipped = 0, paced_from = 0, paced_count = 0, updated_at = 0;
  std::string status, filter;
  std::optional<std::string> actor, reason;
  double delay_seconds = 0, rate_per_second = 0;

  void exchange_into(soci::statement& st) {
    st.exchange(soci::into(id));
    st.exchange(soci::into(status));
    st.exchange(soci::into(filter));
    st.exchange(soci::into(actor));
    st.exchange(soci::into(reason));
    st.exchange(soci::into(created_at));
    st.exchange(soci::into(start_at));
    st.exchange(soci::into(delay_seconds));
    st.exchange(soci::into(rate_per_second));
    st.exchange(soci::into(keep_order));
    st.exchange(soci::into(matched));
    st.exchange(soci::into(next_seq));
    st.exchange(soci::into(replayed));
    st.exchange(soci::into(skipped));
    st.exchange(soci::into(paced_from));
    st.exchange(soci::into(paced_count));
    st.exchange(soci::into(updated_at));
  }
  ReplayRun to_run() const {
    ReplayRun r;
    r.id = id;
    r.status = status;
    r.filter = filter;
    r.actor = actor;
    r.reason = reason;
    r.created_at = created_at;
    r.start_at = start_at;
    r.delay_seconds = delay_seconds;
    r.rate_per_second = rate_per_second;
    r.keep_order = keep_order != 0;
    r.matched = matched;
    r.next_seq = next_seq;
    r.replayed = replayed;
    r.skipped = skipped;
    r.paced_from = paced_from;
    r.paced_count = paced_count;
    r.updated_at = updated_at;
    return r;
  }
};

// Why an item of a run was not replayed, from the replay transition's refusal.
std::string skip_reason(const Error& e) {
  switch (e.code) {
    case Errc::invalid_state: return "not_dead";
    case Errc::idempotency_conflict:
    case Errc::already_succeeded: return "key_held";
    case Errc::message_not_found: return "gone";
    default: return "refused";
  }
}

}  // namespace

// ---- the dead view and previews --------------------------------------------------------------

std::vector<Message> Operations::dead_list(const DeadListParams& p) {
  std::string sql = "SELECT " + std::string(kMessageColumns) + " FROM messages" +
                    dead_where(c_.dialect(), p.filter, p.after_id) + " ORDER BY id LIMIT :limit";
  DeadBinds binds;
  long long limit = p.limit;
  MessageRow row;
  soci::statement st(c_.session());
  row.exchange_into(st);
  bind_dead(st, p.filter, p.after_id, binds);
  st.exchange(soci::use(limit, "limit"));
  prepare(st, sql);
  std::vector<Message> out;
  st.execute(false);
  while (st.fetch()) out.push_back(row.to_message());
  c_.finish(st);
  return out;
}

std::vector<std::pair<MessageId, std::optional<std::string>>> Operations::dead_ids(
    const DeadFilter& filter, bool dead_at_order) {
  std::string sql = "SELECT id, job_type FROM messages" +
                    dead_where(c_.dialect(), filter, std::nullopt) +
                    (dead_at_order ? " ORDER BY dead_at, id" : " ORDER BY id");
  DeadBinds binds;
  long long id = 0;
  std::optional<std::string> job_type;
  soci::statement st(c_.session());
  st.exchange(soci::into(id));
  st.exchange(soci::into(job_type));
  bind_dead(st, filter, std::nullopt, binds);
  prepare(st, sql);
  std::vector<std::pair<MessageId, std::optional<std::string>>> out;
  st.execute(false);
  while (st.fetch()) out.emplace_back(id, job_type);
  c_.finish(st);
  return out;
}

DeadMatch Operations::dead_match(const DeadMatchParams& p) {
  DeadMatch m;
  std::map<std::optional<std::string>, long long> counts;
  for (auto& [id, job_type] : dead_ids(p.filter, p.dead_at_order)) {
    m.ids.push_back(id);
    ++counts[job_type];
  }
  m.by_job_type.assign(counts.begin(), counts.end());
  std::stable_sort(m.by_job_type.begin(), m.by_job_type.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (std::size_t i = 0; i < m.ids.size() && static_cast<int>(i) < p.sample; ++i) {
    if (auto queue = queue_of(m.ids[i])) {
      if (auto found = find(*queue, m.ids[i])) m.sample.push_back(std::move(*found));
    }
  }
  return m;
}

std::optional<std::string> Operations::queue_of(MessageId id) {
  std::optional<std::string> queue;
  long long in_id = id;
  c_.session() << "SELECT queue FROM messages WHERE id = :id", soci::into(queue),
      soci::use(in_id, "id");
  return queue;
}

void Operations::preview_save(const BatchPreview& p) {
  long long now = p.created_at, created = p.created_at, expires = p.expires_at,
            matched = p.matched;
  std::string token = p.token_sha256, kind = p.kind, filter = p.filter, ids = p.ids_sha256;
  json::array types;
  for (const auto& t : p.job_types) types.emplace_back(t);
  std::string job_types = json::serialize(types);
  // Expired previews are of no use to anyone: each new one clears them out.
  c_.session() << "DELETE FROM batch_previews WHERE expires_at < :now", soci::use(now, "now");
  c_.session() << "INSERT INTO batch_previews (token_sha256, kind, filter, matched, ids_sha256, "
                  "job_types, created_at, expires_at) VALUES (:token, :kind, :filter, :matched, "
                  ":ids, :job_types, :created, :expires)",
      soci::use(token, "token"), soci::use(kind, "kind"), soci::use(filter, "filter"),
      soci::use(matched, "matched"), soci::use(ids, "ids"), soci::use(job_types, "job_types"),
      soci::use(created, "created"), soci::use(expires, "expires");
}

Result<Confirmed> Operations::confirm(const ConfirmParams& p) {
  ConfirmFacts facts;
  {
    BatchPreview preview;
    std::string token = p.token_sha256, kind = p.kind;
    long long matched = 0, created = 0, expires = 0;
    std::string job_types;
    soci::indicator found = soci::i_null;
    // Locked on PostgreSQL, so two confirmations of one token cannot both go ahead.
    c_.session() << "SELECT token_sha256, kind, filter, matched, ids_sha256, job_types, "
                    "created_at, expires_at FROM batch_previews "
                    "WHERE token_sha256 = :token AND kind = :kind" +
                        std::string(c_.is_sqlite() ? "" : " FOR UPDATE"),
        soci::into(preview.token_sha256, found), soci::into(preview.kind),
        soci::into(preview.filter), soci::into(matched), soci::into(preview.ids_sha256),
        soci::into(job_types), soci::into(created), soci::into(expires),
        soci::use(token, "token"), soci::use(kind, "kind");
    if (found == soci::i_ok) {
      std::error_code ec;
      json::value types = json::parse(job_types, ec);
      if (!ec && types.is_array()) {
        for (const auto& t : types.get_array()) {
          if (t.is_string()) preview.job_types.emplace_back(t.get_string());
        }
      }
      preview.matched = matched;
      preview.created_at = created;
      preview.expires_at = expires;
      facts.preview = std::move(preview);
    }
  }
  for (auto& [id, job_type] : dead_ids(p.filter, p.dead_at_order)) facts.ids_now.push_back(id);
  auto plan = p.decide(facts);
  if (!plan) return plan.error();

  std::string token = p.token_sha256;
  c_.session() << "DELETE FROM batch_previews WHERE token_sha256 = :token",
      soci::use(token, "token");
  Confirmed out{facts.ids_now, std::nullopt};
  if (plan->run) {
    ReplayRun run = *plan->run;
    run.matched = static_cast<long long>(facts.ids_now.size());
    std::string sql =
        "INSERT INTO replay_runs (status, filter, actor, reason, created_at, start_at, "
        "delay_seconds, rate_per_second, keep_order, matched, next_seq, replayed, skipped, "
        "paced_from, paced_count, updated_at) VALUES (:status, :filter, :actor, :reason, "
        ":created_at, :start_at, :delay, :rate, :keep_order, :matched, 0, 0, 0, :paced_from, 0, "
        ":updated_at)";
    long long created = run.created_at, start = run.start_at, keep = run.keep_order ? 1 : 0,
              matched = run.matched, paced_from = run.paced_from, updated = run.updated_at;
    double delay = run.delay_seconds, rate = run.rate_per_second;
    std::string status = run.status, filter = run.filter;
    long long id = 0;
    if (c_.is_sqlite()) {
      c_.session() << sql, soci::use(status, "status"), soci::use(filter, "filter"),
          soci::use(run.actor, "actor"), soci::use(run.reason, "reason"),
          soci::use(created, "created_at"), soci::use(start, "start_at"),
          soci::use(delay, "delay"), soci::use(rate, "rate"), soci::use(keep, "keep_order"),
          soci::use(matched, "matched"), soci::use(paced_from, "paced_from"),
          soci::use(updated, "updated_at");
      id = c_.last_insert_rowid();
    } else {
      c_.session() << sql + " RETURNING id", soci::into(id), soci::use(status, "status"),
          soci::use(filter, "filter"), soci::use(run.actor, "actor"),
          soci::use(run.reason, "reason"), soci::use(created, "created_at"),
          soci::use(start, "start_at"), soci::use(delay, "delay"), soci::use(rate, "rate"),
          soci::use(keep, "keep_order"), soci::use(matched, "matched"),
          soci::use(paced_from, "paced_from"), soci::use(updated, "updated_at");
    }
    run.id = id;
    std::string ids = ids_json(facts.ids_now);
    c_.session() << c_.dialect().insert_run_items, soci::use(id, "run_id"), soci::use(ids, "ids");
    if (plan->audit) {
      // The entry names the run it created.
      json::value details = plan->audit->details ? json::parse(*plan->audit->details)
                                                 : json::value(json::object{});
      if (details.is_object()) details.as_object()["replay_id"] = id;
      plan->audit->details = json::serialize(details);
    }
    out.run = run;
  }
  if (plan->audit) append_audit(*plan->audit);
  return out;
}

// ---- replay runs -----------------------------------------------------------------------------

std::optional<ReplayRun> Operations::run_row(long long id, bool lock) {
  RunRow row;
  soci::indicator found = soci::i_null;
  long long in_id = id;
  std::string sql = "SELECT " + std::string(kRunColumns) + " FROM replay_runs WHERE id = :id" +
                    (lock && !c_.is_sqlite() ? " FOR UPDATE" : "");
  soci::statement st(c_.session());
  row.exchange_into(st);
  st.exchange(soci::use(in_id, "id"));
  prepare(st, sql);
  found = st.execute(true) ? soci::i_ok : soci::i_null;
  c_.finish(st);
  if (found != soci::i_ok) return std::nullopt;
  return row.to_run();
}

void Operations::count_outcomes(ReplayRun& run) {
  long long id = run.id, next = run.next_seq;
  std::optional<long long> succeeded, dead, pending;
  c_.session() << "SELECT SUM(CASE WHEN m.status = 'succeeded' THEN 1 ELSE 0 END), "
                  "SUM(CASE WHEN m.status IN ('dead', 'dismissed') THEN 1 ELSE 0 END), "
                  "SUM(CASE WHEN m.status IN ('pending', 'processing') THEN 1 ELSE 0 END) "
                  "FROM replay_run_items i JOIN messages m ON m.id = i.message_id "
                  "WHERE i.run_id = :id AND i.seq < :next AND i.outcome IS NULL",
      soci::into(succeeded), soci::into(dead), soci::into(pending), soci::use(id, "id"),
      soci::use(next, "next");
  run.succeeded = succeeded.value_or(0);
  run.dead_again = dead.value_or(0);
  run.pending = pending.value_or(0);
}

std::optional<ReplayRun> Operations::run_find(long long id) {
  auto run = run_row(id, false);
  if (run) count_outcomes(*run);
  return run;
}

std::vector<ReplayRun> Operations::runs_list(const RunListParams& p) {
  std::string sql = "SELECT " + std::string(kRunColumns) + " FROM replay_runs WHERE 1 = 1" +
                    (p.before_id ? " AND id < :before" : "") +
                    (p.message_id ? " AND id IN (SELECT run_id FROM replay_run_items"
                                    " WHERE message_id = :message)"
                                  : "") +
                    " ORDER BY id DESC LIMIT :limit";
  if (p.active_only) {
    sql = "SELECT " + std::string(kRunColumns) +
          " FROM replay_runs WHERE status IN ('scheduled', 'running') ORDER BY id LIMIT :limit";
  }
  RunRow row;
  long long before = p.before_id.value_or(0), limit = p.limit, message = p.message_id.value_or(0);
  soci::statement st(c_.session());
  row.exchange_into(st);
  if (p.before_id && !p.active_only) st.exchange(soci::use(before, "before"));
  if (p.message_id && !p.active_only) st.exchange(soci::use(message, "message"));
  st.exchange(soci::use(limit, "limit"));
  prepare(st, sql);
  std::vector<ReplayRun> out;
  st.execute(false);
  while (st.fetch()) out.push_back(row.to_run());
  c_.finish(st);
  if (!p.active_only) {
    for (auto& run : out) count_outcomes(run);
  }
  return out;
}

RunStep Operations::run_step(const RunStepParams& p) {
  RunStep out;
  auto run = run_row(p.run_id, true);
  bool live = run && (run->status == "running" || run->status == "scheduled") &&
              run->start_at <= p.now;
  if (!live || run->next_seq != p.expected_next_seq) {
    out.fenced = true;
    if (run) out.run = *run;
    return out;
  }
  long long run_id = p.run_id, from = run->next_seq, to = run->next_seq + p.max_items;
  struct Item {
    long long seq;
    MessageId id;
    std::optional<std::string> queue;
  };
  std::vector<Item> items;
  {
    long long seq = 0, message_id = 0;
    std::optional<std::string> queue;
    soci::statement st(c_.session());
    st.exchange(soci::into(seq));
    st.exchange(soci::into(message_id));
    st.exchange(soci::into(queue));
    st.exchange(soci::use(run_id, "run_id"));
    st.exchange(soci::use(from, "from"));
    st.exchange(soci::use(to, "to"));
    prepare(st, "SELECT i.seq, i.message_id, m.queue FROM replay_run_items i "
                "LEFT JOIN messages m ON m.id = i.message_id "
                "WHERE i.run_id = :run_id AND i.seq >= :from AND i.seq < :to ORDER BY i.seq");
    st.execute(false);
    while (st.fetch()) items.push_back({seq, message_id, queue});
    c_.finish(st);
  }
  long long replayed = 0, skipped = 0, next = from;
  for (const auto& item : items) {
    if (replayed >= p.max_replays) break;
    std::string outcome;
    if (!item.queue) {
      outcome = "gone";
    } else {
      UpdateParams u{*item.queue, item.id, p.decide, true, false};
      auto r = update(u);
      if (r) {
        outcome = "replayed";
        out.replayed.push_back(std::move(*r));
      } else {
        outcome = skip_reason(r.error());
      }
    }
    // Replayed items keep outcome NULL (one write less per message); skips say why.
    if (outcome == "replayed") {
      ++replayed;
    } else {
      ++skipped;
      long long seq = item.seq;
      c_.session() << "UPDATE replay_run_items SET outcome = :outcome "
                      "WHERE run_id = :run_id AND seq = :seq",
          soci::use(outcome, "outcome"), soci::use(run_id, "run_id"), soci::use(seq, "seq");
    }
    next = item.seq + 1;
  }
  ReplayRun after = *run;
  after.next_seq = next;
  after.replayed += replayed;
  after.skipped += skipped;
  after.paced_count += replayed;
  after.status = next >= after.matched ? "done" : "running";
  after.updated_at = p.now;
  long long expected = p.expected_next_seq, paced = after.paced_count, now = p.now;
  long long total_replayed = after.replayed, total_skipped = after.skipped;
  std::string status = after.status;
  soci::statement up = (c_.session().prepare
                            << "UPDATE replay_runs SET status = :status, next_seq = :next, "
                               "replayed = :replayed, skipped = :skipped, paced_count = :paced, "
                               "updated_at = :now WHERE id = :id AND next_seq = :expected",
                        soci::use(status, "status"), soci::use(next, "next"),
                        soci::use(total_replayed, "replayed"), soci::use(total_skipped, "skipped"),
                        soci::use(paced, "paced"), soci::use(now, "now"), soci::use(run_id, "id"),
                        soci::use(expected, "expected"));
  up.execute(true);
  // The fence: another leader moved this run on since it was read. Undo the whole step.
  if (up.get_affected_rows() != 1) throw std::runtime_error("replay run moved on elsewhere");
  out.run = std::move(after);
  return out;
}

Result<ReplayRun> Operations::run_change(const RunChangeParams& p) {
  auto run = run_row(p.run_id, true);
  if (!run) return Error(Errc::replay_not_found, "replay run not found");
  auto decided = p.decide(*run);
  if (!decided) return decided.error();
  auto& [next, audit] = *decided;
  long long id = next.id, paced_from = next.paced_from, paced = next.paced_count,
            updated = next.updated_at;
  std::string status = next.status;
  c_.session() << "UPDATE replay_runs SET status = :status, paced_from = :paced_from, "
                  "paced_count = :paced, updated_at = :updated WHERE id = :id",
      soci::use(status, "status"), soci::use(paced_from, "paced_from"),
      soci::use(paced, "paced"), soci::use(updated, "updated"), soci::use(id, "id");
  append_audit(audit);
  count_outcomes(next);
  return next;
}

// ---- batch dismissal -------------------------------------------------------------------------

DismissBatch Operations::dismiss_batch(const DismissBatchParams& p) {
  DismissBatch out;
  std::vector<MessageId> dismissed;
  for (MessageId id : p.ids) {
    auto queue = queue_of(id);
    if (!queue) {
      ++out.skipped;
      continue;
    }
    UpdateParams u{*queue, id, p.decide, false, false};
    if (auto m = update(u)) {
      dismissed.push_back(id);
      out.messages.push_back(std::move(*m));
    } else {
      ++out.skipped;
    }
  }
  if (!dismissed.empty()) append_audit(p.audit(dismissed, out.skipped));
  out.dismissed = static_cast<long long>(dismissed.size());
  return out;
}

}  // namespace dlq::store

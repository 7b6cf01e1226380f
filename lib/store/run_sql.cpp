// Replay runs' statements, with named binds. A step reads its items, replays or skips each
// through the same transition as a single replay, and moves the run on under a fence: a run that
// moved on since it was read undoes the whole step.
#include "store/run_sql.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "store/audit_sql.hpp"
#include "store/connection.hpp"
#include "store/message_sql.hpp"
#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

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
    st.exchange(into(id));
    st.exchange(into(status));
    st.exchange(into(filter));
    st.exchange(into(actor));
    st.exchange(into(reason));
    st.exchange(into(created_at));
    st.exchange(into(start_at));
    st.exchange(into(delay_seconds));
    st.exchange(into(rate_per_second));
    st.exchange(into(keep_order));
    st.exchange(into(matched));
    st.exchange(into(next_seq));
    st.exchange(into(replayed));
    st.exchange(into(skipped));
    st.exchange(into(paced_from));
    st.exchange(into(paced_count));
    st.exchange(into(updated_at));
  }
  ReplayRun to_run() const {
    ReplayRun r;
    r.id = id;
    auto known = parse_run_status(status);
    if (!known) throw std::runtime_error("unknown replay run status in database: " + status);
    r.status = *known;
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

// "'scheduled', 'running'": the live statuses as SQL literals, from their one list.
std::string live_statuses_sql() {
  std::string out;
  for (RunStatus s : kLiveRunStatuses) {
    if (!out.empty()) out += ", ";
    out.append("'").append(to_string(s)).append("'");
  }
  return out;
}

// Why an item of a run was not replayed, from the replay transition's refusal.
std::string skip_reason(const Error& e) {
  switch (e.code) {
    case Errc::invalid_state: return "not_dead";
    case Errc::idempotency_conflict:
    case Errc::already_succeeded: return "key_held";
    case Errc::message_not_found: return "gone";
    case Errc::replay_limit: return "max_replays";
    default: return "refused";
  }
}

}  // namespace

long long RunSql::create(const ReplayRun& run, const std::vector<MessageId>& ids) {
  const Dialect& d = c_.dialect();
  long long created = run.created_at, start = run.start_at, keep = run.keep_order ? 1 : 0,
            matched = run.matched, paced_from = run.paced_from, updated = run.updated_at;
  double delay = run.delay_seconds, rate = run.rate_per_second;
  std::string status(to_string(run.status)), filter = run.filter;
  std::optional<std::string> actor = run.actor, reason = run.reason;
  long long id = 0;
  auto insert = prepare_call(
      c_,
      std::string("INSERT INTO replay_runs (status, filter, actor, reason, created_at, start_at, "
                  "delay_seconds, rate_per_second, keep_order, matched, next_seq, replayed, "
                  "skipped, paced_from, paced_count, updated_at) VALUES (:status, :filter, "
                  ":actor, :reason, :created_at, :start_at, :delay, :rate, :keep_order, :matched, "
                  "0, 0, 0, :paced_from, 0, :updated_at)") +
          (d.insert_returns_id ? " RETURNING id" : ""),
      [&](soci::statement& s) {
        if (d.insert_returns_id) s.exchange(into(id));
        s.exchange(use(status, "status"));
        s.exchange(use(filter, "filter"));
        s.exchange(use(actor, "actor"));
        s.exchange(use(reason, "reason"));
        s.exchange(use(created, "created_at"));
        s.exchange(use(start, "start_at"));
        s.exchange(use(delay, "delay"));
        s.exchange(use(rate, "rate"));
        s.exchange(use(keep, "keep_order"));
        s.exchange(use(matched, "matched"));
        s.exchange(use(paced_from, "paced_from"));
        s.exchange(use(updated, "updated_at"));
      });
  run_once(c_, insert);
  if (!d.insert_returns_id) id = c_.last_insert_rowid();

  boost::json::array id_list;
  id_list.reserve(ids.size());
  for (auto i : ids) id_list.emplace_back(i);
  std::string items = boost::json::serialize(id_list);
  c_.session() << "INSERT INTO replay_run_items (run_id, seq, message_id) "
                  "SELECT :run_id, seq, id FROM (" + d.json_numbered_ids("ids") + ") AS items",
      use(id, "run_id"), use(items, "ids");
  return id;
}

std::optional<ReplayRun> RunSql::row(long long id, bool lock) {
  RunRow row;
  long long in_id = id;
  auto st = prepare_call(c_,
                         "SELECT " + std::string(kRunColumns) + " FROM replay_runs WHERE id = :id" +
                             (lock ? c_.dialect().for_update : ""),
                         [&](soci::statement& s) {
                           row.exchange_into(s);
                           s.exchange(use(in_id, "id"));
                         });
  if (!run_once(c_, st)) return std::nullopt;
  return row.to_run();
}

void RunSql::count_outcomes(ReplayRun& run) {
  long long id = run.id, next = run.next_seq;
  std::optional<long long> succeeded, dead, pending;
  c_.session() << "SELECT SUM(CASE WHEN m.status = 'succeeded' THEN 1 ELSE 0 END), "
                  "SUM(CASE WHEN m.status IN ('dead', 'dismissed') THEN 1 ELSE 0 END), "
                  "SUM(CASE WHEN m.status IN ('pending', 'processing') THEN 1 ELSE 0 END) "
                  "FROM replay_run_items i JOIN messages m ON m.id = i.message_id "
                  "WHERE i.run_id = :id AND i.seq < :next AND i.outcome IS NULL",
      into(succeeded), into(dead), into(pending), use(id, "id"), use(next, "next");
  run.succeeded = succeeded.value_or(0);
  run.dead_again = dead.value_or(0);
  run.pending = pending.value_or(0);
  // Only skipped items have an outcome (replayed ones keep NULL): a scan of the run's items.
  run.skipped_by_reason.clear();
  if (run.skipped == 0) return;
  std::string outcome;
  long long n = 0;
  auto st = prepare_call(c_,
                         "SELECT outcome, COUNT(*) FROM replay_run_items WHERE run_id = :id "
                         "AND outcome IS NOT NULL GROUP BY outcome ORDER BY outcome",
                         [&](soci::statement& s) {
                           s.exchange(into(outcome));
                           s.exchange(into(n));
                           s.exchange(use(id, "id"));
                         });
  for_each_row(c_, st, [&] { run.skipped_by_reason.emplace_back(outcome, n); });
}

std::optional<ReplayRun> RunSql::find(long long id) {
  auto run = row(id, false);
  if (run) count_outcomes(*run);
  return run;
}

std::vector<ReplayRun> RunSql::list(const RunListParams& p) {
  std::string sql = "SELECT " + std::string(kRunColumns) + " FROM replay_runs";
  if (p.active_only) {
    sql += " WHERE status IN (" + live_statuses_sql() + ") ORDER BY id LIMIT :limit";
  } else {
    sql += std::string(" WHERE 1 = 1") + (p.before_id ? " AND id < :before" : "") +
           (p.message_id ? " AND id IN (SELECT run_id FROM replay_run_items"
                           " WHERE message_id = :message)"
                         : "") +
           (p.filter ? " AND filter = :filter" : "") + " ORDER BY id DESC LIMIT :limit";
  }
  RunRow row;
  long long before = p.before_id.value_or(0), limit = p.limit, message = p.message_id.value_or(0);
  std::string filter = p.filter.value_or("");
  auto st = prepare_call(c_, sql, [&](soci::statement& s) {
    row.exchange_into(s);
    if (p.before_id && !p.active_only) s.exchange(use(before, "before"));
    if (p.message_id && !p.active_only) s.exchange(use(message, "message"));
    if (p.filter && !p.active_only) s.exchange(use(filter, "filter"));
    s.exchange(use(limit, "limit"));
  });
  std::vector<ReplayRun> out;
  for_each_row(c_, st, [&] { out.push_back(row.to_run()); });
  if (!p.active_only) {
    for (auto& run : out) count_outcomes(run);
  }
  return out;
}

// ---- a paced step ----------------------------------------------------------------------------

std::vector<RunSql::Item> RunSql::read_items(long long run_id, long long from, long long count) {
  long long in_run = run_id, in_from = from, to = from + count, seq = 0, message_id = 0;
  std::optional<std::string> queue;
  auto st = prepare_call(c_,
                         "SELECT i.seq, i.message_id, m.queue FROM replay_run_items i "
                         "LEFT JOIN messages m ON m.id = i.message_id "
                         "WHERE i.run_id = :run_id AND i.seq >= :from AND i.seq < :to "
                         "ORDER BY i.seq",
                         [&](soci::statement& s) {
                           s.exchange(into(seq));
                           s.exchange(into(message_id));
                           s.exchange(into(queue));
                           s.exchange(use(in_run, "run_id"));
                           s.exchange(use(in_from, "from"));
                           s.exchange(use(to, "to"));
                         });
  std::vector<Item> items;
  for_each_row(c_, st, [&] { items.push_back({seq, message_id, queue}); });
  return items;
}

RunSql::Applied RunSql::apply(const std::vector<Item>& items, long long from,
                              const RunStepParams& p, RunStep& out) {
  Applied applied;
  applied.next_seq = from;
  long long run_id = p.run_id;
  for (const auto& item : items) {
    if (applied.replayed >= p.max_replays) break;
    std::string outcome = "gone";
    if (item.queue) {
      UpdateParams u{*item.queue, item.id, p.decide, true, false};
      auto r = messages_.update(u);
      if (r) {
        outcome = "replayed";
        out.replayed.push_back(std::move(*r));
      } else {
        outcome = skip_reason(r.error());
      }
    }
    // Replayed items keep outcome NULL (one write less per message); skips say why.
    if (outcome == "replayed") {
      ++applied.replayed;
    } else {
      ++applied.skipped;
      long long seq = item.seq;
      c_.session() << "UPDATE replay_run_items SET outcome = :outcome "
                      "WHERE run_id = :run_id AND seq = :seq",
          use(outcome, "outcome"), use(run_id, "run_id"), use(seq, "seq");
    }
    applied.next_seq = item.seq + 1;
  }
  return applied;
}

ReplayRun RunSql::advance(const ReplayRun& run, const Applied& applied, const RunStepParams& p) {
  ReplayRun after = run;
  after.next_seq = applied.next_seq;
  after.replayed += applied.replayed;
  after.skipped += applied.skipped;
  after.paced_count += applied.replayed;
  after.status = status_after_step(after.next_seq, after.matched);
  after.updated_at = p.now;
  long long id = p.run_id, expected = p.expected_next_seq, next = after.next_seq,
            replayed = after.replayed, skipped = after.skipped, paced = after.paced_count,
            now = p.now;
  std::string status(to_string(after.status));
  auto up = prepare_call(c_,
                         "UPDATE replay_runs SET status = :status, next_seq = :next, "
                         "replayed = :replayed, skipped = :skipped, paced_count = :paced, "
                         "updated_at = :now WHERE id = :id AND next_seq = :expected",
                         [&](soci::statement& s) {
                           s.exchange(use(status, "status"));
                           s.exchange(use(next, "next"));
                           s.exchange(use(replayed, "replayed"));
                           s.exchange(use(skipped, "skipped"));
                           s.exchange(use(paced, "paced"));
                           s.exchange(use(now, "now"));
                           s.exchange(use(id, "id"));
                           s.exchange(use(expected, "expected"));
                         });
  up.execute(true);
  long long changed = up.get_affected_rows();
  c_.finish(up);
  // The fence: another leader moved this run on since it was read. Undo the whole step.
  if (changed != 1) throw std::runtime_error("replay run moved on elsewhere");
  return after;
}

RunStep RunSql::step(const RunStepParams& p) {
  RunStep out;
  auto run = row(p.run_id, true);
  bool live = run && run_live(run->status) && run->start_at <= p.now;
  if (!live || run->next_seq != p.expected_next_seq) {
    out.fenced = true;
    if (run) out.run = *run;
    return out;
  }
  auto items = read_items(p.run_id, run->next_seq, p.max_items);
  Applied applied = apply(items, run->next_seq, p, out);
  out.run = advance(*run, applied, p);
  return out;
}

Result<ReplayRun> RunSql::change(const RunChangeParams& p) {
  auto run = row(p.run_id, true);
  if (!run) return Error(Errc::replay_not_found, "replay run not found");
  auto decided = p.decide(*run);
  if (!decided) return decided.error();
  auto& [next, audit] = *decided;
  long long id = next.id, paced_from = next.paced_from, paced = next.paced_count,
            updated = next.updated_at;
  std::string status(to_string(next.status));
  c_.session() << "UPDATE replay_runs SET status = :status, paced_from = :paced_from, "
                  "paced_count = :paced, updated_at = :updated WHERE id = :id",
      use(status, "status"), use(paced_from, "paced_from"), use(paced, "paced"),
      use(updated, "updated"), use(id, "id");
  audit_.append(audit);
  count_outcomes(next);
  return next;
}

}  // namespace dlq::store

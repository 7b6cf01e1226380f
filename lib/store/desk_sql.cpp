// The desk's statements. A filter becomes SQL only for the members that are set, with named
// binds next to their text; a confirmation reads its preview and the matched set in the same
// transaction that creates the run or hands the ids to the dismissal.
#include "store/desk_sql.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <boost/json.hpp>

#include "store/audit_sql.hpp"
#include "store/effect_sql.hpp"
#include "store/message_reads.hpp"
#include "store/message_row.hpp"
#include "store/message_sql.hpp"
#include "store/prepared.hpp"
#include "store/run_sql.hpp"

namespace dlq::store {
namespace json = boost::json;

using soci::into;
using soci::use;

namespace {

// A dead-message filter as SQL: " WHERE status = 'dead' AND …" for the members that are set,
// and their binds, which must outlive the statement's execution.
struct DeadWhere {
  DeadWhere(const DeadFilter& filter, std::optional<MessageId> after_id_above)
      : f(filter), after(after_id_above) {}

  const DeadFilter& f;
  std::optional<MessageId> after;
  std::string queue, job_type, error_class, dead_reason, ids, fingerprint, dead_letter_queue;
  long long since = 0, until = 0, after_id = 0;

  std::string sql(const Dialect& d) const {
    std::string w = " WHERE status = 'dead'";
    if (f.queue) w += " AND queue = :queue";
    if (f.job_type) w += " AND job_type = :job_type";
    if (f.error_class) w += " AND error_class = :error_class";
    if (f.dead_reason) w += " AND dead_reason = :dead_reason";
    if (f.fingerprint) w += " AND fingerprint = :fingerprint";
    if (f.dead_letter_queue) w += " AND dead_letter_queue = :dead_letter_queue";
    if (f.since) w += " AND dead_at >= :since";
    if (f.until) w += " AND dead_at <= :until";
    if (!f.ids.empty()) w += " AND id IN (" + d.json_ids("ids") + ")";
    if (after) w += " AND id > :after_id";
    return w;
  }
  void exchange(soci::statement& st) {
    if (f.queue) st.exchange(use(queue = *f.queue, "queue"));
    if (f.job_type) st.exchange(use(job_type = *f.job_type, "job_type"));
    if (f.error_class) {
      st.exchange(use(error_class = std::string(to_string(*f.error_class)), "error_class"));
    }
    if (f.dead_reason) {
      st.exchange(use(dead_reason = std::string(to_string(*f.dead_reason)), "dead_reason"));
    }
    if (f.fingerprint) st.exchange(use(fingerprint = *f.fingerprint, "fingerprint"));
    if (f.dead_letter_queue) {
      st.exchange(use(dead_letter_queue = *f.dead_letter_queue, "dead_letter_queue"));
    }
    if (f.since) st.exchange(use(since = *f.since, "since"));
    if (f.until) st.exchange(use(until = *f.until, "until"));
    if (!f.ids.empty()) {
      json::array a;
      for (auto id : f.ids) a.emplace_back(id);
      st.exchange(use(ids = json::serialize(a), "ids"));
    }
    if (after) st.exchange(use(after_id = *after, "after_id"));
  }
};

}  // namespace

// ---- the dead view and the matched set ------------------------------------------------------

std::vector<Message> DeskSql::dead_list(const DeadListParams& p) {
  DeadWhere where{p.filter, p.after_id};
  long long limit = p.limit;
  MessageRow row;
  auto st = prepare_call(c_,
                         "SELECT " + std::string(kMessageColumns) + " FROM messages" +
                             where.sql(c_.dialect()) + " ORDER BY id LIMIT :limit",
                         [&](soci::statement& s) {
                           row.exchange_into(s);
                           where.exchange(s);
                           s.exchange(use(limit, "limit"));
                         });
  return fetch_messages(c_, st, row);
}

std::vector<DeadRef> DeskSql::dead_refs(const DeadListParams& p) {
  DeadWhere where{p.filter, p.after_id};
  long long limit = p.limit;
  long long id = 0;
  std::string queue;
  auto st = prepare_call(c_,
                         "SELECT id, queue FROM messages" + where.sql(c_.dialect()) +
                             " ORDER BY id LIMIT :limit",
                         [&](soci::statement& s) {
                           s.exchange(into(id));
                           s.exchange(into(queue));
                           where.exchange(s);
                           s.exchange(use(limit, "limit"));
                         });
  std::vector<DeadRef> out;
  for_each_row(c_, st, [&] { out.push_back({id, queue}); });
  return out;
}

std::vector<DeskSql::DeadId> DeskSql::dead_ids(const DeadFilter& filter, bool dead_at_order) {
  DeadWhere where{filter, std::nullopt};
  long long id = 0, replay_count = 0;
  std::string queue;
  std::optional<std::string> job_type;
  auto st = prepare_call(c_,
                         "SELECT id, queue, job_type, replay_count FROM messages" +
                             where.sql(c_.dialect()) +
                             (dead_at_order ? " ORDER BY dead_at, id" : " ORDER BY id"),
                         [&](soci::statement& s) {
                           s.exchange(into(id));
                           s.exchange(into(queue));
                           s.exchange(into(job_type));
                           s.exchange(into(replay_count));
                           where.exchange(s);
                         });
  std::vector<DeadId> out;
  for_each_row(c_, st, [&] {
    out.push_back({id, queue, job_type, static_cast<int>(replay_count)});
  });
  return out;
}

DeadMatch DeskSql::dead_match(const DeadMatchParams& p) {
  DeadMatch m;
  std::map<std::optional<std::string>, long long> counts;
  std::map<std::tuple<std::string, std::optional<std::string>, int>, long long> replays;
  for (auto& d : dead_ids(p.filter, p.dead_at_order)) {
    m.ids.push_back(d.id);
    ++counts[d.job_type];
    ++replays[{std::move(d.queue), std::move(d.job_type), d.replay_count}];
  }
  for (auto& [key, n] : replays) {
    m.replays.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
  m.by_job_type.assign(counts.begin(), counts.end());
  std::stable_sort(m.by_job_type.begin(), m.by_job_type.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  // Matched messages holding an effect left `started` (issue 36): its worker may or may not have
  // done it. The matched ids are at hand, so only the effects table is read (usually empty), not
  // the dead messages a second time.
  std::vector<MessageId> started = effects_.started_message_ids();
  if (!started.empty()) {
    // m.ids are in id order unless dead_at_order asked otherwise.
    std::vector<MessageId> by_id;
    if (p.dead_at_order) {
      by_id = m.ids;
      std::sort(by_id.begin(), by_id.end());
    }
    const std::vector<MessageId>& matched = p.dead_at_order ? by_id : m.ids;
    for (MessageId id : started) {
      if (!std::binary_search(matched.begin(), matched.end(), id)) continue;
      if (m.uncertain_ids.size() < kUncertainIds) m.uncertain_ids.push_back(id);
      ++m.uncertain_count;
    }
  }
  for (std::size_t i = 0; i < m.ids.size() && static_cast<int>(i) < p.sample; ++i) {
    if (auto queue = reads_.queue_of(m.ids[i])) {
      if (auto found = reads_.find(*queue, m.ids[i])) m.sample.push_back(std::move(*found));
    }
  }
  return m;
}

// ---- previews and their confirmation ---------------------------------------------------------

void DeskSql::preview_save(const BatchPreview& p) {
  long long created = p.created_at, expires = p.expires_at, matched = p.matched, keep = p.keep;
  std::string token = p.token_sha256, kind = p.kind, filter = p.filter, ids = p.ids_sha256;
  json::array types;
  for (const auto& t : p.job_types) types.emplace_back(t);
  std::string job_types = json::serialize(types);
  // PostgreSQL: previews are saved one at a time across nodes, so that each numbers its own
  // and counts every other node's (SQLite: its one writer does that).
  if (!c_.is_sqlite()) c_.execute("SELECT pg_advisory_xact_lock(7274015)");
  // Expired previews are of no use to anyone: each new one clears them out.
  c_.session() << "DELETE FROM batch_previews WHERE expires_at < :now", use(created, "now");
  c_.session() << "INSERT INTO batch_previews (token_sha256, kind, filter, matched, ids_sha256, "
                  "job_types, created_at, expires_at, seq) VALUES (:token, :kind, :filter, "
                  ":matched, :ids, :job_types, :created, :expires, "
                  "(SELECT COALESCE(MAX(seq), 0) + 1 FROM batch_previews))",
      use(token, "token"), use(kind, "kind"), use(filter, "filter"), use(matched, "matched"),
      use(ids, "ids"), use(job_types, "job_types"), use(created, "created"),
      use(expires, "expires");
  // batch_replay.max_previews: the oldest beyond it go (replay and dismiss previews together).
  c_.session() << "DELETE FROM batch_previews WHERE seq <= (SELECT seq FROM batch_previews "
                  "ORDER BY seq DESC LIMIT 1 OFFSET :keep)",
      use(keep, "keep");
}

std::optional<BatchPreview> DeskSql::preview_for_update(const std::string& token_sha256,
                                                        const std::string& kind) {
  BatchPreview preview;
  std::string token = token_sha256, in_kind = kind, job_types;
  long long matched = 0, created = 0, expires = 0;
  soci::indicator found = soci::i_null;
  c_.session() << "SELECT token_sha256, kind, filter, matched, ids_sha256, job_types, "
                  "created_at, expires_at FROM batch_previews "
                  "WHERE token_sha256 = :token AND kind = :kind" + c_.dialect().for_update,
      into(preview.token_sha256, found), into(preview.kind), into(preview.filter),
      into(matched), into(preview.ids_sha256), into(job_types), into(created), into(expires),
      use(token, "token"), use(in_kind, "kind");
  if (found != soci::i_ok) return std::nullopt;
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
  return preview;
}

Result<Confirmed> DeskSql::confirm(const ConfirmParams& p) {
  ConfirmFacts facts;
  facts.preview = preview_for_update(p.token_sha256, p.kind);
  for (const auto& d : dead_ids(p.filter, p.dead_at_order)) facts.ids_now.push_back(d.id);
  auto plan = p.decide(facts);
  if (!plan) return plan.error();

  std::string token = p.token_sha256;
  c_.session() << "DELETE FROM batch_previews WHERE token_sha256 = :token", use(token, "token");
  return commit(std::move(*plan), std::move(facts.ids_now));
}

Confirmed DeskSql::commit(ConfirmPlan plan, std::vector<MessageId> ids,
                          const std::function<std::string(long long)>& handle) {
  Confirmed out{std::move(ids), std::nullopt};
  if (plan.run) {
    ReplayRun run = *plan.run;
    run.matched = static_cast<long long>(out.ids.size());
    run.id = runs_.create(run, out.ids);
    if (plan.audit) {
      // The entry names the run it created.
      json::value details = plan.audit->details ? json::parse(*plan.audit->details)
                                                : json::value(json::object{});
      if (details.is_object()) {
        details.as_object()["replay_id"] = run.id;
        if (handle) details.as_object()["task_handle"] = handle(run.id);
      }
      plan.audit->details = json::serialize(details);
    }
    out.run = run;
  }
  if (plan.audit) audit_.append(*plan.audit);
  return out;
}

Result<Confirmed> DeskSql::start_run(const RunStartParams& p) {
  // PostgreSQL: starts wait for each other, so that two nodes never both see no active run.
  if (!c_.is_sqlite()) c_.execute("SELECT pg_advisory_xact_lock(7274012)");
  RunStartFacts facts;
  std::set<std::string> types, queues;
  for (const auto& d : dead_ids(p.filter, p.dead_at_order)) {
    facts.ids_now.push_back(d.id);
    if (d.job_type) types.insert(*d.job_type);
    queues.insert(d.queue);
  }
  facts.job_types.assign(types.begin(), types.end());
  facts.queues.assign(queues.begin(), queues.end());
  std::string filter = p.canonical_filter;
  long long active = 0;
  c_.session() << "SELECT COUNT(*) FROM replay_runs WHERE filter = :filter AND status IN "
                  "('scheduled', 'running', 'paused')",
      into(active), use(filter, "filter");
  facts.active = active > 0;
  auto plan = p.decide(facts);
  if (!plan) return plan.error();
  return commit(std::move(*plan), std::move(facts.ids_now), p.handle);
}

// ---- batch dismissal -------------------------------------------------------------------------

DismissBatch DeskSql::dismiss_batch(const DismissBatchParams& p) {
  DismissBatch out;
  std::vector<MessageId> dismissed;
  for (MessageId id : p.ids) {
    auto queue = reads_.queue_of(id);
    if (!queue) {
      ++out.skipped;
      continue;
    }
    UpdateParams u{*queue, id, p.decide, false, false};
    if (auto m = messages_.update(u)) {
      dismissed.push_back(id);
      out.messages.push_back(std::move(*m));
    } else {
      ++out.skipped;
    }
  }
  if (!dismissed.empty()) audit_.append(p.audit(dismissed, out.skipped));
  out.dismissed = static_cast<long long>(dismissed.size());
  return out;
}

}  // namespace dlq::store

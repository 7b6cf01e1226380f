// Whole-database SQL: purge in batches (the oldest first by the time they entered their status,
// served by the (status, status_at) partial indexes of migration 007), per-queue counts, deaths
// per hour. Statements are built per call from the filters given, with named binds.
#include "store/housekeeping_sql.hpp"

#include <map>

#include <boost/json.hpp>

#include "store/audit_sql.hpp"
#include "store/connection.hpp"
#include "store/effect_sql.hpp"
#include "store/incident_sql.hpp"
#include "store/migrations.hpp"
#include "store/prepared.hpp"
#include "store/trial_sql.hpp"
#include "store/queue_names_sql.hpp"

namespace dlq::store {
namespace json = boost::json;

Purged HousekeepingSql::purge(const PurgeParams& p) {
  // The status is written into the text (it is one of three names), so that the planner can
  // match the partial index of that status (migration 007).
  // Dead ones leave their incidents (the fingerprint is read for them only).
  const bool dead = p.status == Status::dead;
  std::string sql = std::string("SELECT id, queue") + (dead ? ", fingerprint" : "") +
                    " FROM messages WHERE status = '" +
                    std::string(to_string(p.status)) + "' AND status_at < :before";
  if (p.queue) sql += " AND queue = :queue";
  if (p.created_before) sql += " AND created_at < :created_before";
  if (p.due_by) sql += " AND (retry_after IS NULL OR retry_after <= :due_by)";
  std::string except;
  if (!p.except.empty()) {
    json::array names;
    for (const auto& q : p.except) names.emplace_back(q);
    except = json::serialize(names);
    sql += " AND queue NOT IN (" + c_.dialect().json_texts("except") + ")";
  }
  sql += " ORDER BY status_at LIMIT :limit";

  std::string queue = p.queue.value_or("");
  long long before = p.before, limit = p.limit, id = 0;
  long long created_before = p.created_before.value_or(0), due_by = p.due_by.value_or(0);
  std::string row_queue;
  std::optional<std::string> fingerprint;
  std::vector<std::pair<std::string, std::string>> left;  // (fingerprint, queue)
  std::vector<long long> ids;
  std::map<std::string, long long> counts;
  soci::statement st = prepare_call(c_, sql, [&](soci::statement& s) {
    s.exchange(soci::into(id));
    s.exchange(soci::into(row_queue));
    if (dead) s.exchange(soci::into(fingerprint));
    s.exchange(soci::use(before, "before"));
    if (p.queue) s.exchange(soci::use(queue, "queue"));
    if (p.created_before) s.exchange(soci::use(created_before, "created_before"));
    if (p.due_by) s.exchange(soci::use(due_by, "due_by"));
    if (!p.except.empty()) s.exchange(soci::use(except, "except"));
    s.exchange(soci::use(limit, "limit"));
  });
  for_each_row(c_, st, [&] {
    ids.push_back(id);
    ++counts[row_queue];
    if (fingerprint) left.emplace_back(*fingerprint, row_queue);
  });
  Purged out;
  if (ids.empty()) return out;
  json::array list;
  for (auto i : ids) list.emplace_back(i);
  std::string id_list = json::serialize(list);
  const std::string purged = " IN (" + c_.dialect().json_ids("ids") + ")";
  c_.session() << "DELETE FROM attempts WHERE message_id" + purged, soci::use(id_list, "ids");
  effects_.delete_for(id_list);
  trials_.delete_for(id_list);
  c_.session() << "DELETE FROM messages WHERE id" + purged, soci::use(id_list, "ids");
  for (const auto& [fp, queue] : left) incidents_.note_exit(fp, queue, IncidentExit::deleted);
  out.by_queue.assign(counts.begin(), counts.end());
  out.total = static_cast<long long>(ids.size());
  std::vector<std::string> touched;
  touched.reserve(counts.size());
  for (const auto& [q, n] : counts) touched.push_back(q);
  names_.remove_emptied(touched);
  if (p.audit) audit_.append(p.audit(out.by_queue));
  return out;
}

// Four index-only questions instead of one pass over every row (migrations 006 and 007): counts per
// status, how many pending ones wait for a later time, the oldest ready, the oldest dead.
template <class Bind>
std::vector<QueueStats> HousekeepingSql::stats_where(const std::string& where_queue, Bind&& bind,
                                                     TimeMs now) {
  std::map<std::string, QueueStats> by_queue;
  auto at = [&by_queue](const std::string& q) -> QueueStats& {
    QueueStats& s = by_queue[q];
    s.queue = q;
    return s;
  };
  long long in_now = now;
  // Runs `sql` (its binds: the queue filter's, and :now when present), one row of `into` per fetch.
  auto each_row = [&](const std::string& sql, auto&& into, auto&& row) {
    soci::statement st = prepare_call(c_, sql, [&](soci::statement& s) {
      into(s);
      bind(s);
      if (sql.find(":now") != std::string::npos) s.exchange(soci::use(in_now, "now"));
    });
    for_each_row(c_, st, row);
  };
  std::string q, status;
  long long n = 0;
  std::optional<long long> t;
  each_row("SELECT queue, status, COUNT(*) FROM messages WHERE 1 = 1" + where_queue +
               " GROUP BY queue, status",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(status));
             st.exchange(soci::into(n));
           },
           [&] {
             QueueStats& s = at(q);
             if (status == "pending") s.ready = n;  // less the scheduled ones, below
             if (status == "processing") s.processing = n;
             if (status == "succeeded") s.succeeded = n;
             if (status == "dead") s.dead = n;
             if (status == "dismissed") s.dismissed = n;
           });
  each_row("SELECT queue, COUNT(*) FROM messages WHERE status = 'pending' AND retry_after > :now" +
               where_queue + " GROUP BY queue",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(n));
           },
           [&] {
             QueueStats& s = at(q);
             s.scheduled = n;
             s.ready -= n;
           });
  // Ready since its retry time, or since it became pending.
  each_row("SELECT queue, MIN(COALESCE(retry_after, status_at)) FROM messages "
           "WHERE status = 'pending' AND (retry_after IS NULL OR retry_after <= :now)" +
               where_queue + " GROUP BY queue",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(t));
           },
           [&] { at(q).oldest_ready_since = t; });
  each_row("SELECT queue, MIN(dead_at) FROM messages WHERE status = 'dead'" + where_queue +
               " GROUP BY queue",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(t));
           },
           [&] { at(q).oldest_dead_at = t; });

  std::vector<QueueStats> out;
  out.reserve(by_queue.size());
  for (auto& [name, s] : by_queue) out.push_back(std::move(s));
  return out;
}

std::vector<QueueStats> HousekeepingSql::stats(const std::optional<std::string>& queue, TimeMs now) {
  std::string in_queue = queue.value_or("");
  auto out = stats_where(queue ? " AND queue = :queue" : "",
                         [&](soci::statement& s) {
                           if (queue) s.exchange(soci::use(in_queue, "queue"));
                         },
                         now);
  if (queue && out.empty()) {
    QueueStats empty;
    empty.queue = *queue;
    out.push_back(empty);
  }
  return out;
}

// The page's names from queue_names, then their counts: a name whose messages went meanwhile
// shows zeros rather than leaving a hole in the page.
std::vector<QueueStats> HousekeepingSql::stats_page(const QueuePageParams& p) {
  std::vector<std::string> names = names_.page(p.after, p.limit);
  std::vector<QueueStats> out;
  if (names.empty()) return out;
  json::array list;
  for (const auto& n : names) list.emplace_back(n);
  std::string in_names = json::serialize(list);
  auto counted = stats_where(" AND queue IN (" + c_.dialect().json_texts("names") + ")",
                             [&](soci::statement& s) { s.exchange(soci::use(in_names, "names")); },
                             p.now);
  out.reserve(names.size());
  std::size_t next = 0;  // both in byte order of the names
  for (const auto& n : names) {
    while (next < counted.size() && counted[next].queue < n) ++next;
    if (next < counted.size() && counted[next].queue == n) {
      out.push_back(std::move(counted[next++]));
    } else {
      QueueStats empty;
      empty.queue = n;
      out.push_back(empty);
    }
  }
  return out;
}

bool HousekeepingSql::schema_current() { return applied_version(c_) >= latest_version(c_); }

// Sums over queues (or reads one) from dead_letter_hours; hours without a row count zero.
std::vector<long long> HousekeepingSql::dead_hourly(const std::optional<std::string>& queue,
                                                    TimeMs from_hour, int hours) {
  std::vector<long long> counts(static_cast<std::size_t>(hours), 0);
  long long from = from_hour, until = from_hour + hours * kMillisPerHour;
  std::string in_queue = queue.value_or("");
  long long hour = 0, n = 0;
  std::string sql = std::string("SELECT hour, SUM(count) FROM dead_letter_hours "
                                "WHERE hour >= :from AND hour < :until") +
                    (queue ? " AND queue = :queue" : "") + " GROUP BY hour";
  soci::statement st = prepare_call(c_, sql, [&](soci::statement& s) {
    s.exchange(soci::into(hour));
    s.exchange(soci::into(n));
    s.exchange(soci::use(from, "from"));
    s.exchange(soci::use(until, "until"));
    if (queue) s.exchange(soci::use(in_queue, "queue"));
  });
  for_each_row(c_, st, [&] {
    auto i = (hour - from_hour) / kMillisPerHour;
    if (i >= 0 && i < hours) counts[static_cast<std::size_t>(i)] += n;
  });
  return counts;
}

}  // namespace dlq::store

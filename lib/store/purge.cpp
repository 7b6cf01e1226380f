// Deleting finished messages with their history, a batch per transaction (retention, purge):
// the oldest first by the time they entered their status, served by the (status, status_at)
// partial indexes of migration 007.
#include <map>

#include <boost/json.hpp>

#include "store/operations.hpp"

namespace dlq::store {
namespace json = boost::json;

Purged Operations::purge(const PurgeParams& p) {
  // The status is written into the text (it is one of three names), so that the planner can
  // match the partial index of that status (migration 007).
  std::string sql = "SELECT id, queue FROM messages WHERE status = '" +
                    std::string(to_string(p.status)) + "' AND status_at < :before";
  if (p.queue) sql += " AND queue = :queue";
  std::string except;
  if (!p.except.empty()) {
    json::array names;
    for (const auto& q : p.except) names.emplace_back(q);
    except = json::serialize(names);
    sql += c_.is_sqlite() ? " AND queue NOT IN (SELECT value FROM json_each(:except))"
                          : " AND queue NOT IN (SELECT json_array_elements_text(CAST(:except AS json)))";
  }
  sql += " ORDER BY status_at LIMIT :limit";

  std::string queue = p.queue.value_or("");
  long long before = p.before, limit = p.limit, id = 0;
  std::string row_queue;
  std::vector<long long> ids;
  std::map<std::string, long long> counts;
  {
    soci::statement st(c_.session());
    st.exchange(soci::into(id));
    st.exchange(soci::into(row_queue));
    st.exchange(soci::use(before, "before"));
    if (p.queue) st.exchange(soci::use(queue, "queue"));
    if (!p.except.empty()) st.exchange(soci::use(except, "except"));
    st.exchange(soci::use(limit, "limit"));
    st.alloc();
    st.prepare(sql);
    st.define_and_bind();
    st.execute(false);
    while (st.fetch()) {
      ids.push_back(id);
      ++counts[row_queue];
    }
    c_.finish(st);
  }
  Purged out;
  if (ids.empty()) return out;
  json::array list;
  for (auto i : ids) list.emplace_back(i);
  std::string id_list = json::serialize(list);
  // id_in_json_list is "id IN (…:ids…)": prefixed, the same condition on attempts.message_id.
  c_.session() << "DELETE FROM attempts WHERE message_" + c_.dialect().id_in_json_list,
      soci::use(id_list, "ids");
  c_.session() << "DELETE FROM messages WHERE " + c_.dialect().id_in_json_list,
      soci::use(id_list, "ids");
  out.by_queue.assign(counts.begin(), counts.end());
  out.total = static_cast<long long>(ids.size());
  if (p.audit) append_audit(p.audit(out.by_queue));
  return out;
}

}  // namespace dlq::store

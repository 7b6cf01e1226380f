// The leadership record's SQL. Rare (a few times a minute): plain statements with named binds,
// not kept prepared.
#include "store/leadership_sql.hpp"

#include "store/connection.hpp"

namespace dlq::store {

LeadershipRecord LeadershipSql::renew(const LeadershipRenewParams& p) {
  long long now = p.now, stale_before = p.stale_before;
  std::string node = p.node;
  // This node's record is renewed; another node's is taken over only once it went stale.
  c_.session() << "INSERT INTO leadership (id, node, since, renewed_at) VALUES (1, :node, :now, :now) "
                  "ON CONFLICT (id) DO UPDATE SET node = excluded.node, "
                  "renewed_at = excluded.renewed_at, "
                  "since = CASE WHEN leadership.node = excluded.node THEN leadership.since "
                  "ELSE excluded.since END "
                  "WHERE leadership.node = excluded.node OR leadership.renewed_at < :stale_before",
      soci::use(node, "node"), soci::use(now, "now"), soci::use(stale_before, "stale_before");
  LeadershipRecord record;
  long long since = 0, renewed_at = 0;
  c_.session() << "SELECT node, since, renewed_at FROM leadership WHERE id = 1",
      soci::into(record.node), soci::into(since), soci::into(renewed_at);
  record.since = since;
  record.renewed_at = renewed_at;
  return record;
}

}  // namespace dlq::store

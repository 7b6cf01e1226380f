// The leadership record (the one-row `leadership` table): renewed by its node, taken over by
// another only once stale. A hint for operators and for the leader's own checks, not a fence.
#pragma once

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class LeadershipSql {
 public:
  explicit LeadershipSql(Connection& c) : c_(c) {}

  LeadershipRecord renew(const LeadershipRenewParams& p);

 private:
  Connection& c_;
};

}  // namespace dlq::store

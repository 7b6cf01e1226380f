// The audit log: the writer every change calls inside its own transaction (an entry commits with
// its change or not at all), and the newest-first pages of GET /audit.
#pragma once

#include <optional>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class Connection;

class AuditSql {
 public:
  explicit AuditSql(Connection& c) : c_(c) {}

  void append(const AuditEntry& entry);
  std::vector<AuditEntry> list(const AuditQuery& q);
  std::vector<long long> ids(const AuditQuery& q);  // the ids of list's page, in its order
  std::optional<AuditEntry> find(long long id);

 private:
  Connection& c_;
};

}  // namespace dlq::store

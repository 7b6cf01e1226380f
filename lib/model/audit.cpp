// The audit log's action names.
#include "model/audit.hpp"

#include <algorithm>

namespace dlq {

bool valid_audit_action(std::string_view action) {
  return std::find(std::begin(kAuditActions), std::end(kAuditActions), action) !=
         std::end(kAuditActions);
}

}  // namespace dlq

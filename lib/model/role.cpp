// Role names.
#include "model/role.hpp"

namespace dlq {

std::string_view to_string(Role r) {
  switch (r) {
    case Role::producer: return "producer";
    case Role::worker: return "worker";
    case Role::reader: return "reader";
    case Role::admin: return "admin";
  }
  return "unknown";
}

std::optional<Role> parse_role(std::string_view s) {
  for (Role r : {Role::producer, Role::worker, Role::reader, Role::admin}) {
    if (to_string(r) == s) return r;
  }
  return std::nullopt;
}

}  // namespace dlq

// The roles an access token may hold (http-api.md B4). Plain names; what each may do is the
// route table's business.
#pragma once

#include <optional>
#include <string_view>

namespace dlq {

enum class Role { producer, worker, reader, admin };
std::string_view to_string(Role r);
std::optional<Role> parse_role(std::string_view s);

}  // namespace dlq

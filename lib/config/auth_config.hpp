// The checks of the auth.tokens entries that config.cpp's key lists and parse_into call: each
// value's shape (a name, the token's SHA-256, a role), and the entries against each other.
// The SQS front's access keys use the name and role checks too. Private to lib/config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace dlq::config_detail {

// One value's shape, for the Parser's checks: what is wrong, or nullopt.
std::optional<std::string> check_token_name(const std::string& s);
std::optional<std::string> check_sha256_hex(const std::string& s);
std::optional<std::string> check_role(const std::string& s);

// What one token entry cannot be on its own: no roles, or a name or hash another entry has.
void check_tokens(const std::vector<AuthToken>& tokens, std::vector<std::string>& errors);

}  // namespace dlq::config_detail

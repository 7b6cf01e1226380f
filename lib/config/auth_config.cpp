// The auth.tokens checks (config/auth_config.hpp).
#include "config/auth_config.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "model/role.hpp"

namespace dlq::config_detail {

std::optional<std::string> check_token_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return "must be 1 to 128 characters";
  return std::nullopt;
}

// The SHA-256 of the token (never the token itself), as `dlqd hash-token` prints it.
std::optional<std::string> check_sha256_hex(const std::string& s) {
  bool hex = std::all_of(s.begin(), s.end(),
                         [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (s.size() == 64 && hex) return std::nullopt;
  return "must be 64 lowercase hex digits (the SHA-256 of the token: dlqd hash-token prints it)";
}

std::optional<std::string> check_role(const std::string& s) {
  if (parse_role(s)) return std::nullopt;
  return "is not a role (producer, worker, reader, admin)";
}

// What one token entry cannot be on its own: no roles, or a name or hash another entry has.
// The earlier entries are looked up by name and by hash, so a list of thousands (read again on
// every SIGHUP) takes linear time; each clash is reported in the order of the earlier entries.
void check_tokens(const std::vector<AuthToken>& tokens, std::vector<std::string>& errors) {
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_name, by_hash;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string key = "config key \"auth.tokens[" + std::to_string(i) + "]";
    if (tokens[i].roles.empty()) errors.push_back(key + ".roles\": must list at least one role");
    std::vector<std::size_t>& names = by_name[tokens[i].name];
    std::vector<std::size_t>& hashes = by_hash[tokens[i].token_sha256];
    for (std::size_t n = 0, h = 0; n < names.size() || h < hashes.size();) {
      std::size_t j = std::min(n < names.size() ? names[n] : tokens.size(),
                               h < hashes.size() ? hashes[h] : tokens.size());
      if (n < names.size() && names[n] == j) {
        errors.push_back(key + ".name\": \"" + tokens[i].name + "\" names another token too");
        ++n;
      }
      if (h < hashes.size() && hashes[h] == j) {
        errors.push_back(key + ".token_sha256\": the same token as auth.tokens[" +
                         std::to_string(j) + "]");
        ++h;
      }
    }
    names.push_back(i);
    hashes.push_back(i);
  }
}

}  // namespace dlq::config_detail

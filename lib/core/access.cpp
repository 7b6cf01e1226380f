// Constant-time token lookup (hashes from model/token_hash), and the access decision.
#include "core/access.hpp"

#include "model/token_hash.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <stdexcept>

namespace dlq::core {
namespace {

constexpr std::string_view kAnonymous = "anonymous";

int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

// "Bearer <token>" (the scheme in any case, one or more spaces); nullopt for anything else.
std::optional<std::string_view> bearer_token(std::string_view header) {
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    char c = header[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return std::nullopt;
  }
  std::string_view rest = header.substr(kScheme.size());
  if (rest.front() != ' ') return std::nullopt;
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  return rest;
}

}  // namespace

std::string_view to_string(Access a) {
  switch (a) {
    case Access::open: return "open";
    case Access::producer: return "producer";
    case Access::worker: return "worker";
    case Access::reader: return "reader";
    case Access::admin: return "admin";
    case Access::reader_unless_public_metrics: return "reader (open with auth.public_metrics)";
    case Access::any_token: return "any_token";
    case Access::sqs: return "sqs";
  }
  return "unknown";
}

bool Principal::may(Role needed) const {
  return std::any_of(roles.begin(), roles.end(),
                     [needed](Role r) { return r == needed || r == Role::admin; });
}

TokenTable::TokenTable(const std::vector<AuthToken>& tokens) {
  for (const auto& t : tokens) {
    Entry e;
    for (std::size_t i = 0; i < e.hash.size(); ++i) {
      e.hash[i] = static_cast<unsigned char>(hex_value(t.token_sha256[2 * i]) * 16 +
                                             hex_value(t.token_sha256[2 * i + 1]));
    }
    e.principal.name = t.name;
    for (const auto& name : t.roles) {
      if (auto role = parse_role(name)) e.principal.roles.push_back(*role);
    }
    entries_.push_back(std::move(e));
  }
}

const Principal* TokenTable::find(std::string_view token) const {
  auto hash = sha256(token);
  const Principal* found = nullptr;
  for (const auto& e : entries_) {
    // No early exit: every entry is compared, whatever matched.
    bool same = CRYPTO_memcmp(e.hash.data(), hash.data(), hash.size()) == 0;
    if (same && !found) found = &e.principal;
  }
  return found;
}

SqsKeyTable::SqsKeyTable(const std::vector<SqsAccessKey>& keys) {
  for (const auto& k : keys) {
    Key key{k.secret, {k.name, {}}};
    for (const auto& name : k.roles) {
      if (auto role = parse_role(name)) key.principal.roles.push_back(*role);
    }
    keys_.emplace(k.access_key_id, std::move(key));
  }
}

const SqsKeyTable::Key* SqsKeyTable::find(std::string_view access_key_id) const {
  auto it = keys_.find(access_key_id);
  return it == keys_.end() ? nullptr : &it->second;
}

AccessControl::AccessControl(const Config& config)
    : sqs_keys_(std::make_shared<const SqsKeyTable>(config.sqs.access_keys)),
      public_metrics_(config.auth.public_metrics),
      current_(std::make_shared<const TokenTable>(config.auth.tokens)) {}

SqsMode AccessControl::sqs_mode() const {
  if (!sqs_keys_.load()->empty()) return SqsMode::keys;
  return enforcing() ? SqsMode::refused : SqsMode::anonymous;
}

void AccessControl::replace_sqs_keys(const std::vector<SqsAccessKey>& keys) {
  sqs_keys_.store(std::make_shared<const SqsKeyTable>(keys));
}

void AccessControl::replace(const std::vector<AuthToken>& tokens) {
  current_.store(std::make_shared<const TokenTable>(tokens));
}

AccessDecision AccessControl::check(Access needed, const std::string* authorization) const {
  // Held until this check returns: a reload meanwhile cannot free the table under it.
  const std::shared_ptr<const TokenTable> held = current_.load();
  const TokenTable& table = *held;
  if (needed == Access::reader_unless_public_metrics) {
    needed = public_metrics_ ? Access::open : Access::reader;
  }
  // Roles are listed only for the route that shows them (GET /whoami): no allocation on others.
  const bool list_roles = needed == Access::any_token;
  if (table.empty()) {
    return {Verdict::allowed, std::string(kAnonymous),
            list_roles ? std::vector<Role>{Role::admin} : std::vector<Role>{}, false};
  }
  if (needed == Access::open || needed == Access::sqs) {
    return {Verdict::allowed, std::string(kAnonymous), {}, true};  // the SQS front checks its own
  }
  std::optional<std::string_view> token;
  if (authorization) token = bearer_token(*authorization);
  const Principal* who = token ? table.find(*token) : nullptr;
  if (!who) return {Verdict::unauthorized, std::string(kAnonymous), {}, true};
  if (list_roles) {
    std::vector<Role> roles;
    for (Role r : {Role::producer, Role::worker, Role::reader, Role::admin}) {
      if (std::find(who->roles.begin(), who->roles.end(), r) != who->roles.end()) roles.push_back(r);
    }
    return {Verdict::allowed, who->name, std::move(roles), true};
  }
  Role role = needed == Access::producer ? Role::producer
              : needed == Access::worker ? Role::worker
              : needed == Access::reader ? Role::reader
                                         : Role::admin;
  return {who->may(role) ? Verdict::allowed : Verdict::forbidden, who->name, {}, true};
}

}  // namespace dlq::core

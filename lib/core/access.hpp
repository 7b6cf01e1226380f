// Who may do what. Bearer tokens from auth.tokens are kept only as SHA-256 hashes and compared
// in constant time; each route names the access it needs (in the router table) and check()
// decides before the handler runs. SIGHUP swaps in a new token table: a check holds the table it
// loaded by a shared pointer, and the last check done with an old table frees it.
#pragma once

#include <array>
#include <map>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "model/role.hpp"
#include "model/token_hash.hpp"

namespace dlq::core {

// What a route needs: nothing, one role, the reader role unless auth.public_metrics, or any valid
// token whatever its roles (GET /whoami: open without tokens, never 403).
// `sqs`: the SQS front's routes, which check SigV4 keys per action themselves (docs/sqs.md).
enum class Access {
  open,
  producer,
  worker,
  reader,
  admin,
  reader_unless_public_metrics,
  any_token,
  sqs
};
std::string_view to_string(Access a);

// SHA-256 of `text` as 64 lowercase hex digits (model/token_hash.hpp; dlqctl shares it).
using dlq::sha256_hex;

struct Principal {
  std::string name;
  std::vector<Role> roles;
  bool may(Role needed) const;  // admin may do everything
};

class TokenTable {
 public:
  // `tokens` are validated config entries (64 hex digits, known roles).
  explicit TokenTable(const std::vector<AuthToken>& tokens);
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  // The holder of `token`, comparing its hash against every entry, so the time taken does not
  // tell which entry (if any) matched.
  const Principal* find(std::string_view token) const;

 private:
  struct Entry {
    std::array<unsigned char, 32> hash{};
    Principal principal;
  };
  std::vector<Entry> entries_;
};

// The SQS front's access keys (sqs.access_keys), by access key id. The secret is kept as given:
// SigV4 needs it to compute the expected signature.
class SqsKeyTable {
 public:
  struct Key {
    std::string secret;
    Principal principal;
  };
  explicit SqsKeyTable(const std::vector<SqsAccessKey>& keys);
  bool empty() const { return keys_.empty(); }
  const Key* find(std::string_view access_key_id) const;

 private:
  std::map<std::string, Key, std::less<>> keys_;
};

// How the SQS front is served: with keys (SigV4 only), anonymously (neither keys nor tokens), or
// not at all (tokens without keys: every request is refused, naming sqs.access_keys).
enum class SqsMode { keys, anonymous, refused };

enum class Verdict { allowed, unauthorized, forbidden };

struct AccessDecision {
  Verdict verdict = Verdict::allowed;
  // The token's name, or "anonymous" when no token was needed or none is configured.
  std::string actor;
  // For Access::any_token only (empty otherwise): the token's roles in Role's order, each once;
  // without tokens, admin.
  std::vector<Role> roles;
  bool tokens_configured = false;
};

class AccessControl {
 public:
  explicit AccessControl(const Config& config);
  AccessControl(const AccessControl&) = delete;
  AccessControl& operator=(const AccessControl&) = delete;

  // `authorization`: the request's Authorization header, if any.
  AccessDecision check(Access needed, const std::string* authorization) const;
  // True when tokens are configured (otherwise every request is anonymous and allowed).
  bool enforcing() const { return !current_.load()->empty(); }
  std::size_t token_count() const { return current_.load()->size(); }
  // Thread-safe. Installs the tokens of a reloaded config (SIGHUP); the table it replaces is
  // freed once no check still uses it.
  void replace(const std::vector<AuthToken>& tokens);

  // The SQS front: its mode now, and the key table (held by the caller for one request).
  SqsMode sqs_mode() const;
  std::shared_ptr<const SqsKeyTable> sqs_keys() const { return sqs_keys_.load(); }
  // Thread-safe, as replace(): the keys of a reloaded config.
  void replace_sqs_keys(const std::vector<SqsAccessKey>& keys);

 private:
  std::atomic<std::shared_ptr<const SqsKeyTable>> sqs_keys_;
  bool public_metrics_;
  std::atomic<std::shared_ptr<const TokenTable>> current_;
};

}  // namespace dlq::core

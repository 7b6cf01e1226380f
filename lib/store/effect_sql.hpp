// Recorded side effects (issue 36): the rows of `effects`, one per (message, key), and the
// message's effect_count beside them. One per connection, on a store thread; the caller holds
// the message's row lock (MessageSql::lock) and the transaction.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "store/change.hpp"
#include "store/store.hpp"

namespace dlq::store {

class Connection;

class EffectSql {
 public:
  explicit EffectSql(Connection& c);
  ~EffectSql();
  EffectSql(const EffectSql&) = delete;
  EffectSql& operator=(const EffectSql&) = delete;

  // Every effect of the message, by key.
  std::vector<Effect> of(MessageId id);
  // p.decide on the locked `current` and the key's row, then the row written or deleted and
  // the message's effect_count set to what is stored.
  Result<EffectOutcome> record(const Message& current, const EffectParams& p);
  // A replay's resolutions (Change::resolutions) of the message's effects.
  void resolve(MessageId id, const std::vector<EffectResolution>& resolutions);
  // The messages holding an effect left `started`, ascending (batch previews' uncertain ones).
  std::vector<MessageId> started_message_ids();
  // Purge and retention: the effects of the messages in `id_list` (a JSON array of ids).
  void delete_for(const std::string& id_list);

 private:
  struct Statements;  // effect_sql.cpp: each kept statement with its SQL and its binds

  Connection& c_;
  std::unique_ptr<Statements> kept_;
};

}  // namespace dlq::store

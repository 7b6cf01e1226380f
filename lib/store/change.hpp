// What a read-modify-write decides: the facts about other rows a transition may need, and the
// change it makes (the message as it must become, history to append, an audit entry). Shared by
// every Store operation that lets the core decide inside the transaction.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/audit.hpp"
#include "model/error.hpp"
#include "model/message.hpp"

namespace dlq::store {

// Facts about other rows that a transition may need, loaded in the same transaction.
struct Related {
  // Statuses of the other messages of this queue that share the message's idempotency key.
  std::vector<Status> key_holders;
  // The message's latest history entry, when the update asked for it (a release folds into a
  // release before it).
  std::optional<AttemptRecord> last_entry;
  // The message's recorded side effects, when the update asked for them (a replay that resolves
  // some).
  std::vector<Effect> effects{};
};

// An operator's decision about a `started` effect, made in a replay's transaction (issue 36):
// `done` marks it done (no result; resolved_by the actor), otherwise it is forgotten (deleted).
struct EffectResolution {
  std::string key;
  bool done = false;
  std::optional<std::string> actor;
  TimeMs at = 0;
};

// The outcome of a read-modify-write: the message as it must become, plus history to append,
// plus the audit entry an operator's action writes — all in the transaction of the change.
struct Change {
  Message next;
  std::vector<AttemptRecord> history;
  std::optional<AuditEntry> audit;
  // Nothing to write: the request repeats a change already made (an ack resent under the lease
  // the message succeeded with). The store writes nothing and answers the message as it is.
  bool unchanged = false;
  // The first entry of `history` takes the place of the message's latest entry (Related's
  // last_entry) instead of being added: a folded release.
  bool fold = false;
  // Effects resolved with the change (the decide function also sets next.effect_count).
  std::vector<EffectResolution> resolutions{};
};

using Decide = std::function<Result<Change>(const Message& current, const Related& related)>;

}  // namespace dlq::store

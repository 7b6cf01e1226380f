// The message state machine: pure functions from (message as stored, request, policy, now) to
// the message as it must become plus the history to append, or the expected error. The store
// calls them inside its transaction, with the row locked, so each transition is atomic.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "core/redaction.hpp"
#include "core/retry_policy.hpp"
#include "core/sqs_queue_set.hpp"
#include "model/error.hpp"
#include "store/store.hpp"

namespace dlq::core {

struct FailInput {
  std::optional<std::string> lease_id;
  std::string error = "unspecified error";
  std::optional<ErrorClass> error_class;
  std::optional<bool> retryable;
  std::optional<long long> retry_in_seconds;
  std::optional<std::string> stack;
  std::optional<std::string> cause;
  std::optional<std::string> checkpoint;
  // The worker's own cause (`fingerprint`, checked by decode_fail): replaces the computed one.
  std::optional<std::string> fingerprint;
  // The error's title and the stack's frame (model/fingerprint.hpp), which the computed
  // fingerprint hashes with the job type and class: set by describe_failure.
  std::string title;
  std::string frame;
};

// Fills in.title and in.frame. Neither needs the stored message, so callers run it before the
// transaction (off the store's thread); only the hash, which needs the job type, runs inside.
void describe_failure(const Redactor& redactor, FailInput& in);

struct ReplayInput {
  std::optional<std::string> reason;
  std::optional<std::string> payload;  // the edited payload, masks already merged back
  bool payload_is_json = true;         // false: an edit that looks like JSON is stored as given
  std::optional<TimeMs> run_at;        // scheduled replay
  bool force = false;  // also replays a message at its max_replays
  std::optional<std::string> actor;
  int max_replays = 0;  // Config::max_replays_for the message (0: no limit)
  std::optional<long long> replay_id;  // the batch run replaying it
  // A single replay's decisions about effects left `started` (issue 36): key -> done (true) or
  // forget (false). Every key must name a `started` effect of the message.
  std::vector<std::pair<std::string, bool>> resolve_effects;
};

// POST .../effects (issue 36): `started` before a dangerous call, `done` after it (with its
// result), `cleared` when it did not happen after all.
enum class EffectCommand { started, done, cleared };
struct EffectInput {
  std::string lease_id;
  std::string key;
  EffectCommand state = EffectCommand::started;
  std::optional<std::string> description;
  std::optional<std::string> result;
};

// An edit of a JSON payload, or one that starts like JSON, must be JSON (issue 34, A4): 422
// `payload` `invalid_json` with the byte offset. Replays and trials check it with the message,
// after its 404 and before the 409s, so that a typo is never stored.
std::optional<Error> edited_payload_not_json(const std::string& stored, const std::string& edit);

// Whether `lease_id` is the message's current lease: it is processing under it. A lease is
// current until something ends it (an ack, a failure, a release, the reaper).
bool holds_lease(const Message& m, const std::string& lease_id);

// `ack`: the request is an acknowledgement (POST /ack, a claim's `ack`): one resent under the lease
// the message succeeded with changes nothing and is not an error (http-api B6). The single
// succeed route keeps Part A's answer: that lease is over, 409 lease-lost.
Result<store::Change> succeed(const Message& m, const std::optional<std::string>& lease_id,
                              TimeMs now, bool ack = false);
Result<store::Change> fail(const Message& m, const FailInput& in, const QueuePolicy& policy,
                           TimeMs now, const UnitRandom& random);
Result<store::Change> replay(const Message& m, const store::Related& related,
                             const ReplayInput& in, TimeMs now);
Result<store::Change> extend(const Message& m, const std::string& lease_id, TimeMs expires_at,
                             const std::optional<std::string>& checkpoint, TimeMs now);
// `related.last_entry`: the message's latest history entry; a `released` one is folded into
// (its count grows, its claimed_at stays, the rest is this release's) instead of adding another.
// On an SQS queue with a RedrivePolicy (`sqs`), a message received maxReceiveCount times dies
// instead (issue 39: it would become visible again).
Result<store::Change> release(const Message& m, const store::Related& related,
                              const std::string& lease_id, std::optional<TimeMs> due_at,
                              TimeMs now, const SqsQueueInfo* sqs = nullptr);
Result<store::Change> dismiss(const Message& m, const std::optional<std::string>& reason,
                              const std::optional<std::string>& actor, TimeMs now);
// Records one side effect under the message's current lease. `existing`: the key's row, if
// stored. `started`/`done` apply to a new or started key (a new one only below `max_effects`),
// `done` resent with its result changes nothing, `cleared` deletes a started key; anything else
// on a done key is invalid_state.
Result<store::EffectOutcome> record_effect(const Message& m, const std::optional<Effect>& existing,
                                           const EffectInput& in, int max_effects, TimeMs now);
// The reaper's transition for a processing message whose lease ran out. On a queue of the SQS
// front (`sqs`) it is pending again at once, with no backoff and no max_lease_expiries, as SQS
// makes a message visible again when its visibility timeout ends (issue 38); unless the queue's
// RedrivePolicy ends it after maxReceiveCount receives (issue 39).
store::Change expire_lease(const Message& m, const QueuePolicy& policy, TimeMs now,
                           const UnitRandom& random, const SqsQueueInfo* sqs = nullptr);
// A death on a queue with a RedrivePolicy, whatever its reason, names the policy's target
// (issue 39): `c` unchanged unless it makes the message dead.
void stamp_dead_letter_queue(store::Change& c, const SqsQueueInfo* sqs);

}  // namespace dlq::core

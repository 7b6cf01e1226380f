// The message and its history as the whole system sees them: status, error classes, dead-letter
// reasons, the message record and one entry of its attempt history. Plain data, no behaviour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/time.hpp"

namespace dlq {

using MessageId = std::int64_t;

// A queue's name: 1 to 64 of [A-Za-z0-9_-]. Config keys, paths and filters all hold to it (the
// UI's route pattern in ui/app.js is the same rule, written in JavaScript).
bool valid_queue_name(std::string_view name);

enum class Status { pending, processing, succeeded, dead, dismissed };
std::string_view to_string(Status s);
std::optional<Status> parse_status(std::string_view s);

// uncertain_effect (issue 36): a side effect the worker recorded as started may or may not have
// happened, so the job stops until someone decides (docs/api-decisions.md, "Error classes").
enum class ErrorClass {
  transient,
  throttled,
  timeout,
  not_found,
  invalid_input,
  auth,
  unknown,
  uncertain_effect
};
std::string_view to_string(ErrorClass c);
std::optional<ErrorClass> parse_error_class(std::string_view s);

// A side effect a worker recorded for a message (issue 36): `started` before the dangerous call,
// `done` after it. A `cleared` key is deleted, so it is never stored.
enum class EffectState { started, done };
std::string_view to_string(EffectState s);
std::optional<EffectState> parse_effect_state(std::string_view s);

struct Effect {
  std::string key;
  EffectState state = EffectState::started;
  std::optional<std::string> description;
  std::optional<std::string> result;
  int attempt = 0;  // the attempt that recorded it
  TimeMs recorded_at = 0;
  std::optional<std::string> resolved_by;  // the operator who set it done on a replay
};

// max_receive_count: an SQS queue's RedrivePolicy ended it (issue 39).
enum class DeadReason {
  retries_exhausted,
  non_retryable,
  retry_window_exceeded,
  lease_expired,
  max_receive_count
};
std::string_view to_string(DeadReason r);
std::optional<DeadReason> parse_dead_reason(std::string_view s);

struct Message {
  MessageId id = 0;
  std::string queue;
  std::string payload;
  Status status = Status::pending;
  int retry_count = 0;
  int max_retries = 3;
  std::optional<TimeMs> retry_after;
  std::optional<std::string> last_error;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  // Part B.
  int priority = 0;
  std::optional<std::string> job_type;
  std::optional<std::string> idempotency_key;
  std::optional<ErrorClass> error_class;
  std::optional<DeadReason> dead_reason;
  std::optional<std::string> checkpoint;
  int lease_expiries = 0;
  int attempts = 0;
  std::optional<TimeMs> first_attempt_at;
  std::optional<TimeMs> last_attempt_at;
  std::optional<TimeMs> dead_at;
  int replay_count = 0;
  std::optional<TimeMs> lease_expires_at;
  std::optional<std::string> lease_id;
  // The latest failure's cause as incidents group it (model/fingerprint.hpp), like last_error.
  std::optional<std::string> fingerprint;
  std::optional<std::string> title;
  // Internal bookkeeping, never serialised as such.
  std::optional<std::string> worker;  // who holds the current lease
  std::optional<std::string> worker_version;  // the build it said it runs (claim's worker_version)
  TimeMs life_started_at = 0;         // enqueue or latest replay: the retry window counts from here
  TimeMs status_at = 0;               // when the message entered its current status
  // How many effects the message holds (the effects table's rows), so that only messages that
  // have any cost a read of them; `effects` is filled only where an answer carries them (claims).
  int effect_count = 0;
  std::vector<Effect> effects{};
  // The SQS front (issue 38): MessageAttributes as sent (JSON text; dlq's own views do not show
  // them), and the attempts made before the current life (ApproximateReceiveCount counts the
  // rest). Set at each replay.
  std::optional<std::string> sqs_attributes;
  int life_attempts = 0;
  // Issue 39: the RedrivePolicy target its queue named when it died (replay clears it), and a DLQ
  // receive's hiding of the dead letter: until when, and under which receipt.
  std::optional<std::string> dead_letter_queue;
  std::optional<TimeMs> sqs_hidden_until;
  std::optional<std::string> sqs_receipt;
  // Set only on a message handed to a claim as a trial run (issue 36): its lease is the trial's.
  std::optional<long long> trial_id;
  // A claim left the payload in the database (past ClaimParams::payload_budget): whoever answers
  // with the message reads it again by id.
  bool payload_withheld = false;
};

// What ended an attempt, or a lifecycle event recorded in the same history.
// `trial`: a trial run ended (issue 36); not an attempt, one entry per trial.
enum class AttemptOutcome { succeeded, failed, lease_expired, released, replayed, dismissed, trial };
std::string_view to_string(AttemptOutcome o);
std::optional<AttemptOutcome> parse_attempt_outcome(std::string_view s);

// One entry of a message's history. Attempts carry claim/finish data; replay and dismiss
// events carry the operator's reason and, for an edited replay, the payload it replaced.
struct AttemptRecord {
  MessageId message_id = 0;
  int attempt = 0;  // attempt number (1-based, across lives); for events, the attempts so far
  AttemptOutcome outcome = AttemptOutcome::failed;
  std::optional<TimeMs> claimed_at;
  TimeMs finished_at = 0;
  std::optional<std::string> worker;
  std::optional<std::string> error;
  std::optional<ErrorClass> error_class;
  std::optional<std::string> stack;
  std::optional<std::string> cause;
  std::optional<std::string> actor;
  std::optional<std::string> reason;
  std::optional<std::string> previous_payload;
  // The releases this entry stands for: a release that follows a `released` entry updates that
  // entry instead of adding one (docs/api-decisions.md, "Attempt history"). 1 for every other
  // entry.
  int count = 1;
  // A failure's or lease expiry's cause (model/fingerprint.hpp); null on other entries and on
  // entries stored before migration 012.
  std::optional<std::string> fingerprint;
  std::optional<std::string> title;
  // Lineage: the message's replay_count when the entry was written (0 before the first replay; a
  // `replayed` entry carries the count its replay made), and on a `replayed` entry written by a
  // batch replay run, that run's id.
  int life = 0;
  std::optional<long long> replay_id;
  // The claim's `worker_version` (migration 016): which build of the worker code ran it.
  std::optional<std::string> worker_version;
  // A `trial` entry's {"trial_id", "status", "would_effects"} as JSON text (migration 018);
  // none on every other entry.
  std::optional<std::string> trial;
  // The attempt in progress (claimed, not finished): no outcome and no finish time yet. Never
  // stored; the history view appends it.
  bool under_way = false;
};

}  // namespace dlq

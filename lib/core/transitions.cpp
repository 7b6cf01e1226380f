// The message state machine as pure functions: the store runs them inside its transaction.
#include "core/transitions.hpp"

#include <algorithm>

#include "model/fingerprint.hpp"
#include "model/json_text.hpp"

namespace dlq::core {
namespace {

// A lease_id that is not the message's current lease loses, whatever the status (http-api C).
// Only a processing message has a current lease (a succeeded one keeps the id of the lease it
// succeeded under, for a resent ack, but that lease is over).
std::optional<Error> check_lease(const Message& m, const std::optional<std::string>& lease_id) {
  if (lease_id && !holds_lease(m, *lease_id)) {
    return Error(Errc::lease_lost,
                 "lease lost: the message was reaped and may belong to another worker now");
  }
  return std::nullopt;
}

// The attempt that ends now, as the history records it.
AttemptRecord finished_attempt(const Message& m, AttemptOutcome outcome, TimeMs now) {
  AttemptRecord a;
  a.message_id = m.id;
  a.attempt = m.attempts;
  a.outcome = outcome;
  a.claimed_at = m.last_attempt_at;
  a.finished_at = now;
  a.worker = m.worker;
  a.worker_version = m.worker_version;
  return a;
}

void end_lease(Message& m) {
  m.lease_id.reset();
  m.lease_expires_at.reset();
  m.worker.reset();
  m.worker_version.reset();
}

void enter(Message& m, Status s, TimeMs now) {
  m.status = s;
  m.status_at = now;
  m.updated_at = now;
}

void make_dead(Message& m, DeadReason reason, TimeMs now) {
  enter(m, Status::dead, now);
  m.dead_reason = reason;
  m.dead_at = now;
  m.retry_after.reset();
}

// The receives of the message's current life (SQS's ApproximateReceiveCount).
int receive_count(const Message& m) { return m.attempts - m.life_attempts; }

// Whether `m`, about to become visible again on an SQS queue, has been received as often as the
// queue's RedrivePolicy allows.
bool receives_exhausted(const Message& m, const SqsQueueInfo* sqs) {
  return sqs && sqs->redrive && receive_count(m) >= sqs->redrive->max_receive_count;
}

// The death at maxReceiveCount: titled and fingerprinted like a lease expiry, by its own text,
// with no error class of its own (the message keeps an earlier failure's).
void die_of_receives(Message& n, AttemptRecord& entry, const SqsRedrive& redrive, TimeMs now) {
  std::string title = receive_count_title(receive_count(n));
  entry.title = title;
  entry.fingerprint = titled_fingerprint(n.job_type, title);
  n.fingerprint = entry.fingerprint;
  n.title = title;
  n.last_error = std::move(title);
  make_dead(n, DeadReason::max_receive_count, now);
  n.dead_letter_queue = redrive.target;
}

}  // namespace

void stamp_dead_letter_queue(store::Change& c, const SqsQueueInfo* sqs) {
  if (sqs && sqs->redrive && c.next.status == Status::dead && !c.next.dead_letter_queue) {
    c.next.dead_letter_queue = sqs->redrive->target;
  }
}

void describe_failure(const Redactor& redactor, FailInput& in) {
  in.title = incident_title(redactor.text(in.error));
  in.frame = in.stack ? stack_frame(*in.stack) : std::string();
}

bool holds_lease(const Message& m, const std::string& lease_id) {
  return m.status == Status::processing && m.lease_id && *m.lease_id == lease_id;
}

Result<store::Change> succeed(const Message& m, const std::optional<std::string>& lease_id,
                              TimeMs now, bool ack) {
  // An ack resent under the lease the message succeeded with (its answer was lost): 200 again,
  // nothing written (http-api B6).
  if (ack && m.status == Status::succeeded && lease_id && m.lease_id == lease_id) {
    store::Change same{m, {}, std::nullopt};
    same.unchanged = true;
    return same;
  }
  if (auto e = check_lease(m, lease_id)) return *e;
  if (m.status != Status::processing) {
    return Error(Errc::invalid_state, "only processing messages can succeed");
  }
  store::Change c{m, {finished_attempt(m, AttemptOutcome::succeeded, now)}, std::nullopt};
  end_lease(c.next);
  c.next.lease_id = m.lease_id;  // kept (never shown) so that a resent ack can be recognised
  enter(c.next, Status::succeeded, now);
  return c;
}

Result<store::Change> fail(const Message& m, const FailInput& in, const QueuePolicy& policy,
                           TimeMs now, const UnitRandom& random) {
  if (auto e = check_lease(m, in.lease_id)) return *e;
  if (m.status != Status::processing) {
    return Error(Errc::invalid_state, "only processing messages can fail");
  }
  ErrorClass cls = in.error_class.value_or(ErrorClass::unknown);
  bool listed = std::find(policy.non_retryable.begin(), policy.non_retryable.end(), cls) !=
                policy.non_retryable.end();
  bool retryable = in.retryable.value_or(!listed);

  AttemptRecord attempt = finished_attempt(m, AttemptOutcome::failed, now);
  attempt.error = in.error;
  attempt.error_class = cls;
  attempt.stack = in.stack;
  attempt.cause = in.cause;
  std::string fingerprint = in.fingerprint
                                ? worker_fingerprint(m.job_type, *in.fingerprint)
                                : computed_fingerprint(m.job_type, cls, in.title, in.frame);
  attempt.title = in.title;
  attempt.fingerprint = fingerprint;

  store::Change c{m, {std::move(attempt)}, std::nullopt};
  Message& n = c.next;
  end_lease(n);
  n.retry_count = m.retry_count + 1;
  n.last_error = in.error;
  n.error_class = cls;
  n.title = in.title;
  n.fingerprint = std::move(fingerprint);
  if (in.checkpoint) n.checkpoint = in.checkpoint;

  if (!retryable) {
    make_dead(n, DeadReason::non_retryable, now);
  } else if (n.retry_count >= m.max_retries) {
    make_dead(n, DeadReason::retries_exhausted, now);
  } else {
    TimeMs delay = in.retry_in_seconds ? *in.retry_in_seconds * kMillisPerSecond
                                       : backoff_delay(policy.backoff, n.retry_count, random);
    TimeMs due = now + delay;
    TimeMs window = seconds_to_ms(policy.retry_window_seconds);
    if (window > 0 && due > m.life_started_at + window) {
      make_dead(n, DeadReason::retry_window_exceeded, now);
    } else {
      enter(n, Status::pending, now);
      n.retry_after = due;
    }
  }
  return c;
}

namespace {

// resolve_effects: each key must be an effect of the message left `started` (checked before the
// state's 409s, like an edit's JSON, so that a typo is never applied).
std::optional<Error> unresolvable_effects(const store::Related& related, const ReplayInput& in) {
  FieldErrors errors;
  for (const auto& resolution : in.resolve_effects) {
    const std::string& key = resolution.first;  // a named variable: lambdas capture no bindings
    auto it = std::find_if(related.effects.begin(), related.effects.end(),
                           [&key](const Effect& e) { return e.key == key; });
    if (it == related.effects.end()) {
      errors.push_back({"resolve_effects." + key, "the message has no effect " + key, "invalid"});
    } else if (it->state != EffectState::started) {
      errors.push_back({"resolve_effects." + key,
                        "effect " + key + " is done; only started effects can be resolved",
                        "invalid"});
    }
  }
  if (errors.empty()) return std::nullopt;
  return Error::validation(std::move(errors));
}

}  // namespace

std::optional<Error> edited_payload_not_json(const std::string& stored, const std::string& edit) {
  auto first = edit.find_first_not_of(" \t\r\n");
  bool looks_json = first != std::string::npos && (edit[first] == '{' || edit[first] == '[');
  if (!looks_json && !is_json_structure(stored)) return std::nullopt;
  auto bad = json_syntax_error(edit);
  if (!bad) return std::nullopt;
  return Error::validation({{"payload",
                             "payload is not valid JSON at byte " + std::to_string(bad->offset) +
                                 ": " + bad->what + " (payload_is_json: false stores it as text)",
                             "invalid_json"}});
}

Result<store::Change> replay(const Message& m, const store::Related& related,
                             const ReplayInput& in, TimeMs now) {
  if (auto bad = unresolvable_effects(related, in)) return *bad;
  bool replayable = m.status == Status::dead || (m.status == Status::dismissed && in.force);
  if (!replayable) return Error(Errc::invalid_state, "only dead messages can be replayed");
  if (in.max_replays > 0 && m.replay_count >= in.max_replays && !in.force) {
    return Error(Errc::replay_limit, "the message was replayed " + std::to_string(m.replay_count) +
                                         " times, its max_replays (use force to replay it anyway)");
  }
  auto held_by = [&related](Status s) {
    return std::find(related.key_holders.begin(), related.key_holders.end(), s) !=
           related.key_holders.end();
  };
  if (held_by(Status::pending) || held_by(Status::processing)) {
    return Error(Errc::idempotency_conflict,
                 "another message with this idempotency key is already in flight");
  }
  if (held_by(Status::succeeded) && !in.force) {
    return Error(Errc::already_succeeded,
                 "a message with this idempotency key already succeeded (use force to replay)");
  }

  AttemptRecord event;
  event.message_id = m.id;
  event.attempt = m.attempts;
  event.outcome = AttemptOutcome::replayed;
  event.finished_at = now;
  event.actor = in.actor;
  event.reason = in.reason;
  event.replay_id = in.replay_id;

  store::Change c{m, {}, std::nullopt};
  Message& n = c.next;
  if (in.payload && *in.payload != m.payload) {
    event.previous_payload = m.payload;
    n.payload = *in.payload;
  }
  c.history.push_back(std::move(event));
  enter(n, Status::pending, now);
  n.retry_count = 0;
  n.lease_expiries = 0;
  n.last_error.reset();
  n.retry_after = in.run_at && *in.run_at > now ? in.run_at : std::nullopt;
  n.error_class.reset();
  n.fingerprint.reset();
  n.title.reset();
  n.dead_reason.reset();
  n.dead_at.reset();
  n.life_started_at = now;
  n.replay_count = m.replay_count + 1;
  n.life_attempts = m.attempts;
  // No longer a dead letter of an SQS dead-letter queue, nor hidden by a DLQ receive.
  n.dead_letter_queue.reset();
  n.sqs_hidden_until.reset();
  n.sqs_receipt.reset();
  end_lease(n);
  for (const auto& [key, done] : in.resolve_effects) {
    c.resolutions.push_back({key, done, in.actor, now});
    if (!done) --n.effect_count;
  }
  return c;
}

Result<store::Change> extend(const Message& m, const std::string& lease_id, TimeMs expires_at,
                             const std::optional<std::string>& checkpoint, TimeMs now) {
  if (auto e = check_lease(m, lease_id)) return *e;
  if (m.status != Status::processing) {
    return Error(Errc::invalid_state, "only processing messages can be extended");
  }
  store::Change c{m, {}, std::nullopt};
  c.next.lease_expires_at = expires_at;
  if (checkpoint) c.next.checkpoint = checkpoint;
  c.next.updated_at = now;
  return c;
}

Result<store::Change> release(const Message& m, const store::Related& related,
                              const std::string& lease_id, std::optional<TimeMs> due_at,
                              TimeMs now, const SqsQueueInfo* sqs) {
  if (auto e = check_lease(m, lease_id)) return *e;
  if (m.status != Status::processing) {
    return Error(Errc::invalid_state, "only processing messages can be released");
  }
  AttemptRecord entry = finished_attempt(m, AttemptOutcome::released, now);
  // A release right after a release joins its entry: a loop of claims and releases (a worker
  // that keeps giving back what it cannot run yet) is one entry, not one per turn. A new life
  // begins with a `replayed` entry, so a latest entry that is `released` belongs to this life.
  const auto& last = related.last_entry;
  bool fold = last && last->outcome == AttemptOutcome::released;
  if (fold) {
    entry.claimed_at = last->claimed_at;
    entry.count = last->count + 1;
  }
  if (receives_exhausted(m, sqs)) {
    // Its own entry, not folded: the history shows the release that ended the message.
    entry.claimed_at = m.last_attempt_at;
    entry.count = 1;
    store::Change c{m, {}, std::nullopt};
    end_lease(c.next);
    die_of_receives(c.next, entry, *sqs->redrive, now);
    c.history.push_back(std::move(entry));
    return c;
  }
  store::Change c{m, {std::move(entry)}, std::nullopt};
  c.fold = fold;
  end_lease(c.next);
  enter(c.next, Status::pending, now);
  c.next.retry_after = due_at;
  return c;
}

Result<store::Change> dismiss(const Message& m, const std::optional<std::string>& reason,
                              const std::optional<std::string>& actor, TimeMs now) {
  if (m.status != Status::dead) {
    return Error(Errc::invalid_state, "only dead messages can be dismissed");
  }
  AttemptRecord event;
  event.message_id = m.id;
  event.attempt = m.attempts;
  event.outcome = AttemptOutcome::dismissed;
  event.finished_at = now;
  event.actor = actor;
  event.reason = reason;
  store::Change c{m, {std::move(event)}, std::nullopt};
  enter(c.next, Status::dismissed, now);
  return c;
}

Result<store::EffectOutcome> record_effect(const Message& m, const std::optional<Effect>& existing,
                                           const EffectInput& in, int max_effects, TimeMs now) {
  if (!holds_lease(m, in.lease_id)) {
    return Error(Errc::lease_lost,
                 "lease lost: the message was reaped and may belong to another worker now");
  }
  store::EffectOutcome out;
  if (existing && existing->state == EffectState::done) {
    // A done effect is a fact: only the same `done` again (its answer was lost) is accepted.
    if (in.state == EffectCommand::done && in.result == existing->result) {
      out.effect = *existing;
      return out;
    }
    return Error(Errc::invalid_state, "effect " + in.key + " is done; it cannot change");
  }
  if (in.state == EffectCommand::cleared) {
    // Deleted when started; a clear of a key not stored (resent) changes nothing.
    out.op = existing ? store::EffectOutcome::Op::remove : store::EffectOutcome::Op::keep;
    out.cleared = true;
    out.effect.key = in.key;
    out.effect.attempt = m.attempts;
    out.effect.recorded_at = now;
    return out;
  }
  if (!existing && m.effect_count >= max_effects) {
    return Error::validation({{"key",
                               "a message holds at most " + std::to_string(max_effects) +
                                   " effects (limits.max_effects_per_message)",
                               "limit"}});
  }
  out.op = store::EffectOutcome::Op::put;
  Effect& e = out.effect;
  e.key = in.key;
  e.state = in.state == EffectCommand::done ? EffectState::done : EffectState::started;
  // `done` after `started` keeps the description given at the start unless it brings its own.
  e.description = in.description ? in.description
                                 : (existing ? existing->description : std::nullopt);
  e.result = in.result;
  e.attempt = m.attempts;
  e.recorded_at = now;
  return out;
}

store::Change expire_lease(const Message& m, const QueuePolicy& policy, TimeMs now,
                           const UnitRandom& random, const SqsQueueInfo* sqs) {
  AttemptRecord attempt = finished_attempt(m, AttemptOutcome::lease_expired, now);
  attempt.error = "lease expired";
  // Its own cause, whatever failed before: job type and "lease expired" alone. The message keeps
  // the earlier failure's error_class (B1).
  std::string fingerprint = lease_expiry_fingerprint(m.job_type);
  attempt.title = std::string(kLeaseExpiredTitle);
  attempt.fingerprint = fingerprint;
  store::Change c{m, {std::move(attempt)}, std::nullopt};
  Message& n = c.next;
  TimeMs expired_at = m.lease_expires_at.value_or(now);
  end_lease(n);
  n.lease_expiries = m.lease_expiries + 1;
  n.last_error = "lease expired";
  n.title = std::string(kLeaseExpiredTitle);
  n.fingerprint = std::move(fingerprint);
  if (receives_exhausted(m, sqs)) {
    die_of_receives(n, c.history.front(), *sqs->redrive, now);
  } else if (sqs) {
    enter(n, Status::pending, now);
    n.retry_after.reset();
  } else if (n.lease_expiries >= policy.max_lease_expiries) {
    make_dead(n, DeadReason::lease_expired, now);
  } else {
    enter(n, Status::pending, now);
    n.retry_after = expired_at + backoff_delay(policy.backoff, n.lease_expiries, random);
  }
  return c;
}

}  // namespace dlq::core

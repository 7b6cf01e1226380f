// Trial runs: the pure rules (start, answer, expiry, the history entry) and the TrialDesk that
// runs them through the store and wakes the claims that asked for trials.
#include "core/trials.hpp"

#include <boost/json.hpp>

#include "core/audit.hpp"

namespace dlq::core {
namespace json = boost::json;


namespace {

Error lease_lost() {
  return Error(Errc::lease_lost, "lease lost: the trial ended or is held under another lease");
}

std::string trial_summary(const Trial& t) {
  json::object o;
  o["trial_id"] = t.id;
  o["status"] = to_string(t.status);
  o["would_effects"] = would_effects_array(t.would_effects);
  return json::serialize(o);
}

AuditEntry trial_audit(const std::vector<store::TrialStarted>& started,
                       const std::optional<std::string>& actor,
                       const std::optional<std::string>& reason, TimeMs now) {
  AuditEntry e;
  e.at = now;
  e.actor = actor;
  e.action = "trial";
  e.reason = reason;
  json::array trials;
  for (const auto& s : started) {
    if (!s.created) continue;
    e.message_ids.push_back(s.trial.message_id);
    if (!e.queue) {
      e.queue = s.trial.queue;
    } else if (*e.queue != s.trial.queue) {
      e.queue = std::nullopt;  // several queues: the entry names none
    }
    trials.push_back(json::object{{"trial_id", s.trial.id},
                                  {"message_id", s.trial.message_id},
                                  {"queue", s.trial.queue},
                                  {"payload_edited", s.trial.payload.has_value()}});
  }
  e.details = json::serialize(json::object{{"trials", std::move(trials)}});
  return e;
}

}  // namespace

Result<Trial> decide_trial_start(const Message& m, const std::optional<Trial>& open,
                                 const TrialStartInput& in,
                                 const std::optional<std::string>& payload,
                                 const std::optional<std::string>& actor, TimeMs now) {
  if (m.status != Status::dead || !m.job_type) {
    return Error(Errc::invalid_state,
                 "only dead messages with a job type can be tried (a worker claims trials by type)");
  }
  if (open) return *open;
  Trial t;
  t.message_id = m.id;
  t.queue = m.queue;
  t.job_type = *m.job_type;
  t.status = TrialStatus::pending;
  t.actor = actor;
  t.reason = in.reason;
  t.payload = payload;
  t.created_at = now;
  return t;
}

AttemptRecord trial_entry(const Trial& ended, const Message& m) {
  AttemptRecord a;
  a.message_id = m.id;
  a.attempt = m.attempts;
  a.outcome = AttemptOutcome::trial;
  a.claimed_at = ended.claimed_at;
  a.finished_at = ended.finished_at.value_or(0);
  a.worker = ended.worker;
  a.worker_version = ended.worker_version;
  a.error = ended.error;
  a.error_class = ended.error_class;
  a.stack = ended.stack;
  a.cause = ended.cause;
  a.actor = ended.actor;
  a.reason = ended.reason;
  a.trial = trial_summary(ended);
  return a;
}

Result<store::TrialChange> answer_trial(const Trial& t, const Message& m, const TrialAnswer& a,
                                        TimeMs now) {
  // The same answer again under the lease it ended with (its first answer was lost on the way):
  // 200 with the trial, nothing written, as a resent ack.
  const bool same_end = (a.kind == TrialAnswer::Kind::succeed && t.status == TrialStatus::succeeded) ||
                        (a.kind == TrialAnswer::Kind::fail && t.status == TrialStatus::failed);
  if (same_end && t.lease_id == a.lease_id) return store::TrialChange{t, std::nullopt};
  if (t.status != TrialStatus::running || t.lease_id != a.lease_id) return lease_lost();
  store::TrialChange c{t, std::nullopt};
  Trial& n = c.next;
  switch (a.kind) {
    case TrialAnswer::Kind::extend:
      n.lease_expires_at = a.lease_until;
      return c;
    case TrialAnswer::Kind::succeed:
      n.status = TrialStatus::succeeded;
      break;
    case TrialAnswer::Kind::fail:
      n.status = TrialStatus::failed;
      n.error = a.failure.error;
      n.error_class = a.failure.error_class.value_or(ErrorClass::unknown);
      n.stack = a.failure.stack;
      n.cause = a.failure.cause;
      break;
  }
  n.would_effects = a.would_effects;
  n.finished_at = now;
  n.lease_expires_at.reset();
  c.entry = trial_entry(n, m);
  return c;
}

store::TrialChange expire_trial(const Trial& t, const Message* m, TimeMs now) {
  store::TrialChange c{t, std::nullopt};
  Trial& n = c.next;
  n.error = t.status == TrialStatus::running
                ? "trial expired: its lease ran out before the worker answered"
                : "trial expired: no worker claimed it within trials.timeout_seconds";
  n.status = TrialStatus::expired;
  n.finished_at = now;
  n.lease_expires_at.reset();
  if (m) c.entry = trial_entry(n, *m);
  return c;
}

TrialDesk::TrialDesk(store::Store& store, QueueService& service, const Config& config)
    : store_(store), service_(service), config_(config) {}

void TrialDesk::wake(const std::vector<store::TrialStarted>& started) {
  for (const auto& s : started) {
    if (s.created) service_.trial_started(s.trial.queue, s.trial.job_type);
  }
}

awaitable<Result<store::TrialStarted>> TrialDesk::start(const RequestContext& ctx,
                                                        std::string queue, MessageId id,
                                                        TrialStartInput in) {
  store::TrialStartParams p;
  p.items = {{std::move(queue), id}};
  p.decide = [&in, &ctx, this](std::size_t, const Message* m,
                               const std::optional<Trial>& open) -> Result<Trial> {
    if (!m) return Error(Errc::message_not_found, "message not found");
    // The edit follows replay's rules: its JSON checked first, masks left in place keep the
    // stored values.
    std::optional<std::string> payload;
    if (in.payload) {
      if (in.payload_is_json) {
        if (auto bad = edited_payload_not_json(m->payload, *in.payload)) return *bad;
      }
      std::string merged = service_.redactor().merge_masks(m->payload, *in.payload);
      if (merged != m->payload) payload = std::move(merged);
    }
    return decide_trial_start(*m, open, in, payload, ctx.actor, ctx.now);
  };
  p.audit = [&in, &ctx](const std::vector<store::TrialStarted>& started)
      -> std::optional<AuditEntry> {
    if (started.empty() || !started.front().created) return std::nullopt;
    return trial_audit(started, ctx.actor, in.reason, ctx.now);
  };
  auto started = co_await store_.trials_start(std::move(p));
  if (!started) co_return started.error();
  wake(*started);
  co_return std::move(started->front());
}

awaitable<Result<std::vector<store::TrialStarted>>> TrialDesk::start_many(
    const RequestContext& ctx, std::vector<MessageId> ids, std::optional<std::string> reason) {
  store::TrialStartParams p;
  for (MessageId id : ids) p.items.push_back({std::nullopt, id});
  TrialStartInput in;
  in.reason = reason;
  p.decide = [&in, &ctx](std::size_t i, const Message* m,
                         const std::optional<Trial>& open) -> Result<Trial> {
    const std::string field = "ids[" + std::to_string(i) + "]";
    if (!m) return Error::validation({{field, "no message has this id", "not_found"}});
    auto trial = decide_trial_start(*m, open, in, std::nullopt, ctx.actor, ctx.now);
    if (!trial) {
      return Error::validation({{field, "message " + std::to_string(m->id) + ": " +
                                            trial.error().message, "invalid"}});
    }
    return trial;
  };
  p.audit = [&in, &ctx](const std::vector<store::TrialStarted>& started)
      -> std::optional<AuditEntry> {
    for (const auto& s : started) {
      if (s.created) return trial_audit(started, ctx.actor, in.reason, ctx.now);
    }
    return std::nullopt;
  };
  auto started = co_await store_.trials_start(std::move(p));
  if (started) wake(*started);
  co_return started;
}

awaitable<Result<Trial>> TrialDesk::find(const RequestContext&, std::string queue, MessageId id,
                                         long long trial_id) {
  auto t = co_await store_.trial_find(std::move(queue), id, trial_id);
  if (!t) co_return Error(Errc::trial_not_found, "trial run not found");
  co_return std::move(*t);
}

awaitable<Result<Trial>> TrialDesk::answer(const RequestContext& ctx, std::string queue,
                                           MessageId id, long long trial_id, TrialAnswer a) {
  store::TrialUpdateParams p;
  p.queue = std::move(queue);
  p.id = id;
  p.trial_id = trial_id;
  p.decide = [a = std::move(a), now = ctx.now](const Trial& t, const Message& m) {
    return answer_trial(t, m, a, now);
  };
  co_return co_await store_.trial_update(std::move(p));
}

awaitable<std::size_t> TrialDesk::expire(TimeMs now) {
  store::TrialExpireParams p;
  p.now = now;
  p.pending_before = now - seconds_to_ms(config_.trials.timeout_seconds);
  p.decide = [now](const Trial& t, const Message* m) { return expire_trial(t, m, now); };
  auto ended = co_await store_.trials_expire(std::move(p));
  co_return ended.size();
}

TaskSpec trial_expiry_task(TrialDesk& desk) {
  TaskSpec spec;
  spec.name = "trial-expiry";
  spec.scope = TaskScope::leader_only;
  spec.interval_ms = 1000;
  spec.body = [&desk](const TaskContext& ctx) -> awaitable<void> {
    co_await desk.expire(ctx.now());
  };
  return spec;
}

}  // namespace dlq::core

// The dead-letter desk: previews, confirmations bound to them, runs and batch dismissal.
#include "core/desk.hpp"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>

#include "core/access.hpp"
#include "core/audit.hpp"
#include "core/lease_tokens.hpp"
#include "core/replay_runner.hpp"
#include "core/task_host.hpp"
#include "core/transitions.hpp"

namespace dlq::core {
namespace json = boost::json;

namespace {

constexpr std::size_t kDismissBatch = 1000;

// What makes a confirmation stale: one message more or less. The token binds the set, not an
// order: the preview reads in id order, a confirmation with keep_order in dead_at order, so both
// digest the ids sorted (which is also how previews stored before this rule were digested).
std::string ids_digest(std::vector<MessageId> ids) {
  std::sort(ids.begin(), ids.end());
  std::string text;
  text.reserve(ids.size() * 8);
  for (auto id : ids) {
    text += std::to_string(id);
    text += ',';
  }
  return sha256_hex(text);
}

Error stale(std::string why) { return Error(Errc::preview_stale, std::move(why)); }

// The checks every confirmation makes against its stored preview.
std::optional<Error> check_preview(const store::ConfirmFacts& facts, const std::string& filter,
                                   TimeMs now) {
  if (!facts.preview) return stale("the confirm token is unknown or was already used");
  const auto& p = *facts.preview;
  if (p.expires_at < now) return stale("the preview expired; preview again");
  if (p.filter != filter) return stale("the filter differs from the preview's");
  if (static_cast<long long>(facts.ids_now.size()) != p.matched ||
      ids_digest(facts.ids_now) != p.ids_sha256) {
    return stale("the filter now matches other messages than the preview did; preview again");
  }
  return std::nullopt;
}

std::vector<std::string> non_idempotent(const Config& config,
                                        const std::vector<std::string>& job_types) {
  std::vector<std::string> out;
  for (const auto& t : job_types) {
    auto it = config.job_types.find(t);
    if (it != config.job_types.end() && !it->second.idempotent) out.push_back(t);
  }
  return out;
}

// The slowest replay_rate_per_second among the job types (0: none caps the rate).
double rate_cap(const Config& config, const std::vector<std::string>& job_types) {
  double cap = 0;
  for (const auto& t : job_types) {
    auto it = config.job_types.find(t);
    if (it == config.job_types.end() || it->second.replay_rate_per_second <= 0) continue;
    double r = it->second.replay_rate_per_second;
    cap = cap == 0 ? r : std::min(cap, r);
  }
  return cap;
}

// The matched messages a run would skip as replayed max_replays times already.
long long at_replay_limit(const Config& config, const std::vector<store::ReplayTally>& tallies) {
  long long n = 0;
  for (const auto& t : tallies) {
    int limit = config.max_replays_for(t.queue, t.job_type);
    if (limit > 0 && t.replay_count >= limit) n += t.messages;
  }
  return n;
}

// The queue a batch action's canonical filter names, for the entry's own `queue` (GET
// /audit?queue= finds it); none when the filter spans queues.
std::optional<std::string> filter_queue(const std::string& canonical) {
  std::error_code ec;
  json::value v = json::parse(canonical, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto* queue = v.get_object().if_contains("queue");
  if (queue == nullptr || !queue->is_string()) return std::nullopt;
  return std::string(queue->get_string());
}

AuditEntry run_audit(const store::ReplayRun& before, const store::ReplayRun& after,
                     const std::string& action, const RequestContext& ctx) {
  AuditEntry e;
  e.at = ctx.now;
  e.actor = ctx.actor;
  e.action = action;
  e.queue = filter_queue(before.filter);
  e.filter = before.filter;
  json::object d{{"replay_id", before.id},
                 {"status_before", to_string(before.status)},
                 {"status", to_string(after.status)},
                 {"replayed", before.replayed},
                 {"skipped", before.skipped}};
  e.details = json::serialize(d);
  return e;
}

}  // namespace

json::value json_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return static_cast<std::int64_t>(v);
  return v;
}

std::string canonical_filter(const store::DeadFilter& f) {
  json::object o;
  if (f.queue) o["queue"] = *f.queue;
  if (f.job_type) o["job_type"] = *f.job_type;
  if (f.error_class) o["error_class"] = to_string(*f.error_class);
  if (f.dead_reason) o["dead_reason"] = to_string(*f.dead_reason);
  if (f.fingerprint) o["fingerprint"] = *f.fingerprint;
  if (f.dead_letter_queue) o["dead_letter_queue"] = *f.dead_letter_queue;
  if (f.since) o["since"] = format_rfc3339(*f.since);
  if (f.until) o["until"] = format_rfc3339(*f.until);
  if (!f.ids.empty()) {
    json::array ids;
    for (auto id : f.ids) ids.emplace_back(id);
    o["ids"] = std::move(ids);
  }
  return json::serialize(o);
}

Result<std::pair<store::ReplayRun, AuditEntry>> decide_run_change(const store::ReplayRun& run,
                                                                  RunAction action,
                                                                  const RequestContext& ctx) {
  store::ReplayRun next = run;
  next.updated_at = ctx.now;
  const bool live = run_live(run.status);
  std::string audit_action;
  switch (action) {
    case RunAction::pause:
      if (!live) return Error(Errc::invalid_state, "only scheduled or running runs can be paused");
      next.status = RunStatus::paused;
      audit_action = "batch_replay_pause";
      break;
    case RunAction::resume:
      if (run.status != RunStatus::paused) return Error(Errc::invalid_state, "only paused runs can be resumed");
      next.status = run.start_at > ctx.now ? RunStatus::scheduled : RunStatus::running;
      // Pacing starts afresh: no burst to catch up on the paused time.
      next.paced_from = std::max(run.start_at, ctx.now);
      next.paced_count = 0;
      audit_action = "batch_replay_resume";
      break;
    case RunAction::cancel:
      if (!live && run.status != RunStatus::paused) {
        return Error(Errc::invalid_state, "only scheduled, running or paused runs can be cancelled");
      }
      next.status = RunStatus::cancelled;
      audit_action = "batch_replay_cancel";
      break;
  }
  return std::pair{next, run_audit(run, next, audit_action, ctx)};
}

DeadLetterDesk::DeadLetterDesk(store::Store& store, QueueService& service, const Config& config,
                               TaskHost* tasks)
    : store_(store), service_(service), config_(config), tasks_(tasks) {}

awaitable<std::vector<store::DeadRef>> DeadLetterDesk::list(const RequestContext&,
                                                            store::DeadListParams params) {
  co_return co_await store_.messages_dead_refs(std::move(params));
}

awaitable<std::optional<Message>> DeadLetterDesk::find_dead(const RequestContext&,
                                                            std::string queue, MessageId id) {
  auto found = co_await store_.message_find(std::move(queue), id);
  if (!found || found->status != Status::dead) co_return std::nullopt;
  co_return std::move(*found);
}

awaitable<BatchPreviewView> DeadLetterDesk::preview(const RequestContext& ctx, std::string kind,
                                                    store::DeadFilter filter) {
  store::DeadMatchParams params;
  params.filter = filter;
  params.sample = 5;
  auto match = co_await store_.dead_match(std::move(params));

  BatchPreviewView view;
  view.matched = static_cast<long long>(match.ids.size());
  view.by_job_type = std::move(match.by_job_type);
  view.sample = std::move(match.sample);
  view.uncertain_count = match.uncertain_count;
  view.uncertain_ids = std::move(match.uncertain_ids);
  view.confirm_token = new_lease_token();  // 128 bits from the kernel's CSPRNG
  view.expires_at = ctx.now + seconds_to_ms(config_.batch_replay.preview_ttl_seconds);

  store::BatchPreview stored;
  stored.token_sha256 = sha256_hex(view.confirm_token);
  stored.kind = kind;
  stored.filter = canonical_filter(filter);
  stored.matched = view.matched;
  stored.ids_sha256 = ids_digest(match.ids);
  for (const auto& [job_type, count] : view.by_job_type) {
    if (job_type) stored.job_types.push_back(*job_type);
  }
  if (kind == "replay") {
    view.needs_acknowledgement = non_idempotent(config_, stored.job_types);
    view.skipped_max_replays = at_replay_limit(config_, match.replays);
  }
  stored.created_at = ctx.now;
  stored.expires_at = view.expires_at;
  stored.keep = config_.batch_replay.max_previews;
  co_await store_.batch_preview_save(std::move(stored));
  co_return view;
}

namespace {

// A replay run as a confirmation or a move task asks for it, and its `batch_replay` audit entry.
struct RunAsked {
  std::string filter;  // canonical
  std::optional<std::string> queue;
  std::optional<std::string> reason;
  TimeMs delay_ms = 0;
  std::optional<double> rate_per_second;  // default: batch_replay.default_rate_per_second
  bool keep_order = false;
  bool acknowledge_side_effects = false;
  long long matched = 0;
};

store::ConfirmPlan run_plan(const Config& config, const RequestContext& ctx, const RunAsked& in,
                            const std::vector<std::string>& job_types) {
  double rate = in.rate_per_second.value_or(config.batch_replay.default_rate_per_second);
  if (double cap = rate_cap(config, job_types); cap > 0) rate = std::min(rate, cap);

  store::ReplayRun run;
  run.status = RunStatus::scheduled;
  run.filter = in.filter;
  run.actor = ctx.actor;
  run.reason = in.reason;
  run.created_at = ctx.now;
  run.start_at = ctx.now + in.delay_ms;
  run.delay_seconds = static_cast<double>(in.delay_ms) / 1000.0;
  run.rate_per_second = rate;
  run.keep_order = in.keep_order;
  run.paced_from = run.start_at;
  run.updated_at = ctx.now;

  AuditEntry audit;
  audit.at = ctx.now;
  audit.actor = ctx.actor;
  audit.action = "batch_replay";
  audit.queue = in.queue;
  audit.filter = in.filter;
  audit.reason = in.reason;
  audit.details = json::serialize(json::object{
      {"matched", in.matched},
      {"rate_per_second", json_number(rate)},
      {"delay_seconds", json_number(run.delay_seconds)},
      {"keep_order", in.keep_order},
      {"acknowledge_side_effects", in.acknowledge_side_effects}});
  return store::ConfirmPlan{std::move(run), std::move(audit)};
}

}  // namespace

awaitable<Result<store::ReplayRun>> DeadLetterDesk::confirm_replay(const RequestContext& ctx,
                                                                   ReplayConfirmation in) {
  const std::string filter = canonical_filter(in.filter);
  store::ConfirmParams params;
  params.token_sha256 = sha256_hex(in.confirm_token);
  params.kind = "replay";
  params.filter = in.filter;
  params.dead_at_order = in.keep_order;
  params.decide = [&](const store::ConfirmFacts& facts) -> Result<store::ConfirmPlan> {
    if (auto problem = check_preview(facts, filter, ctx.now)) return *problem;
    const auto& job_types = facts.preview->job_types;
    if (!non_idempotent(config_, job_types).empty() && !in.acknowledge_side_effects) {
      return Error::validation({{"acknowledge_side_effects",
                                 "the matched job types include ones configured idempotent: "
                                 "false; replaying them may repeat side effects: send "
                                 "acknowledge_side_effects: true",
                                 "required"}});
    }
    return run_plan(config_, ctx,
                    {filter, in.filter.queue, in.reason, in.delay_ms, in.rate_per_second,
                     in.keep_order, in.acknowledge_side_effects,
                     static_cast<long long>(facts.ids_now.size())},
                    job_types);
  };
  auto confirmed = co_await store_.batch_confirm(std::move(params));
  if (!confirmed) co_return confirmed.error();
  if (tasks_) tasks_->run_now(kReplayRunnerTask);
  co_return std::move(*confirmed->run);
}

awaitable<Result<store::ReplayRun>> DeadLetterDesk::start_move_task(const RequestContext& ctx,
                                                                    MoveTaskRequest in) {
  store::RunStartParams params;
  params.filter.dead_letter_queue = in.dead_letter_queue;
  params.canonical_filter = canonical_filter(params.filter);
  params.dead_at_order = true;
  params.handle = in.handle;
  const std::string filter = params.canonical_filter;
  params.decide = [&](const store::RunStartFacts& facts) -> Result<store::ConfirmPlan> {
    if (facts.active) return Error(Errc::invalid_state, "There is already a task running");
    if (auto risky = non_idempotent(config_, facts.job_types); !risky.empty()) {
      std::string names;
      for (const auto& t : risky) names += (names.empty() ? "" : ", ") + t;
      return Error(Errc::invalid_state,
                   "the dead letters include job types configured idempotent: false (" + names +
                       "); a move task cannot acknowledge their side effects: replay them from "
                       "the desk with acknowledge_side_effects");
    }
    if (in.destination_queue &&
        (facts.queues.size() != 1 || facts.queues.front() != *in.destination_queue)) {
      return Error(Errc::invalid_state,
                   "DestinationArn must be the queue all of the task's messages came from: dlq "
                   "replays each message into its own queue");
    }
    // At once and in order; SQS cannot acknowledge side effects (refused above).
    return run_plan(config_, ctx,
                    {filter, std::nullopt, in.reason, 0, in.rate_per_second, true, false,
                     static_cast<long long>(facts.ids_now.size())},
                    facts.job_types);
  };
  auto started = co_await store_.run_start(std::move(params));
  if (!started) co_return started.error();
  if (tasks_) tasks_->run_now(kReplayRunnerTask);
  co_return std::move(*started->run);
}

awaitable<std::vector<store::ReplayRun>> DeadLetterDesk::move_tasks(const RequestContext&,
                                                                    std::string dead_letter_queue,
                                                                    int limit) {
  store::RunListParams params;
  params.limit = limit;
  store::DeadFilter f;
  f.dead_letter_queue = std::move(dead_letter_queue);
  params.filter = canonical_filter(f);
  co_return co_await store_.replay_runs_list(std::move(params));
}

awaitable<Result<DismissOutcome>> DeadLetterDesk::confirm_dismiss(const RequestContext& ctx,
                                                                  DismissConfirmation in) {
  const std::string filter = canonical_filter(in.filter);
  store::ConfirmParams params;
  params.token_sha256 = sha256_hex(in.confirm_token);
  params.kind = "dismiss";
  params.filter = in.filter;
  params.decide = [&](const store::ConfirmFacts& facts) -> Result<store::ConfirmPlan> {
    if (auto problem = check_preview(facts, filter, ctx.now)) return *problem;
    return store::ConfirmPlan{};  // each batch below writes its own audit entry
  };
  auto confirmed = co_await store_.batch_confirm(std::move(params));
  if (!confirmed) co_return confirmed.error();

  // One transaction per batch of at most 1,000: each message's history and the batch's audit
  // entry commit with it.
  DismissOutcome out;
  const auto& ids = confirmed->ids;
  for (std::size_t from = 0; from < ids.size(); from += kDismissBatch) {
    store::DismissBatchParams batch;
    batch.ids.assign(ids.begin() + static_cast<std::ptrdiff_t>(from),
                     ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), from + kDismissBatch)));
    batch.decide = [reason = in.reason, actor = ctx.actor, now = ctx.now](
                       const Message& m, const store::Related&) {
      return dismiss(m, reason, actor, now);
    };
    batch.audit = [&ctx, &filter, &in](const std::vector<MessageId>& dismissed, long long skipped) {
      AuditEntry e;
      e.at = ctx.now;
      e.actor = ctx.actor;
      e.action = "dismiss";
      e.queue = in.filter.queue;
      e.message_ids = dismissed;
      e.filter = filter;
      e.reason = in.reason;
      e.details = json::serialize(json::object{
          {"status", "dismissed"},
          {"dismissed", static_cast<long long>(dismissed.size())},
          {"skipped", skipped}});
      return e;
    };
    auto done = co_await store_.messages_dismiss_batch(std::move(batch));
    out.dismissed += done.dismissed;
    out.skipped += done.skipped;
    for (const auto& m : done.messages) service_.publish(EventKind::dismissed, m, ctx.now, ctx.actor);
  }
  co_return out;
}

awaitable<Result<store::ReplayRun>> DeadLetterDesk::run(const RequestContext&, long long id) {
  auto found = co_await store_.replay_run_find(id);
  if (!found) co_return Error(Errc::replay_not_found, "replay run not found");
  co_return std::move(*found);
}

awaitable<std::vector<store::ReplayRun>> DeadLetterDesk::runs(const RequestContext&, int limit,
                                                              std::optional<long long> before_id,
                                                              std::optional<long long> message_id) {
  store::RunListParams params;
  params.limit = limit;
  params.before_id = before_id;
  params.message_id = message_id;
  co_return co_await store_.replay_runs_list(std::move(params));
}

awaitable<std::vector<long long>> DeadLetterDesk::dead_hourly(const RequestContext&,
                                                              std::optional<std::string> queue,
                                                              TimeMs from_hour, int hours) {
  co_return co_await store_.dead_hourly(std::move(queue), from_hour, hours);
}

namespace {

void hide_ended_mute(store::Incident& i, TimeMs now) {
  if (i.muted_until && *i.muted_until > now) return;
  i.muted_until.reset();
  i.mute_reason.reset();
}

}  // namespace

awaitable<std::vector<store::Incident>> DeadLetterDesk::incidents(const RequestContext& ctx,
                                                                  store::IncidentQuery query) {
  auto found = co_await store_.incidents_list(std::move(query));
  for (auto& i : found) hide_ended_mute(i, ctx.now);
  co_return found;
}

awaitable<std::optional<store::Incident>> DeadLetterDesk::incident(const RequestContext& ctx,
                                                                   std::string fingerprint,
                                                                   TimeMs from_hour, int hours) {
  auto found = co_await store_.incident_find(std::move(fingerprint), from_hour, hours);
  if (found) hide_ended_mute(*found, ctx.now);
  co_return found;
}

awaitable<std::optional<store::IncidentMuted>> DeadLetterDesk::mute_incident(
    const RequestContext& ctx, std::string fingerprint, IncidentMuteRequest in) {
  store::IncidentMuteParams params;
  params.fingerprint = fingerprint;
  if (in.until > ctx.now) {
    params.until = in.until;
    params.reason = in.reason;
  }
  params.now = ctx.now;
  params.audit = [&ctx, fingerprint, until = params.until,
                  reason = in.reason](std::optional<TimeMs> previous_until) {
    return incident_mute_audit(fingerprint, until, previous_until, reason, ctx.actor, ctx.now);
  };
  co_return co_await store_.incident_mute(std::move(params));
}

awaitable<Result<store::ReplayRun>> DeadLetterDesk::change_run(const RequestContext& ctx,
                                                               long long id, RunAction action) {
  store::RunChangeParams params;
  params.run_id = id;
  params.decide = [&](const store::ReplayRun& run) { return decide_run_change(run, action, ctx); };
  auto changed = co_await store_.replay_run_change(std::move(params));
  if (changed && action == RunAction::resume && tasks_) tasks_->run_now(kReplayRunnerTask);
  co_return changed;
}

}  // namespace dlq::core

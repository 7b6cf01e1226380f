// The trial-run routes: each decodes (lib/core), calls the TrialDesk and encodes the trial.
#include "http/api_trials.hpp"

#include <boost/json.hpp>

#include "core/effect_requests.hpp"
#include "http/api_support.hpp"
#include "http/json_codec.hpp"

namespace dlq::http {
namespace json = boost::json;
using namespace support;

namespace {

// The trial id of a route's third segment: digits only, else the trial is not found.
std::optional<long long> trial_id(std::string_view raw) {
  auto decoded = decode_segment(raw);
  if (!decoded) return std::nullopt;
  return core::parse_message_id(*decoded);
}

Response trial_not_found(const Config& c, const Request& r) {
  return problem_from_error(context(c, r),
                            Error(Errc::trial_not_found, "no such trial run of this message"));
}

}  // namespace

json::object trial_json(const Trial& t, const core::Redactor& redactor) {
  json::object o;
  o["trial_id"] = t.id;
  o["queue"] = t.queue;
  o["message_id"] = t.message_id;
  o["status"] = to_string(t.status);
  o["actor"] = optional_string(t.actor);
  o["reason"] = optional_string(t.reason);
  o["payload_edited"] = t.payload.has_value();
  o["created_at"] = format_rfc3339(t.created_at);
  o["claimed_at"] = time_json(t.claimed_at);
  o["finished_at"] = time_json(t.finished_at);
  o["worker"] = optional_string(t.worker);
  o["worker_version"] = optional_string(t.worker_version);
  o["error"] = masked_text(t.error, redactor);
  o["error_class"] = optional_string(t.error_class);
  o["stack"] = masked_text(t.stack, redactor);
  o["cause"] = masked_text(t.cause, redactor);
  o["would_effects"] = would_effects_array(t.would_effects);
  return o;
}

TrialHandlers::TrialHandlers(core::TrialDesk& trials, const Clock& clock,
                             const core::Redactor& redactor, const Config& config)
    : trials_(trials), clock_(clock), redactor_(redactor), config_(config) {}

TrialHandlers::R TrialHandlers::start_trial(const Request& req, const RouteMatch& m) {
  core::TrialStartInput in;
  MessageCall call;
  auto decode = [&in, this](const json::object& b) {
    return core::decode_trial_start(b, config_, in);
  };
  if (auto early = prepare_message_call(config_, clock_, req, m, call, decode)) co_return *early;
  auto started = co_await trials_.start(call.ctx, call.queue, call.id, std::move(in));
  if (!started) co_return problem_from_error(context(config_, req), started.error());
  co_return json_response(started->created ? 201 : 200, trial_json(started->trial, redactor_));
}

TrialHandlers::R TrialHandlers::trial(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  auto tid = trial_id(m.params.at(2));
  if (!message_target(m, queue, id) || !tid) co_return trial_not_found(config_, req);
  auto t = co_await trials_.find(request_context(config_, clock_, req), std::move(queue), id, *tid);
  if (!t) co_return problem_from_error(context(config_, req), t.error());
  co_return json_response(200, trial_json(*t, redactor_));
}

TrialHandlers::R TrialHandlers::answer_trial(const Request& req, const RouteMatch& m,
                                             core::TrialAnswer::Kind kind) {
  auto tid = trial_id(m.params.at(2));
  core::TrialAnswer a;
  a.kind = kind;
  std::optional<TimeMs> duration_ms;
  MessageCall call;
  auto decode = [&](const json::object& b) {
    if (kind != core::TrialAnswer::Kind::extend) return core::decode_trial_answer(b, config_, a);
    core::ExtendRequest in;  // a trial's checkpoints stay with the worker: only the lease moves
    FieldErrors errors = core::decode_extend(b, in);
    a.lease_id = std::move(in.lease_id);
    duration_ms = in.duration_ms;
    return errors;
  };
  if (auto early = prepare_message_call(config_, clock_, req, m, call, decode)) co_return *early;
  if (!tid) co_return trial_not_found(config_, req);
  if (kind == core::TrialAnswer::Kind::extend) {
    a.lease_until = call.ctx.now + duration_ms.value_or(seconds_to_ms(
                                       config_.policy_for(call.queue).visibility_timeout));
  }
  auto t = co_await trials_.answer(call.ctx, call.queue, call.id, *tid, std::move(a));
  if (!t) co_return problem_from_error(context(config_, req), t.error());
  co_return json_response(200, trial_json(*t, redactor_));
}

TrialHandlers::R TrialHandlers::succeed_trial(const Request& req, const RouteMatch& m) {
  return answer_trial(req, m, core::TrialAnswer::Kind::succeed);
}

TrialHandlers::R TrialHandlers::fail_trial(const Request& req, const RouteMatch& m) {
  return answer_trial(req, m, core::TrialAnswer::Kind::fail);
}

TrialHandlers::R TrialHandlers::extend_trial(const Request& req, const RouteMatch& m) {
  return answer_trial(req, m, core::TrialAnswer::Kind::extend);
}

TrialHandlers::R TrialHandlers::start_trials(const Request& req, const RouteMatch&) {
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  std::vector<MessageId> ids;
  std::optional<std::string> reason;
  FieldErrors errors = core::decode_trial_batch(body, ids, reason);
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto started = co_await trials_.start_many(ctx, std::move(ids), std::move(reason));
  if (!started) co_return problem_from_error(context(config_, req), started.error());
  json::array trials;
  for (const auto& s : *started) trials.push_back(trial_json(s.trial, redactor_));
  json::object out;
  std::size_t count = trials.size();
  out["trials"] = std::move(trials);
  out["count"] = count;
  co_return json_response(201, out);
}

}  // namespace dlq::http

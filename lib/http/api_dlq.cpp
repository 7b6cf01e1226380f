// The dead-letter desk's routes: each decodes (core/desk_requests), asks the desk, encodes.
#include "http/api_dlq.hpp"

#include <boost/json.hpp>

#include "core/desk_requests.hpp"
#include "http/api_support.hpp"
#include "http/json_codec.hpp"
#include "http/message_stream.hpp"
#include "model/fingerprint.hpp"

namespace dlq::http {
namespace json = boost::json;
using namespace support;

namespace {

json::value text_or_null(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  return json::value(*s);
}

json::object run_json(const store::ReplayRun& r) {
  json::object o;
  o["replay_id"] = r.id;
  o["status"] = to_string(r.status);
  o["matched"] = r.matched;
  o["replayed"] = r.replayed;
  o["skipped"] = r.skipped;
  json::object by_reason;
  for (const auto& [reason, n] : r.skipped_by_reason) by_reason[reason] = n;
  o["skipped_by_reason"] = std::move(by_reason);
  o["succeeded"] = r.succeeded;
  o["dead_again"] = r.dead_again;
  o["pending"] = r.pending;
  o["created_at"] = format_rfc3339(r.created_at);
  o["start_at"] = format_rfc3339(r.start_at);
  o["actor"] = text_or_null(r.actor);
  o["reason"] = text_or_null(r.reason);
  std::error_code ec;
  json::value filter = json::parse(r.filter, ec);
  o["filter"] = ec ? json::value(nullptr) : filter;
  o["rate_per_second"] = core::json_number(r.rate_per_second);
  o["delay_seconds"] = core::json_number(r.delay_seconds);
  o["keep_order"] = r.keep_order;
  o["updated_at"] = format_rfc3339(r.updated_at);
  return o;
}

// "123" -> 123; anything but a positive id of at most 18 digits -> nullopt.
std::optional<long long> run_id(std::string_view raw) {
  auto decoded = decode_segment(raw);
  if (!decoded) return std::nullopt;
  return core::parse_message_id(*decoded);
}

Response run_not_found(const Config& c, const Request& r) {
  return problem(context(c, r), 404, "replay-not-found", "Replay run not found",
                 "no replay run with this id", "replay run not found");
}

Response incident_not_found(const Config& c, const Request& r,
                            const char* detail = "no incident with this fingerprint has a dead message") {
  return problem(context(c, r), 404, "incident-not-found", "Incident not found", detail,
                 "incident not found");
}

constexpr const char* kNeverDied = "no message with this fingerprint ever died";

json::value time_or_null(const std::optional<TimeMs>& t) {
  if (!t) return nullptr;
  return json::value(format_rfc3339(*t));
}

// An entry of GET /dlq/incidents, its members in the documented order.
json::object incident_json(const store::Incident& i) {
  json::object o;
  o["fingerprint"] = i.fingerprint;
  o["title"] = i.title;
  o["error_class"] = i.error_class ? json::value(to_string(*i.error_class)) : json::value(nullptr);
  json::array job_types;
  if (i.job_type) job_types.emplace_back(*i.job_type);
  o["job_types"] = std::move(job_types);
  json::object queues;
  for (const auto& [queue, n] : i.queues) queues[queue] = n;
  o["queues"] = std::move(queues);
  o["dead"] = i.dead;
  o["first_dead_at"] = time_or_null(i.first_dead_at);
  o["last_dead_at"] = time_or_null(i.last_dead_at);
  json::array per_hour;
  for (auto n : i.per_hour) per_hour.emplace_back(n);
  o["per_hour"] = std::move(per_hour);
  json::array samples;
  for (auto id : i.sample_ids) samples.emplace_back(id);
  o["sample_ids"] = std::move(samples);
  o["dismissed"] = i.dismissed;
  o["replayed"] = i.replayed;
  o["muted_until"] = time_or_null(i.muted_until);
  o["mute_reason"] = i.mute_reason ? json::value(*i.mute_reason) : json::value(nullptr);
  return o;
}

// A /dlq page fixed by its ids: a message that left the dead set since is left out.
class DeadPage final : public LaterMessages {
 public:
  DeadPage(core::DeadLetterDesk& desk, core::RequestContext ctx, std::vector<store::DeadRef> refs)
      : desk_(desk), ctx_(context_for_later(std::move(ctx))), refs_(std::move(refs)) {}

  std::size_t size() const override { return refs_.size(); }
  boost::asio::awaitable<std::optional<Message>> read(std::size_t position) override {
    const store::DeadRef& ref = refs_.at(position);
    co_return co_await desk_.find_dead(ctx_, ref.queue, ref.id);
  }

 private:
  core::DeadLetterDesk& desk_;
  core::RequestContext ctx_;
  std::vector<store::DeadRef> refs_;
};

}  // namespace

// The sample is a list of values like every other member: each message read back from the one
// message writer (json_codec), so the answer is one object serialized once.
json::object preview_json(const core::BatchPreviewView& p, const core::Redactor& redactor) {
  json::object by_type;
  for (const auto& [job_type, count] : p.by_job_type) by_type[job_type.value_or("(none)")] = count;
  json::array needs;
  for (const auto& t : p.needs_acknowledgement) needs.emplace_back(t);
  json::array sample;
  for (const auto& m : p.sample) {
    sample.push_back(message_value(m, {Audience::people, false}, redactor));
  }
  json::object o;
  o["matched"] = p.matched;
  o["by_job_type"] = std::move(by_type);
  o["needs_acknowledgement"] = std::move(needs);
  if (p.skipped_max_replays) o["skipped_max_replays"] = *p.skipped_max_replays;
  json::array uncertain_ids;
  for (MessageId id : p.uncertain_ids) uncertain_ids.emplace_back(id);
  o["uncertain_effects"] = json::object{{"count", p.uncertain_count},
                                        {"ids", std::move(uncertain_ids)}};
  o["confirm_token"] = p.confirm_token;
  o["expires_at"] = format_rfc3339(p.expires_at);
  o["sample"] = std::move(sample);
  return o;
}

DlqHandlers::DlqHandlers(core::DeadLetterDesk& desk, const Clock& clock,
                         const core::Redactor& redactor, const Config& config)
    : desk_(desk), clock_(clock), redactor_(redactor), config_(config) {}

DlqHandlers::R DlqHandlers::dead_letters(const Request& req, const RouteMatch&) {
  store::DeadListParams params;
  FieldErrors errors = core::decode_dead_list(req.query, params);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  const int limit = params.limit;
  params.limit = limit + 1;  // one more tells whether another page follows
  auto ctx = request_context(config_, clock_, req);
  auto refs = co_await desk_.list(ctx, std::move(params));
  json::value next = trim_page(refs, limit, [](const store::DeadRef& r) { return r.id; });
  // The page is fixed by its ids and written one message at a time, each read when its turn
  // comes (architecture.md, "Bounds"): never the page's messages or their text at once.
  auto page = std::make_unique<DeadPage>(desk_, std::move(ctx), std::move(refs));
  auto answer = std::make_shared<MessageListStream>(
      MessageListStream::Shape{R"({"messages":[)", true, ",\"next_after_id\":" + json::serialize(next)},
      std::vector<Message>{}, MessageView{Audience::people, false}, redactor_, std::move(page));
  co_return co_await streamed_response(200, std::move(answer));
}

DlqHandlers::R DlqHandlers::dlq_replay(const Request& req, const RouteMatch&) {
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::BatchReplayRequest in;
  FieldErrors errors = core::decode_batch_replay(body, config_, in);
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  if (in.dry_run) {
    auto preview = co_await desk_.preview(ctx, "replay", std::move(in.confirmation.filter));
    co_return json_response(200, preview_json(preview, redactor_));
  }
  auto run = co_await desk_.confirm_replay(ctx, std::move(in.confirmation));
  if (!run) co_return problem_from_error(context(config_, req), run.error());
  json::object o{{"replay_id", run->id}, {"matched", run->matched}, {"status", to_string(run->status)}};
  Response r = json_response(202, o);
  r.headers.emplace_back("Location", "/dlq/replays/" + std::to_string(run->id));
  co_return r;
}

DlqHandlers::R DlqHandlers::dlq_dismiss(const Request& req, const RouteMatch&) {
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::BatchDismissRequest in;
  FieldErrors errors = core::decode_batch_dismiss(body, in);
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  if (in.dry_run) {
    auto preview = co_await desk_.preview(ctx, "dismiss", std::move(in.confirmation.filter));
    co_return json_response(200, preview_json(preview, redactor_));
  }
  auto done = co_await desk_.confirm_dismiss(ctx, std::move(in.confirmation));
  if (!done) co_return problem_from_error(context(config_, req), done.error());
  co_return json_response(200, json::object{{"dismissed", done->dismissed},
                                            {"skipped", done->skipped}});
}

DlqHandlers::R DlqHandlers::replay_runs(const Request& req, const RouteMatch&) {
  core::RunsQuery query;
  FieldErrors errors = core::decode_runs(req.query, query);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  // One more tells whether another page follows.
  auto runs = co_await desk_.runs(request_context(config_, clock_, req), query.limit + 1,
                                  query.after_id, query.message_id);
  json::value next = trim_page(runs, query.limit, [](const store::ReplayRun& r) { return r.id; });
  json::array items;
  for (const auto& r : runs) items.push_back(run_json(r));
  json::object out;
  std::size_t count = items.size();
  out["replays"] = std::move(items);
  out["count"] = count;
  out["next_after_id"] = std::move(next);
  co_return json_response(200, out);
}

DlqHandlers::R DlqHandlers::replay_run(const Request& req, const RouteMatch& m) {
  auto id = run_id(m.params.at(0));
  if (!id) co_return run_not_found(config_, req);
  auto run = co_await desk_.run(request_context(config_, clock_, req), *id);
  if (!run) co_return run_not_found(config_, req);
  co_return json_response(200, run_json(*run));
}

DlqHandlers::R DlqHandlers::change_run(const Request& req, const RouteMatch& m,
                                       core::RunAction action) {
  auto id = run_id(m.params.at(0));
  if (!id) co_return run_not_found(config_, req);
  json::object body;  // nothing is read from it, but it must be JSON like every body
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  auto run = co_await desk_.change_run(request_context(config_, clock_, req), *id, action);
  if (!run) co_return problem_from_error(context(config_, req), run.error());
  co_return json_response(200, run_json(*run));
}

DlqHandlers::R DlqHandlers::pause_run(const Request& req, const RouteMatch& m) {
  return change_run(req, m, core::RunAction::pause);
}

DlqHandlers::R DlqHandlers::resume_run(const Request& req, const RouteMatch& m) {
  return change_run(req, m, core::RunAction::resume);
}

DlqHandlers::R DlqHandlers::cancel_run(const Request& req, const RouteMatch& m) {
  return change_run(req, m, core::RunAction::cancel);
}

DlqHandlers::R DlqHandlers::incidents(const Request& req, const RouteMatch&) {
  store::IncidentQuery query;
  FieldErrors errors = core::decode_incidents(req.query, query);
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  const int limit = query.limit;
  const store::IncidentSort sort = query.sort;
  query.limit = limit + 1;  // one more tells whether another page follows
  query.from_hour = core::incident_hours_from(ctx.now);
  query.hours = core::kIncidentHours;
  auto found = co_await desk_.incidents(ctx, std::move(query));
  json::value next = trim_page(found, limit, [sort](const store::Incident& i) {
    return json::value(core::incident_cursor(sort, i));
  });
  json::array items;
  for (const auto& i : found) items.push_back(incident_json(i));
  json::object out;
  std::size_t count = items.size();
  out["incidents"] = std::move(items);
  out["count"] = count;
  out["next_cursor"] = std::move(next);
  co_return json_response(200, out);
}

DlqHandlers::R DlqHandlers::incident(const Request& req, const RouteMatch& m) {
  auto fingerprint = decode_segment(m.params.at(0));
  if (!fingerprint || !valid_fingerprint(*fingerprint)) co_return incident_not_found(config_, req);
  FieldErrors errors;  // X-Now only
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto found = co_await desk_.incident(ctx, *fingerprint, core::incident_hours_from(ctx.now),
                                       core::kIncidentHours);
  if (!found) co_return incident_not_found(config_, req);
  co_return json_response(200, incident_json(*found));
}

// POST /dlq/incidents/{fingerprint}/mute: a malformed fingerprint is unknown before the body is
// read; a refused body changes nothing and writes no audit entry.
DlqHandlers::R DlqHandlers::mute_incident(const Request& req, const RouteMatch& m) {
  auto fingerprint = decode_segment(m.params.at(0));
  if (!fingerprint || !valid_fingerprint(*fingerprint)) {
    co_return incident_not_found(config_, req, kNeverDied);
  }
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::IncidentMuteRequest in;
  FieldErrors errors = core::decode_incident_mute(body, in);
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto muted = co_await desk_.mute_incident(ctx, *fingerprint, std::move(in));
  if (!muted) co_return incident_not_found(config_, req, kNeverDied);
  co_return json_response(
      200, json::object{{"fingerprint", muted->fingerprint},
                        {"muted_until", time_or_null(muted->muted_until)},
                        {"mute_reason", muted->mute_reason ? json::value(*muted->mute_reason)
                                                           : json::value(nullptr)}});
}

// GET /dlq/hourly: how many messages went dead in each of the last `hours` hours (the current,
// partial hour last), from dead_letter_hours: replayed and dismissed ones still count, and the
// figures survive restarts and agree across nodes (metrics are per node).
DlqHandlers::R DlqHandlers::dead_hourly(const Request& req, const RouteMatch&) {
  core::HourlyQuery query;
  FieldErrors errors = core::decode_dead_hourly(req.query, query);
  auto ctx = request_context(config_, clock_, req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  const int hours = query.hours;
  const TimeMs this_hour = ctx.now / kMillisPerHour * kMillisPerHour;
  const TimeMs from = this_hour - (hours - 1) * kMillisPerHour;
  auto counts = co_await desk_.dead_hourly(ctx, query.queue, from, hours);
  json::array buckets;
  for (int i = 0; i < hours; ++i) {
    json::object b;
    b["start"] = format_rfc3339(from + i * kMillisPerHour);
    b["count"] = counts.at(static_cast<std::size_t>(i));
    buckets.push_back(std::move(b));
  }
  json::object body;
  body["bucket_seconds"] = kMillisPerHour / kMillisPerSecond;
  body["hours"] = hours;
  body["queue"] = query.queue ? json::value(*query.queue) : json::value(nullptr);
  body["from"] = format_rfc3339(from);
  body["to"] = format_rfc3339(this_hour + kMillisPerHour);
  body["buckets"] = std::move(buckets);
  co_return json_response(200, body);
}

}  // namespace dlq::http

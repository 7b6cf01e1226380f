// Helpers shared by the API handlers: parameters, bodies, X-Now, answers.
#include "http/api_support.hpp"

#include "model/json_text.hpp"

namespace dlq::http::support {
namespace json = boost::json;

ProblemContext context(const Config& c, const Request& r) { return {c.problem_base, r.path}; }

Response json_response(int status, const json::value& body) {
  Response r;
  r.status = status;
  r.body = json_text(body);  // fractions as plain decimals (0.5, not 5E-1)
  return r;
}

Response text_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response unknown_queue(const Config& c, const Request& r) {
  return problem(context(c, r), 404, "unknown-queue", "Unknown queue",
                 "queue names are 1 to 64 characters of A-Z, a-z, 0-9, _ and -",
                 "unknown queue name");
}

Response message_not_found(const Config& c, const Request& r) {
  return problem(context(c, r), 404, "message-not-found", "Message not found",
                 "no message with this id in this queue", "message not found");
}

std::optional<std::string> queue_param(std::string_view raw) {
  auto decoded = decode_segment(raw);
  if (!decoded || !core::valid_queue_name(*decoded)) return std::nullopt;
  return decoded;
}

// Routes that name a message: an invalid queue name or id is "message not found".
bool message_target(const RouteMatch& m, std::string& queue, MessageId& id) {
  auto q = queue_param(m.params.at(0));
  auto decoded = decode_segment(m.params.at(1));
  auto parsed = decoded ? core::parse_message_id(*decoded) : std::nullopt;
  if (!q || !parsed) return false;
  queue = std::move(*q);
  id = *parsed;
  return true;
}

// A missing or empty body is {}; anything but a JSON object is 400 invalid-json.
std::optional<Response> read_object(const Config& c, const Request& req, json::object& out) {
  if (req.body.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  std::error_code ec;
  json::value v = json::parse(req.body, ec);
  if (ec || !v.is_object()) {
    std::string detail = ec ? "the request body is not valid JSON: " + ec.message()
                            : "the request body must be a JSON object";
    return problem(context(c, req), 400, "invalid-json", "Invalid JSON", detail,
                   "request body must be a JSON object");
  }
  out = std::move(v.get_object());
  return std::nullopt;
}

core::RequestContext request_context(const Config& c, const Clock& clock, const Request& req,
                                     FieldErrors* errors) {
  core::RequestContext ctx;
  ctx.request_id = req.request_id;
  ctx.client = req.watch;
  if (!req.actor.empty()) ctx.actor = req.actor;
  ctx.now = clock.now();
  const std::string* header = errors ? req.header("x-now") : nullptr;
  if (!header) return ctx;
  if (!c.testing.allow_clock_override) {
    errors->push_back({"X-Now", "X-Now is only accepted when testing.allow_clock_override is on",
                       "disabled"});
  } else if (auto t = parse_timestamp(*header)) {
    ctx.now = *t;
    ctx.pinned_now = true;
  } else {
    errors->push_back({"X-Now", "X-Now must be an RFC 3339 timestamp", "invalid"});
  }
  return ctx;
}

// A relative delay or an absolute time becomes the first claimable time (none when not later).
std::optional<TimeMs> first_claimable(std::optional<TimeMs> delay_ms, std::optional<TimeMs> run_at,
                                      TimeMs now) {
  std::optional<TimeMs> at = run_at;
  if (delay_ms) at = now + *delay_ms;
  if (at && *at <= now) at.reset();
  return at;
}



}  // namespace dlq::http::support

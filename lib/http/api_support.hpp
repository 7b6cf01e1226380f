// What the API handlers share: reading a request (route parameters, body, X-Now) and shaping an
// answer. Private to lib/http; no Beast here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "config/config.hpp"
#include "core/redaction.hpp"
#include "http/json_codec.hpp"
#include "http/problem.hpp"
#include "http/request.hpp"
#include "http/router.hpp"
#include "model/time.hpp"

namespace dlq::http::support {

ProblemContext context(const Config& c, const Request& r);
Response json_response(int status, const boost::json::value& body);
// An answer whose JSON text is already written.
Response text_response(int status, std::string body);
Response unknown_queue(const Config& c, const Request& r);
Response message_not_found(const Config& c, const Request& r);

std::optional<std::string> queue_param(std::string_view raw);
// Routes that name a message: an invalid queue name or id is "message not found".
bool message_target(const RouteMatch& m, std::string& queue, MessageId& id);
// A missing or empty body is {}; anything but a JSON object is 400 invalid-json.
std::optional<Response> read_object(const Config& c, const Request& req, boost::json::object& out);
// The request's context for the core, built once per request. Routes that read the clock pass
// `errors`: their "now" is X-Now when testing allows it, and an X-Now problem is reported after
// every body field (http-api.md C). Other routes pass none and ignore X-Now.
core::RequestContext request_context(const Config& c, const Clock& clock, const Request& req,
                                     FieldErrors* errors = nullptr);
// A relative delay or an absolute time becomes the first claimable time (none when not later).
std::optional<TimeMs> first_claimable(std::optional<TimeMs> delay_ms, std::optional<TimeMs> run_at,
                                      TimeMs now);


// Keyset paging: the page was read with one item more than `limit`. Trims it and returns
// next_after_id — the last kept item's id — or null on the last page.
template <class T, class IdOf>
boost::json::value trim_page(std::vector<T>& items, int limit, IdOf id_of) {
  if (items.size() <= static_cast<std::size_t>(limit)) return nullptr;
  items.resize(static_cast<std::size_t>(limit));
  return id_of(items.back());
}

// Everything a route that changes one message does before it calls the service: the message's
// queue and id (404), the body (400), its fields and X-Now (422). `decode` reads the body into
// the handler's input and returns the problems it found.
struct MessageCall {
  std::string queue;
  MessageId id = 0;
  core::RequestContext ctx;
};
template <class Decode>
std::optional<Response> prepare_message_call(const Config& config, const Clock& clock,
                                             const Request& req, const RouteMatch& m,
                                             MessageCall& call, Decode&& decode) {
  if (!message_target(m, call.queue, call.id)) return message_not_found(config, req);
  boost::json::object body;
  if (auto bad = read_object(config, req, body)) return bad;
  FieldErrors errors = decode(body);
  call.ctx = request_context(config, clock, req, &errors);
  if (!errors.empty()) return validation_problem(context(config, req), errors);
  return std::nullopt;
}

}  // namespace dlq::http::support

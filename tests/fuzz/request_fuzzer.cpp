// libFuzzer target over dlqd's request path, without sockets: the bytes of one HTTP request are
// parsed as the server parses them (Beast's parser with dlqd's header and body limits), checked
// for framing, turned into a Request, routed, their query and body decoded and validated by every
// decoder, and the body masked by the redactor. Oracles besides the sanitizers: every
// problem+json answer and every JSON string dlqd writes must parse back as JSON.
//   scripts/fuzz.sh [SECONDS]   (builds with clang, ASan and UBSan; test.sh runs about a minute)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "config/config.hpp"
#include "core/desk_requests.hpp"
#include "core/redaction.hpp"
#include "core/requests.hpp"
#include "core/text_mask.hpp"
#include "http/api_support.hpp"
#include "http/framing.hpp"
#include "http/json_codec.hpp"
#include "http/origin_guard.hpp"
#include "http/router.hpp"
#include "http/wire.hpp"

namespace bhttp = boost::beast::http;
namespace json = boost::json;
using namespace dlq;

namespace {

// The patterns of dlqd's route table (lib/http/api.cpp): what is under test is the matching.
http::Router make_router() {
  http::Router router;
  auto none = [](const http::Request&, const http::RouteMatch&) -> boost::asio::awaitable<http::Response> {
    co_return http::Response{};
  };
  for (auto [method, pattern] : std::initializer_list<std::pair<const char*, const char*>>{
           {"POST", "/queues/{queue}/messages"}, {"GET", "/queues/{queue}/messages"},
           {"DELETE", "/queues/{queue}/messages"}, {"POST", "/queues/{queue}/messages/batch"},
           {"GET", "/queues/{queue}/messages/{id}"}, {"POST", "/queues/{queue}/claim"},
           {"POST", "/queues/{queue}/ack"}, {"POST", "/queues/{queue}/messages/{id}/succeed"},
           {"POST", "/queues/{queue}/messages/{id}/fail"}, {"POST", "/queues/{queue}/messages/{id}/replay"},
           {"GET", "/queues/{queue}/messages/{id}/attempts"}, {"GET", "/queues"},
           {"GET", "/queues/{queue}/stats"}, {"GET", "/dlq"}, {"POST", "/dlq/replay"},
           {"GET", "/dlq/replays/{id}"}, {"POST", "/dlq/replays/{id}/pause"}, {"GET", "/audit"},
           {"GET", "/metrics"}, {"GET", "/healthz"}}) {
    router.add(method, pattern, none);
  }
  return router;
}

void must_parse(std::string_view text) {
  std::error_code ec;
  json::parse(text, ec);
  if (ec) std::abort();  // dlqd wrote JSON that does not parse
}

void check_problem(const http::Response& r) { must_parse(r.body); }

void decode_body(const Config& config, const http::Request& req, const http::RouteMatch& match) {
  const std::string& instance = req.path;
  http::ProblemContext pc{config.problem_base, instance};
  json::object body;
  if (auto bad = http::support::read_object(config, req, body)) {
    check_problem(*bad);
    return;
  }
  FieldErrors all;
  auto keep = [&all](FieldErrors e) { all.insert(all.end(), e.begin(), e.end()); };
  core::EnqueueRequest enqueue;
  std::string queue = match.params.empty() ? "q" : std::string(match.params.front());
  keep(core::decode_enqueue(body, config, config.policy_for(queue), enqueue));
  std::vector<core::EnqueueRequest> batch;
  keep(core::decode_enqueue_batch(body, config, config.policy_for(queue), batch));
  core::ClaimRequest claim;
  keep(core::decode_claim(body, req.query, claim));
  core::AckRequest ack;
  keep(core::decode_ack_items(body, ack));
  std::optional<std::string> lease;
  keep(core::decode_succeed(body, lease));
  core::FailInput fail;
  keep(core::decode_fail(body, fail));
  core::ReplayRequest replay;
  keep(core::decode_replay(body, config, replay));
  core::ExtendRequest extend;
  keep(core::decode_extend(body, extend));
  core::ReleaseRequest release;
  keep(core::decode_release(body, release));
  std::optional<std::string> reason;
  keep(core::decode_dismiss(body, reason));
  core::BatchReplayRequest batch_replay;
  keep(core::decode_batch_replay(body, config, batch_replay));
  // A rate the decoder let through is in its range (Boost.JSON reads 0e400 as NaN, issue 37).
  if (double rate = *batch_replay.confirmation.rate_per_second; !(rate >= 0.1 && rate <= 1000)) {
    std::abort();
  }
  core::BatchDismissRequest batch_dismiss;
  keep(core::decode_batch_dismiss(body, batch_dismiss));
  if (!all.empty()) check_problem(http::validation_problem(pc, all));
}

void decode_query(const Config& config, const http::Request& req) {
  http::ProblemContext pc{config.problem_base, req.path};
  FieldErrors all;
  auto keep = [&all](FieldErrors e) { all.insert(all.end(), e.begin(), e.end()); };
  store::ListParams list;
  keep(core::decode_list(req.query, list));
  core::PurgeRequest purge;
  keep(core::decode_purge(req.query, purge));
  store::AuditQuery audit;
  keep(core::decode_audit(req.query, audit));
  store::DeadListParams dead;
  keep(core::decode_dead_list(req.query, dead));
  int limit = 0;
  std::optional<long long> after;
  keep(core::decode_page(req.query, limit, after));
  if (!all.empty()) check_problem(http::validation_problem(pc, all));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Config config;
  static const http::Router router = make_router();
  static const core::Redactor redactor({"password", "secret", "token"});
  // Host, Origin and Sec-Fetch-Site as any client may write them (http/origin_guard.hpp).
  static const http::OriginGuard guard([] {
    Config c;
    c.http.allowed_hosts = {"dlq.example", "[fd00::1]"};
    c.http.allowed_origins = {"https://ops.example:8443"};
    return c;
  }());

  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(16 * 1024);  // the session's limits
  parser.body_limit(static_cast<std::uint64_t>(config.limits.max_body_bytes));
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (!parser.is_header_done()) return 0;

  const auto& head = parser.get();
  std::vector<std::string_view> codings;
  auto [first, last] = head.equal_range(bhttp::field::transfer_encoding);
  for (auto it = first; it != last; ++it) codings.push_back(it->value());
  if (http::check_framing(head.version(), codings, head.count(bhttp::field::host),
                          head.count(bhttp::field::authorization))) {
    return 0;
  }
  if (ec && ec != bhttp::error::need_more) return 0;

  http::Request req = http::wire::to_request(parser.release());
  http::ProblemContext pc{config.problem_base, req.path};
  check_problem(http::problem(pc, 404, "not-found", "Not found", "no such route", "not found"));
  (void)guard.check(req, true);
  http::RouteMatch match = router.match(req.method, req.path);
  for (auto raw : match.params) {
    if (auto segment = http::decode_segment(raw)) {
      (void)core::valid_queue_name(*segment);
      (void)core::parse_message_id(*segment);
    }
  }
  decode_query(config, req);
  decode_body(config, req, match);

  // What people see of a payload and of free text.
  std::string shown = redactor.payload(req.body);
  (void)redactor.text(req.body);
  (void)redactor.merge_masks(req.body, shown);
  // A payload that came through the JSON parser is valid UTF-8; written back, it must parse.
  std::error_code parse_error;
  json::value body = json::parse(req.body, parse_error);
  if (!parse_error && body.is_object()) {
    if (const auto* payload = body.as_object().if_contains("payload"); payload && payload->is_string()) {
      std::string quoted;
      dlq::append_json_string(quoted, payload->as_string());
      must_parse(quoted);
    }
  }
  return 0;
}

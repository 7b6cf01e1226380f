// The route table and the message routes of the API.
#include "http/api.hpp"

#include <boost/json.hpp>

#include "http/api_support.hpp"
#include "http/message_stream.hpp"
#include "model/logging.hpp"

namespace dlq::http {
namespace json = boost::json;
using boost::asio::awaitable;
using namespace support;

namespace {
const std::string kNoRoute = "-";  // no route matched (404/405): one label, not the raw path
const std::string kGet = "GET";

// One item of an acknowledgement list (POST /ack `items`, a claim's `ack`): items that cannot be
// an ack are answered on their own (422); the rest go to the store together.
struct AckSlot {
  json::value id;
  int status = 200;
  std::string error;
  std::optional<std::size_t> pending;  // index into the acks sent to the store
};

std::vector<AckSlot> read_ack_items(const json::array& items, std::vector<core::AckItem>& acks) {
  std::vector<AckSlot> slots;
  slots.reserve(items.size());
  for (const auto& v : items) {
    AckSlot slot;
    const json::object* o = v.if_object();
    const json::value* id = o ? o->if_contains("id") : nullptr;
    const json::value* lease = o ? o->if_contains("lease_id") : nullptr;
    slot.id = id ? *id : json::value(nullptr);
    if (!o || !id || !id->is_int64() || id->get_int64() <= 0) {
      slot.status = 422;
      slot.error = "each item needs an integer id";
    } else if (lease && !lease->is_string()) {
      slot.status = 422;
      slot.error = "lease_id must be a string";
    } else {
      core::AckItem ack;
      ack.id = id->get_int64();
      if (lease) ack.lease_id = std::string(lease->get_string());
      slot.pending = acks.size();
      acks.push_back(std::move(ack));
    }
    slots.push_back(std::move(slot));
  }
  return slots;
}

// The /ack result items, in input order: {"id", "status", "error"}.
json::array ack_results(const ProblemContext& pc, std::vector<AckSlot>& slots,
                        const std::vector<Result<Message>>& results) {
  json::array out;
  for (auto& slot : slots) {
    if (slot.pending) {
      const auto& r = results.at(*slot.pending);
      if (!r) {
        Response p = problem_from_error(pc, r.error());
        slot.status = p.status;
        slot.error = r.error().message;
      }
    }
    json::object item;
    item["id"] = slot.id;
    item["status"] = slot.status;
    item["error"] = slot.status == 200 ? json::value(nullptr) : json::value(slot.error);
    out.push_back(std::move(item));
  }
  return out;
}
}  // namespace

// Every endpoint of dlqd, once, with the access it needs (http-api.md B4; docs/access.md). The
// server binds these rows; routes() lists them for `dlqd --print-routes` and the test that holds
// docs/openapi.json to them.
const std::vector<Api::Row>& Api::table() {
  using enum core::Access;
  static const std::vector<Row> rows = {
      {"POST", "/queues/{queue}/messages", producer, &Api::enqueue},
      {"GET", "/queues/{queue}/messages", reader, &Api::list},
      {"DELETE", "/queues/{queue}/messages", admin, &Api::purge},
      {"POST", "/queues/{queue}/messages/batch", producer, &Api::enqueue_batch},
      {"GET", "/queues/{queue}/messages/{id}", reader, &Api::show},
      {"POST", "/queues/{queue}/claim", worker, &Api::claim},
      {"POST", "/queues/{queue}/ack", worker, &Api::ack},
      {"POST", "/queues/{queue}/messages/{id}/succeed", worker, &Api::succeed},
      {"POST", "/queues/{queue}/messages/{id}/fail", worker, &Api::fail},
      {"POST", "/queues/{queue}/messages/{id}/replay", admin, &Api::replay},
      {"POST", "/queues/{queue}/messages/{id}/extend", worker, &Api::extend},
      {"POST", "/queues/{queue}/messages/{id}/release", worker, &Api::release},
      {"POST", "/queues/{queue}/messages/{id}/dismiss", admin, &Api::dismiss},
      {"GET", "/queues/{queue}/messages/{id}/attempts", reader, &Api::attempts},
      {"GET", "/queues", reader, &Api::queues},
      {"GET", "/queues/{queue}/stats", reader, &Api::queue_stats},
      {"GET", "/dlq", reader, &Api::dead_letters},
      {"POST", "/dlq/replay", admin, &Api::dlq_replay},
      {"POST", "/dlq/dismiss", admin, &Api::dlq_dismiss},
      {"GET", "/dlq/hourly", reader, &Api::dead_hourly},
      {"GET", "/dlq/replays", reader, &Api::replay_runs},
      {"GET", "/dlq/replays/{id}", reader, &Api::replay_run},
      {"POST", "/dlq/replays/{id}/pause", admin, &Api::pause_run},
      {"POST", "/dlq/replays/{id}/resume", admin, &Api::resume_run},
      {"POST", "/dlq/replays/{id}/cancel", admin, &Api::cancel_run},
      {"GET", "/audit", admin, &Api::audit},
      {"GET", "/metrics", reader_unless_public_metrics, &Api::metrics},
      {"GET", "/healthz", open, &Api::healthz},
      {"GET", "/readyz", open, &Api::readyz},
      {"GET", "/openapi.json", reader_unless_public_metrics, &Api::openapi},
      {"GET", "/ui", open, &Api::ui_redirect},
      {"GET", "/ui/", open, &Api::ui_index},
      {"GET", "/ui/{file}", open, &Api::ui_asset},
  };
  return rows;
}

std::vector<RouteInfo> Api::routes() {
  std::vector<RouteInfo> out;
  for (const auto& row : table()) {
    out.push_back({std::string(row.method), std::string(row.pattern), row.access});
  }
  return out;
}

Api::Api(core::QueueService& service, core::DeadLetterDesk& desk, store::Store& store,
         const core::TaskHost& tasks, const core::AccessControl& access, ops::Metrics& metrics,
         const Config& config, const Lifecycle& lifecycle)
    : service_(service),
      desk_(desk),
      store_(store),
      tasks_(tasks),
      access_(access),
      metrics_(metrics),
      config_(config),
      lifecycle_(lifecycle) {
  for (const auto& row : table()) {
    auto handler = row.handler;
    router_.add(std::string(row.method), std::string(row.pattern), row.access,
                [this, handler](const Request& req, const RouteMatch& m) {
                  return (this->*handler)(req, m);
                });
  }
}

// A service outcome as the answer: the message (as its audience may see it) or the problem.
Response Api::answer(const Request& req, const Result<Message>& result, Audience audience) const {
  if (!result) return problem_from_error(context(config_, req), result.error());
  return text_response(200, message_text(*result, {audience, false}, service_.redactor()));
}

awaitable<Response> Api::handle(Request& req) {
  auto start = std::chrono::steady_clock::now();
  RouteMatch match = router_.match(req.method, req.path);
  Response res = co_await dispatch(req, match);
  account(req, match, res, std::chrono::steady_clock::now() - start);
  co_return res;
}

// Every answer is counted by route template (never the raw path) and, with log.access, logged
// in one line: no payloads, no tokens.
void Api::account(const Request& req, const RouteMatch& match, const Response& res,
                  std::chrono::nanoseconds took) {
  const std::string& route = match.route ? match.route->pattern : kNoRoute;
  const std::string& method = req.method == "HEAD" ? kGet : req.method;
  metrics_.http_request(route, method, res.status, took);
  if (!config_.log.access || !log::enabled(log::Level::info)) return;
  std::string queue = "-";
  if (match.route && match.route->pattern.starts_with("/queues/{queue}") && !match.params.empty()) {
    queue = decode_segment(match.params.front()).value_or("-");
  }
  log::info("access", {{"request_id", req.request_id},
                       {"method", req.method},
                       {"route", route},
                       {"queue", queue},
                       {"status", std::to_string(res.status)},
                       {"duration_ms", std::to_string(std::chrono::duration<double, std::milli>(took).count())},
                       {"actor", req.actor.empty() ? std::string("-") : req.actor},
                       {"bytes", std::to_string(res.body.size())}});
}

awaitable<Response> Api::dispatch(Request& req, const RouteMatch& match) {
  ProblemContext pc = context(config_, req);
  if (!match.route) {
    if (!match.allow.empty()) {
      Response r = problem(pc, 405, "method-not-allowed", "Method not allowed",
                           req.method + " is not allowed here; allowed: " + match.allow,
                           "method not allowed");
      r.headers.emplace_back("Allow", match.allow);
      co_return r;
    }
    co_return problem(pc, 404, "not-found", "Not found", "no such route", "not found");
  }
  // Access comes after routing and before everything the handler checks (http-api.md 0).
  auto decision = access_.check(match.route->access, req.header("authorization"));
  if (decision.verdict == core::Verdict::unauthorized) {
    Response r = problem(pc, 401, "unauthorized", "Unauthorized",
                         "this route needs an access token: Authorization: Bearer <token>",
                         "missing or unknown access token");
    r.headers.emplace_back("WWW-Authenticate", R"(Bearer realm="dlq")");
    co_return r;
  }
  if (decision.verdict == core::Verdict::forbidden) {
    co_return problem(pc, 403, "forbidden", "Forbidden",
                      "this token's roles do not include " +
                          std::string(core::to_string(match.route->access)),
                      "this token may not do that");
  }
  req.actor = std::move(decision.actor);
  try {
    co_return co_await match.route->handler(req, match);
  } catch (const DatabaseUnavailable& e) {
    log::warn("database unavailable", {{"path", req.path}, {"error", e.what()}});
    co_return problem(pc, 503, "database-unavailable", "Database unavailable",
                      "the database cannot be reached; retry later", "database unavailable");
  } catch (const StorageFull& e) {
    log::error("database full", {{"path", req.path}, {"error", e.what()}});
    co_return problem(pc, 507, "storage-full", "Insufficient storage",
                      "the database is out of space; nothing of this request was written",
                      "storage full");
  } catch (const ShuttingDown&) {
    Response r = problem(pc, 503, "shutting-down", "Shutting down",
                         "the server is shutting down; retry on another node or later",
                         "server is shutting down");
    r.close = true;
    co_return r;
  } catch (const std::exception& e) {
    log::error("request failed", {{"path", req.path},
                                  {"request_id", req.request_id},
                                  {"error", e.what()}});
    co_return problem(pc, 500, "internal-error", "Internal server error",
                      "the server could not complete the request", "internal error");
  }
}

Api::R Api::enqueue(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::EnqueueRequest in;
  FieldErrors errors = core::decode_enqueue(body, config_, config_.policy_for(*queue), in);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.message.run_at = first_claimable(in.delay_ms, in.message.run_at, ctx.now);
  std::vector<store::NewMessage> messages{std::move(in.message)};
  auto inserted = co_await service_.enqueue(ctx, *queue, std::move(messages));
  const auto& item = inserted.at(0);
  co_return text_response(item.created ? 201 : 200,
                          message_text(item.message, {Audience::owner, false}, service_.redactor()));
}

Api::R Api::enqueue_batch(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  FieldErrors errors;
  std::vector<core::EnqueueRequest> items;
  const json::value* list = body.if_contains("messages");
  if (!list) {
    errors.push_back({"messages", "messages is required", "required"});
  } else if (!list->is_array() || list->get_array().empty() ||
             list->get_array().size() > kMaxBatch) {
    errors.push_back({"messages", "messages must be an array of 1 to 1000 messages", "invalid"});
  } else {
    const auto& policy = config_.policy_for(*queue);
    std::size_t i = 0;
    for (const auto& v : list->get_array()) {
      std::string prefix = "messages[" + std::to_string(i++) + "].";
      core::EnqueueRequest item;
      if (!v.is_object()) {
        errors.push_back({prefix.substr(0, prefix.size() - 1), "each message must be an object",
                          "invalid"});
      } else {
        auto item_errors = core::decode_enqueue(v.get_object(), config_, policy, item, prefix);
        errors.insert(errors.end(), item_errors.begin(), item_errors.end());
      }
      items.push_back(std::move(item));
    }
  }
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  std::vector<store::NewMessage> messages;
  messages.reserve(items.size());
  for (auto& item : items) {
    item.message.run_at = first_claimable(item.delay_ms, item.message.run_at, ctx.now);
    messages.push_back(std::move(item.message));
  }
  auto inserted = co_await service_.enqueue(ctx, *queue, std::move(messages));
  std::vector<Message> answered;
  answered.reserve(inserted.size());
  for (auto& item : inserted) answered.push_back(std::move(item.message));
  // Built in a local: g++ 12 mishandles temporaries with destructors inside co_await.
  auto answer = std::make_shared<MessageListStream>(
      MessageListStream::Shape{R"({"messages":[)", true, ""}, std::move(answered),
      MessageView{Audience::owner, false}, service_.redactor());
  co_return co_await streamed_response(201, std::move(answer));
}

Api::R Api::list(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  store::ListParams params;
  params.queue = *queue;
  FieldErrors errors = core::decode_list(req.query, params);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  // The page is fixed by its ids; its messages are read and written one at a time, so a page
  // of large messages is never held whole, however slowly the client reads (architecture.md,
  // "Bounds").
  auto ctx = request_context(config_, service_.clock(), req);
  auto ids = co_await service_.list_ids(ctx, params);
  auto answer = std::make_shared<MessageListStream>(
      MessageListStream::Shape{R"({"messages":[)", true, ""}, std::move(ids), service_, std::move(ctx),
      std::move(params.queue), MessageView{Audience::people, false});
  co_return co_await streamed_response(200, std::move(answer));
}

Api::R Api::show(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  auto found =
      co_await service_.find(request_context(config_, service_.clock(), req), queue, id);
  if (!found) co_return problem_from_error(context(config_, req), found.error());
  co_return text_response(200, message_text(*found, {Audience::people, false}, service_.redactor()));
}

Api::R Api::claim(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::ClaimRequest in;
  FieldErrors errors = core::decode_claim(body, req.query, in);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.command.queue = *queue;
  std::vector<AckSlot> ack_slots;
  if (in.ack) ack_slots = read_ack_items(*in.ack, in.command.acks);
  auto outcome = co_await service_.claim(ctx, std::move(in.command));
  if (outcome.client_gone) {
    Response r;  // nobody to answer
    r.close = true;
    co_return r;
  }
  std::vector<Message>& claimed = outcome.messages;
  // With `ack`, "acked" is the answer's last member (http-api B6); without, Part A's answer.
  std::string acked;
  if (in.ack) {
    acked = R"(,"acked":)" +
            json::serialize(ack_results(context(config_, req), ack_slots, outcome.acked));
  }

  std::string out = claimed.empty() ? R"({"claimed":false,)" : R"({"claimed":true,)";
  MessageView view{Audience::owner, true};
  if (in.batch) {
    // Up to 100 messages: written one at a time (see list).
    MessageListStream::Shape shape{out + R"("messages":[)", false, std::move(acked)};
    auto answer = std::make_shared<MessageListStream>(std::move(shape), std::move(claimed), view,
                                                    service_.redactor());
    Response r = co_await streamed_response(200, std::move(answer));
    r.close = lifecycle_.shutting_down();
    co_return r;
  } else if (claimed.empty()) {
    out += R"("message":null)" + acked + "}";
  } else {
    out += R"("message":)";
    append_message(out, claimed.front(), view, service_.redactor());
    out += acked + "}";
  }
  Response r = text_response(200, std::move(out));
  r.close = lifecycle_.shutting_down();
  co_return r;
}

Api::R Api::succeed(const Request& req, const RouteMatch& m) {
  std::optional<std::string> lease_id;
  MessageCall call;
  auto decode = [&lease_id](const json::object& b) { return core::decode_succeed(b, lease_id); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.succeed(call.ctx, call.queue, call.id, std::move(lease_id));
  co_return answer(req, result, Audience::owner);
}

Api::R Api::ack(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  FieldErrors errors;
  const json::value* items = body.if_contains("items");
  if (!items) {
    errors.push_back({"items", "items is required", "required"});
  } else if (!items->is_array() || items->get_array().empty() ||
             items->get_array().size() > kMaxBatch) {
    errors.push_back({"items", "items must be an array of 1 to 1000 {id, lease_id} objects",
                      "invalid"});
  }
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);

  std::vector<core::AckItem> acks;
  auto slots = read_ack_items(items->get_array(), acks);
  std::vector<Result<Message>> results;
  if (!acks.empty()) results = co_await service_.succeed_many(ctx, *queue, std::move(acks));
  json::array out = ack_results(context(config_, req), slots, results);
  json::object body_out;
  body_out["results"] = std::move(out);
  co_return json_response(200, body_out);
}

Api::R Api::fail(const Request& req, const RouteMatch& m) {
  core::FailInput in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_fail(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.fail(call.ctx, call.queue, call.id, std::move(in));
  co_return answer(req, result, Audience::owner);
}

Api::R Api::replay(const Request& req, const RouteMatch& m) {
  core::ReplayRequest in;
  MessageCall call;
  auto decode = [&in, this](const json::object& b) { return core::decode_replay(b, config_, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  in.input.run_at = first_claimable(in.delay_ms, in.input.run_at, call.ctx.now);
  bool dry_run = in.dry_run;
  auto result =
      co_await service_.replay(call.ctx, call.queue, call.id, std::move(in.input), dry_run);
  if (result && dry_run) {
    co_return text_response(200, R"({"dry_run":true,"message":)" +
                                     message_text(*result, {Audience::people, false}, service_.redactor()) +
                                     "}");
  }
  co_return answer(req, result, Audience::people);
}

Api::R Api::extend(const Request& req, const RouteMatch& m) {
  core::ExtendRequest in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_extend(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.extend(call.ctx, call.queue, call.id, std::move(in.lease_id),
                                         in.duration_ms, std::move(in.checkpoint));
  co_return answer(req, result, Audience::owner);
}

Api::R Api::release(const Request& req, const RouteMatch& m) {
  core::ReleaseRequest in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_release(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result =
      co_await service_.release(call.ctx, call.queue, call.id, std::move(in.lease_id), in.delay_ms);
  co_return answer(req, result, Audience::owner);
}

Api::R Api::dismiss(const Request& req, const RouteMatch& m) {
  std::optional<std::string> reason;
  MessageCall call;
  auto decode = [&reason](const json::object& b) { return core::decode_dismiss(b, reason); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.dismiss(call.ctx, call.queue, call.id, std::move(reason));
  co_return answer(req, result, Audience::people);
}

Api::R Api::attempts(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  auto history =
      co_await service_.attempts(request_context(config_, service_.clock(), req), queue, id);
  if (!history) co_return problem_from_error(context(config_, req), history.error());
  json::array items;
  for (const auto& a : *history) items.push_back(attempt_json(a, service_.redactor()));
  json::object body;
  std::size_t count = items.size();
  body["attempts"] = std::move(items);
  body["count"] = count;
  co_return json_response(200, body);
}

}  // namespace dlq::http

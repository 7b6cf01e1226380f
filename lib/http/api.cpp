#include "http/api.hpp"

#include <boost/json.hpp>

#include "http/json_codec.hpp"
#include "http/problem.hpp"
#include "model/logging.hpp"

namespace dlq::http {
namespace json = boost::json;
using boost::asio::awaitable;

Api::Api(core::QueueService& service, const Config& config, const std::atomic<bool>& shutting_down)
    : service_(service), config_(config), shutting_down_(shutting_down) {
  auto bind = [this](R (Api::*handler)(const Request&, const RouteMatch&)) {
    return [this, handler](const Request& req, const RouteMatch& m) { return (this->*handler)(req, m); };
  };
  // Every endpoint of dlqd, once.
  router_.add("POST", "/queues/{queue}/messages", bind(&Api::enqueue));
  router_.add("GET", "/queues/{queue}/messages", bind(&Api::list));
  router_.add("POST", "/queues/{queue}/messages/batch", bind(&Api::enqueue_batch));
  router_.add("GET", "/queues/{queue}/messages/{id}", bind(&Api::show));
  router_.add("POST", "/queues/{queue}/claim", bind(&Api::claim));
  router_.add("POST", "/queues/{queue}/ack", bind(&Api::ack));
  router_.add("POST", "/queues/{queue}/messages/{id}/succeed", bind(&Api::succeed));
  router_.add("POST", "/queues/{queue}/messages/{id}/fail", bind(&Api::fail));
  router_.add("POST", "/queues/{queue}/messages/{id}/replay", bind(&Api::replay));
  router_.add("POST", "/queues/{queue}/messages/{id}/extend", bind(&Api::extend));
  router_.add("POST", "/queues/{queue}/messages/{id}/release", bind(&Api::release));
  router_.add("POST", "/queues/{queue}/messages/{id}/dismiss", bind(&Api::dismiss));
  router_.add("GET", "/queues/{queue}/messages/{id}/attempts", bind(&Api::attempts));
  router_.add("GET", "/queues", bind(&Api::queues));
  router_.add("GET", "/queues/{queue}/stats", bind(&Api::queue_stats));
  router_.add("GET", "/metrics", bind(&Api::metrics));
  router_.add("GET", "/healthz", bind(&Api::healthz));
  router_.add("GET", "/readyz", bind(&Api::readyz));
}

namespace {

constexpr std::size_t kMaxBatch = 1000;

ProblemContext context(const Config& c, const Request& r) { return {c.problem_base, r.path}; }

Response json_response(int status, const json::value& body) {
  Response r;
  r.status = status;
  r.body = json::serialize(body);
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

// "now" for routes that read the clock: the real clock, or X-Now when testing allows it. An
// X-Now problem is reported after every body field (http-api.md C).
TimeMs request_now(const Config& c, const Clock& clock, const Request& req, FieldErrors& errors) {
  const std::string* header = req.header("x-now");
  if (!header) return clock.now();
  if (!c.testing.allow_clock_override) {
    errors.push_back({"X-Now", "X-Now is only accepted when testing.allow_clock_override is on",
                      "disabled"});
    return clock.now();
  }
  if (auto t = parse_timestamp(*header)) return *t;
  errors.push_back({"X-Now", "X-Now must be an RFC 3339 timestamp", "invalid"});
  return clock.now();
}

// A relative delay or an absolute time becomes the first claimable time (none when not later).
std::optional<TimeMs> first_claimable(std::optional<TimeMs> delay_ms, std::optional<TimeMs> run_at,
                                      TimeMs now) {
  std::optional<TimeMs> at = run_at;
  if (delay_ms) at = now + *delay_ms;
  if (at && *at <= now) at.reset();
  return at;
}

json::value age_seconds(const std::optional<TimeMs>& since, TimeMs now) {
  if (!since) return nullptr;
  return std::max<TimeMs>(0, now - *since) / kMillisPerSecond;
}

json::object stats_json(const store::QueueStats& s, TimeMs now) {
  json::object o;
  o["queue"] = s.queue;
  o["ready"] = s.ready;
  o["scheduled"] = s.scheduled;
  o["processing"] = s.processing;
  o["succeeded"] = s.succeeded;
  o["dead"] = s.dead;
  o["dismissed"] = s.dismissed;
  o["oldest_ready_age_seconds"] = age_seconds(s.oldest_ready_since, now);
  o["oldest_dead_age_seconds"] = age_seconds(s.oldest_dead_at, now);
  return o;
}

json::value owner_json(const Message& m, const core::Redactor& r) {
  return message_json(m, {Audience::owner, false}, r);
}

json::value people_json(const Message& m, const core::Redactor& r) {
  return message_json(m, {Audience::people, false}, r);
}

}  // namespace

awaitable<Response> Api::handle(const Request& req) {
  RouteMatch match = router_.match(req.method, req.path);
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
  try {
    co_return co_await match.route->handler(req, match);
  } catch (const DatabaseUnavailable& e) {
    log::warn("database unavailable", {{"path", req.path}, {"error", e.what()}});
    co_return problem(pc, 503, "database-unavailable", "Database unavailable",
                      "the database cannot be reached; retry later", "database unavailable");
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
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.message.run_at = first_claimable(in.delay_ms, in.message.run_at, now);
  std::vector<store::NewMessage> messages{std::move(in.message)};
  auto inserted = co_await service_.enqueue(*queue, std::move(messages), now);
  const auto& item = inserted.at(0);
  co_return json_response(item.created ? 201 : 200, owner_json(item.message, service_.redactor()));
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
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  std::vector<store::NewMessage> messages;
  messages.reserve(items.size());
  for (auto& item : items) {
    item.message.run_at = first_claimable(item.delay_ms, item.message.run_at, now);
    messages.push_back(std::move(item.message));
  }
  auto inserted = co_await service_.enqueue(*queue, std::move(messages), now);
  json::array out;
  out.reserve(inserted.size());
  for (const auto& item : inserted) out.push_back(owner_json(item.message, service_.redactor()));
  json::object result;
  std::size_t count = out.size();
  result["messages"] = std::move(out);
  result["count"] = count;
  co_return json_response(201, result);
}

Api::R Api::list(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  store::ListParams params;
  params.queue = *queue;
  FieldErrors errors = core::decode_list(req.query, params);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto messages = co_await service_.list(std::move(params));
  json::array items;
  items.reserve(messages.size());
  for (const auto& msg : messages) items.push_back(people_json(msg, service_.redactor()));
  json::object body;
  body["messages"] = std::move(items);
  body["count"] = messages.size();
  co_return json_response(200, body);
}

Api::R Api::show(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  auto found = co_await service_.find(queue, id);
  if (!found) co_return problem_from_error(context(config_, req), found.error());
  co_return json_response(200, people_json(*found, service_.redactor()));
}

Api::R Api::claim(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::ClaimRequest in;
  FieldErrors errors = core::decode_claim(body, req.query, in);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.command.queue = *queue;
  in.command.pinned_now = req.header("x-now") != nullptr;

  // While the claim waits, watch the connection: a client that leaves ends the wait.
  auto cancel = std::make_shared<core::ClaimCancel>();
  ClientWatch* watch = in.command.wait_ms > 0 ? req.watch : nullptr;
  if (watch) {
    core::QueueService* service = &service_;
    watch->start([service, cancel] { service->cancel_claim(cancel); });
  }
  std::vector<Message> claimed;
  std::exception_ptr fault;
  try {
    claimed = co_await service_.claim(in.command, now, cancel);
  } catch (...) {
    fault = std::current_exception();
  }
  if (watch) co_await watch->stop();
  if (fault) std::rethrow_exception(fault);

  if (watch && watch->gone()) {
    // Nobody will read the answer: give the messages back instead of losing them to the lease.
    for (const auto& msg : claimed) {
      co_await service_.release(msg.queue, msg.id, msg.lease_id.value_or(""), 0, now);
    }
    Response r;
    r.close = true;
    co_return r;
  }

  json::object out;
  out["claimed"] = !claimed.empty();
  MessageView view{Audience::owner, true};
  if (in.batch) {
    json::array items;
    for (const auto& msg : claimed) items.push_back(message_json(msg, view, service_.redactor()));
    out["messages"] = std::move(items);
  } else if (claimed.empty()) {
    out["message"] = nullptr;
  } else {
    out["message"] = message_json(claimed.front(), view, service_.redactor());
  }
  Response r = json_response(200, out);
  r.close = shutting_down_.load();
  co_return r;
}

Api::R Api::succeed(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  std::optional<std::string> lease_id;
  FieldErrors errors = core::decode_succeed(body, lease_id);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto result = co_await service_.succeed(queue, id, std::move(lease_id), now);
  if (!result) co_return problem_from_error(context(config_, req), result.error());
  co_return json_response(200, owner_json(*result, service_.redactor()));
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
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);

  // Items that cannot be an ack are answered on their own; the rest go to the store together.
  struct Slot {
    json::value id;
    int status = 200;
    std::string error;
    std::optional<std::size_t> pending;  // index into `acks`
  };
  std::vector<Slot> slots;
  std::vector<core::QueueService::AckItem> acks;
  for (const auto& v : items->get_array()) {
    Slot slot;
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
      core::QueueService::AckItem ack;
      ack.id = id->get_int64();
      if (lease) ack.lease_id = std::string(lease->get_string());
      slot.pending = acks.size();
      acks.push_back(std::move(ack));
    }
    slots.push_back(std::move(slot));
  }
  std::vector<Result<Message>> results;
  if (!acks.empty()) results = co_await service_.succeed_many(*queue, std::move(acks), now);
  json::array out;
  ProblemContext pc = context(config_, req);
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
  json::object body_out;
  body_out["results"] = std::move(out);
  co_return json_response(200, body_out);
}

Api::R Api::fail(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::FailInput in;
  FieldErrors errors = core::decode_fail(body, in);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto result = co_await service_.fail(queue, id, std::move(in), now);
  if (!result) co_return problem_from_error(context(config_, req), result.error());
  co_return json_response(200, owner_json(*result, service_.redactor()));
}

Api::R Api::replay(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::ReplayRequest in;
  FieldErrors errors = core::decode_replay(body, config_, in);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.input.run_at = first_claimable(in.delay_ms, in.input.run_at, now);
  bool dry_run = in.dry_run;
  auto result = co_await service_.replay(queue, id, std::move(in.input), now, dry_run);
  if (!result) co_return problem_from_error(context(config_, req), result.error());
  if (dry_run) {
    json::object out;
    out["dry_run"] = true;
    out["message"] = people_json(*result, service_.redactor());
    co_return json_response(200, out);
  }
  co_return json_response(200, people_json(*result, service_.redactor()));
}

Api::R Api::extend(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::ExtendRequest in;
  FieldErrors errors = core::decode_extend(body, in);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto result = co_await service_.extend(queue, id, std::move(in.lease_id), in.duration_ms,
                                         std::move(in.checkpoint), now);
  if (!result) co_return problem_from_error(context(config_, req), result.error());
  co_return json_response(200, owner_json(*result, service_.redactor()));
}

Api::R Api::release(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::ReleaseRequest in;
  FieldErrors errors = core::decode_release(body, in);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto result = co_await service_.release(queue, id, std::move(in.lease_id), in.delay_ms, now);
  if (!result) co_return problem_from_error(context(config_, req), result.error());
  co_return json_response(200, owner_json(*result, service_.redactor()));
}

Api::R Api::dismiss(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  std::optional<std::string> reason;
  FieldErrors errors = core::decode_dismiss(body, reason);
  TimeMs now = request_now(config_, service_.clock(), req, errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto result = co_await service_.dismiss(queue, id, std::move(reason), std::nullopt, now);
  if (!result) co_return problem_from_error(context(config_, req), result.error());
  co_return json_response(200, people_json(*result, service_.redactor()));
}

Api::R Api::attempts(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  auto found = co_await service_.find(queue, id);
  if (!found) co_return problem_from_error(context(config_, req), found.error());
  auto history = co_await service_.attempts(queue, id);
  if (!history) co_return problem_from_error(context(config_, req), history.error());
  json::array items;
  for (const auto& a : *history) items.push_back(attempt_json(a, service_.redactor()));
  if (found->status == Status::processing) {
    // The attempt under way: claimed, not finished.
    AttemptRecord current;
    current.attempt = found->attempts;
    current.claimed_at = found->last_attempt_at;
    current.worker = found->worker;
    json::object o = attempt_json(current, service_.redactor());
    o["finished_at"] = nullptr;
    o["outcome"] = nullptr;
    items.push_back(std::move(o));
  }
  json::object body;
  std::size_t count = items.size();
  body["attempts"] = std::move(items);
  body["count"] = count;
  co_return json_response(200, body);
}

Api::R Api::queues(const Request&, const RouteMatch&) {
  TimeMs now = service_.clock().now();
  auto all = co_await service_.stats(std::nullopt, now);
  json::array items;
  for (const auto& s : all) items.push_back(stats_json(s, now));
  json::object body;
  body["queues"] = std::move(items);
  co_return json_response(200, body);
}

Api::R Api::queue_stats(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  TimeMs now = service_.clock().now();
  auto one = co_await service_.stats(*queue, now);
  co_return json_response(200, stats_json(one.at(0), now));
}

// Prometheus text format. The first metrics of B5: how group commit groups, and parked claims.
Api::R Api::metrics(const Request&, const RouteMatch&) {
  auto writes = service_.write_stats();
  std::string body;
  auto metric = [&body](const char* name, const char* type, const char* help, double value) {
    body += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
            name + " " + std::to_string(static_cast<long long>(value)) + "\n";
  };
  metric("dlq_store_commits_total", "counter", "Write transactions committed.",
         static_cast<double>(writes.commits));
  metric("dlq_store_operations_total", "counter",
         "Write operations applied; several share one commit (group commit).",
         static_cast<double>(writes.operations));
  metric("dlq_long_poll_waiters", "gauge", "Claims parked waiting for work right now.",
         static_cast<double>(service_.waiting_claimers()));
  Response r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = std::move(body);
  co_return r;
}

Api::R Api::healthz(const Request&, const RouteMatch&) {
  json::object body;
  body["status"] = "ok";
  co_return json_response(200, body);
}

Api::R Api::readyz(const Request& req, const RouteMatch&) {
  bool ready = co_await service_.ready();
  if (!ready) {
    co_return problem(context(config_, req), 503, "database-unavailable", "Not ready",
                      "the database is unreachable or its schema is not current", "not ready");
  }
  json::object body;
  body["status"] = "ready";
  co_return json_response(200, body);
}

}  // namespace dlq::http

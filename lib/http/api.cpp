// The route table, routing, access and faults: every request's way to its resource's handler.
#include "http/api.hpp"

#include "http/api_audit.hpp"
#include "http/api_dlq.hpp"
#include "http/api_trials.hpp"
#include "http/api_messages.hpp"
#include "http/api_ops.hpp"
#include "http/api_sqs.hpp"
#include "http/api_support.hpp"
#include "http/lifecycle.hpp"
#include "http/api_ui.hpp"
#include "model/logging.hpp"

namespace dlq::http {
using boost::asio::awaitable;
using namespace support;

// The handler objects, one per resource, each holding only what its routes use. They are bases
// of one object so that the table can name every handler by its own class
// (&MessageHandlers::enqueue): a pointer to a member of a base converts to one of this.
struct ResourceHandlers : MessageHandlers, DlqHandlers, TrialHandlers, OpsHandlers, AuditHandlers,
                          UiHandlers, SqsHandlers {
  ResourceHandlers(core::QueueService& service, core::DeadLetterDesk& desk,
                   core::TrialDesk& trials, store::Store& store, const core::TaskHost& tasks,
                   const core::AccessControl& access, ops::Metrics& metrics,
                   const Config& config, const Lifecycle& lifecycle)
      : MessageHandlers(service, config, lifecycle),
        DlqHandlers(desk, service.clock(), service.redactor(), config),
        TrialHandlers(trials, service.clock(), service.redactor(), config),
        OpsHandlers(service, store, tasks, metrics, config),
        AuditHandlers(service, config),
        UiHandlers(config),
        SqsHandlers(service, desk, store, access, config) {}
};

namespace {
const std::string kNoRoute = "-";
constexpr std::string_view kSqsQueuePattern = "/{account_id}/{queue}";  // no route matched (404/405): one label, not the raw path

// The `method` label: a fixed set, whatever a client sends as its method (HEAD counts as GET),
// so that made-up methods cannot grow dlq_http_requests_total (docs/resource-bounds.md).
const std::string& method_label(std::string_view method) {
  static const std::string kLabels[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
  static const std::string kOther = "other";
  if (method == "HEAD") return kLabels[0];
  for (const auto& label : kLabels) {
    if (method == label) return label;
  }
  return kOther;
}

// The routes Host is not checked on: probes (load balancers, orchestrators) name whatever host
// they were given, and these answer nothing a page could use.
bool probe(const Route& route) { return route.pattern == "/healthz" || route.pattern == "/readyz"; }

struct Row {
  std::string_view method;
  std::string_view pattern;
  core::Access access;
  awaitable<Response> (ResourceHandlers::*handler)(const Request&, const RouteMatch&);
};

// Every endpoint of dlqd, once, with the access it needs (http-api.md B4; docs/access.md). The
// server binds these rows; routes() lists them for `dlqd --print-routes` and the test that holds
// docs/openapi.json to them.
const std::vector<Row>& table() {
  using enum core::Access;
  static const std::vector<Row> rows = {
      {"POST", "/queues/{queue}/messages", producer, &MessageHandlers::enqueue},
      {"GET", "/queues/{queue}/messages", reader, &MessageHandlers::list},
      {"DELETE", "/queues/{queue}/messages", admin, &OpsHandlers::purge},
      {"POST", "/queues/{queue}/messages/batch", producer, &MessageHandlers::enqueue_batch},
      {"GET", "/queues/{queue}/messages/{id}", reader, &MessageHandlers::show},
      {"POST", "/queues/{queue}/claim", worker, &MessageHandlers::claim},
      {"POST", "/queues/{queue}/ack", worker, &MessageHandlers::ack},
      {"POST", "/queues/{queue}/messages/{id}/succeed", worker, &MessageHandlers::succeed},
      {"POST", "/queues/{queue}/messages/{id}/fail", worker, &MessageHandlers::fail},
      {"POST", "/queues/{queue}/messages/{id}/replay", admin, &MessageHandlers::replay},
      {"POST", "/queues/{queue}/messages/{id}/extend", worker, &MessageHandlers::extend},
      {"POST", "/queues/{queue}/messages/{id}/release", worker, &MessageHandlers::release},
      {"POST", "/queues/{queue}/messages/{id}/dismiss", admin, &MessageHandlers::dismiss},
      {"POST", "/queues/{queue}/messages/{id}/effects", worker, &MessageHandlers::effect},
      {"POST", "/queues/{queue}/messages/{id}/trials", admin, &TrialHandlers::start_trial},
      {"GET", "/queues/{queue}/messages/{id}/trials/{trial_id}", reader, &TrialHandlers::trial},
      {"POST", "/queues/{queue}/messages/{id}/trials/{trial_id}/succeed", worker,
       &TrialHandlers::succeed_trial},
      {"POST", "/queues/{queue}/messages/{id}/trials/{trial_id}/fail", worker,
       &TrialHandlers::fail_trial},
      {"POST", "/queues/{queue}/messages/{id}/trials/{trial_id}/extend", worker,
       &TrialHandlers::extend_trial},
      {"GET", "/queues/{queue}/messages/{id}/attempts", reader, &MessageHandlers::attempts},
      {"GET", "/queues/{queue}/messages/{id}/versions", reader, &MessageHandlers::versions},
      {"GET", "/queues", reader, &OpsHandlers::queues},
      {"GET", "/queues/{queue}/stats", reader, &OpsHandlers::queue_stats},
      {"GET", "/dlq", reader, &DlqHandlers::dead_letters},
      {"POST", "/dlq/replay", admin, &DlqHandlers::dlq_replay},
      {"POST", "/dlq/dismiss", admin, &DlqHandlers::dlq_dismiss},
      {"POST", "/dlq/trials", admin, &TrialHandlers::start_trials},
      {"GET", "/dlq/hourly", reader, &DlqHandlers::dead_hourly},
      {"GET", "/dlq/incidents", reader, &DlqHandlers::incidents},
      {"GET", "/dlq/incidents/{fingerprint}", reader, &DlqHandlers::incident},
      {"POST", "/dlq/incidents/{fingerprint}/mute", admin, &DlqHandlers::mute_incident},
      {"GET", "/dlq/replays", reader, &DlqHandlers::replay_runs},
      {"GET", "/dlq/replays/{id}", reader, &DlqHandlers::replay_run},
      {"POST", "/dlq/replays/{id}/pause", admin, &DlqHandlers::pause_run},
      {"POST", "/dlq/replays/{id}/resume", admin, &DlqHandlers::resume_run},
      {"POST", "/dlq/replays/{id}/cancel", admin, &DlqHandlers::cancel_run},
      {"GET", "/audit", admin, &AuditHandlers::audit},
      {"GET", "/metrics", reader_unless_public_metrics, &OpsHandlers::metrics},
      {"GET", "/whoami", any_token, &OpsHandlers::whoami},
      {"GET", "/healthz", open, &OpsHandlers::healthz},
      {"GET", "/readyz", open, &OpsHandlers::readyz},
      {"GET", "/openapi.json", reader_unless_public_metrics, &OpsHandlers::openapi},
      {"GET", "/ui", open, &UiHandlers::ui_redirect},
      {"GET", "/ui/", open, &UiHandlers::ui_index},
      {"GET", "/ui/{file}", open, &UiHandlers::ui_asset},
      // The SQS front (docs/sqs.md): its own SigV4 keys and SQS-shaped answers. The queue URL's
      // path is routed with the configured account id in place of {account_id}, so that any
      // other two-segment path stays a 404.
      {"POST", "/", sqs, &SqsHandlers::sqs},
      {"POST", "/{account_id}/{queue}", sqs, &SqsHandlers::sqs},
  };
  return rows;
}

}  // namespace

std::vector<RouteInfo> Api::routes() {
  std::vector<RouteInfo> out;
  for (const auto& row : table()) {
    out.push_back({std::string(row.method), std::string(row.pattern), row.access});
  }
  return out;
}

Api::Api(core::QueueService& service, core::DeadLetterDesk& desk, core::TrialDesk& trials,
         store::Store& store, const core::TaskHost& tasks, const core::AccessControl& access,
         ops::Metrics& metrics, const Config& config, const Lifecycle& lifecycle)
    : handlers_(std::make_unique<ResourceHandlers>(service, desk, trials, store, tasks, access,
                                                   metrics, config, lifecycle)),
      access_(access),
      metrics_(metrics),
      config_(config),
      guard_(config) {
  for (const auto& row : table()) {
    auto handler = row.handler;
    std::string pattern(row.pattern);
    if (pattern == kSqsQueuePattern) pattern = "/" + config.sqs.account_id + "/{queue}";
    router_.add(std::string(row.method), std::move(pattern), row.access,
                [handlers = handlers_.get(), handler](const Request& req, const RouteMatch& m) {
                  return (handlers->*handler)(req, m);
                });
  }
}

Api::~Api() = default;

void Api::bound(const std::string& address) { handlers_->bound(address); }

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
  metrics_.http_request(route, method_label(req.method), res.status, took);
  if (!config_.log.access || !log::enabled(log::Level::info)) return;
  std::string queue = "-";
  if (match.route && match.route->pattern.starts_with("/queues/{queue}") && !match.params.empty()) {
    // Only a valid name: anything else is attacker bytes (a %0a would forge a text line).
    queue = queue_param(match.params.front()).value_or("-");
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
  // Host, then Origin, then the token: after routing and before everything the handler checks
  // (http-api.md 0, docs/api-decisions.md "Access control").
  // The SQS front checks Host only when it is anonymous (with keys, SigV4 signs the host), and
  // answers its refusals in SQS's shape.
  const bool sqs = match.route->access == core::Access::sqs;
  bool check_host = sqs ? access_.sqs_mode() == core::SqsMode::anonymous
                        : !access_.enforcing() && !probe(*match.route);
  SiteVerdict site = guard_.check(req, check_host);
  if (sqs && site != SiteVerdict::allowed) {
    co_return SqsHandlers::refused(
        req, site == SiteVerdict::host_not_allowed
                 ? "without access keys or tokens dlqd answers only a Host of localhost, "
                   "127.0.0.0/8, [::1], the host of listen or a name in http.allowed_hosts"
                 : "a POST from another site's page is refused: its Origin is not this server's "
                   "own and not in http.allowed_origins");
  }
  switch (site) {
    case SiteVerdict::allowed:
      break;
    case SiteVerdict::host_not_allowed:
      co_return problem(pc, 403, "host-not-allowed", "Host not allowed",
                        "without auth.tokens dlqd answers only a Host of localhost, *.localhost, "
                        "127.0.0.0/8, [::1], the host of listen or a name in http.allowed_hosts "
                        "(a guard against DNS rebinding)",
                        "host not allowed");
    case SiteVerdict::origin_not_allowed:
      co_return problem(pc, 403, "origin-not-allowed", "Origin not allowed",
                        "a POST, PUT, PATCH or DELETE from another site's page is refused: its "
                        "Origin (or Sec-Fetch-Site) is not this server's own and the Origin is "
                        "not in http.allowed_origins",
                        "origin not allowed");
  }
  // Access comes after routing and before everything the handler checks (http-api.md 0).
  auto decision = access_.check(match.route->access, req.header("authorization"));
  if (decision.verdict == core::Verdict::unauthorized) {
    // The detail says only what the sender knows: whether it sent a token (never why one was
    // refused: removed, unknown or malformed).
    Response r = problem(pc, 401, "unauthorized", "Unauthorized",
                         req.header("authorization")
                             ? "the access token sent was not accepted"
                             : "this route needs an access token: Authorization: Bearer <token>",
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
  req.roles = std::move(decision.roles);
  req.tokens_configured = decision.tokens_configured;
  try {
    co_return co_await match.route->handler(req, match);
  } catch (const DatabaseUnavailable& e) {
    // ambiguous: lost in COMMIT, so the change may have been made (a retry needs its
    // idempotency key); the history checker reads this line by request id.
    if (e.ambiguous()) {
      log::warn("database unavailable", {{"path", req.path},
                                         {"request_id", req.request_id},
                                         {"ambiguous", true},
                                         {"error", e.what()}});
    } else {
      log::warn("database unavailable",
                {{"path", req.path}, {"request_id", req.request_id}, {"error", e.what()}});
    }
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

}  // namespace dlq::http

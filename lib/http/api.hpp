// The HTTP API of dlqd: the route table (every endpoint, listed once, at the top of api.cpp) and
// the handlers. A handler decodes, calls the QueueService, encodes; it returns a Response and
// never touches the socket. Faults become 500/503 problems here and nowhere else.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/access.hpp"
#include "core/desk.hpp"
#include "core/queue_service.hpp"
#include "core/task_host.hpp"
#include "ops/metrics.hpp"
#include "http/json_codec.hpp"
#include "http/lifecycle.hpp"
#include "http/request.hpp"
#include "http/router.hpp"

namespace dlq::http {

// One route as the table lists it: what `dlqd --print-routes` prints and docs/openapi.json must
// describe (tests/unit/openapi_test.cpp).
struct RouteInfo {
  std::string method;
  std::string pattern;
  core::Access access;
};

class Api {
 public:
  // The route table, in table order, without handlers; needs no server.
  static std::vector<RouteInfo> routes();

  Api(core::QueueService& service, core::DeadLetterDesk& desk, store::Store& store,
      const core::TaskHost& tasks, const core::AccessControl& access, ops::Metrics& metrics,
      const Config& config, const Lifecycle& lifecycle);

  // Never throws: every outcome, including faults, is a Response. Sets req.actor once access
  // is granted.
  boost::asio::awaitable<Response> handle(Request& req);

 private:
  using R = boost::asio::awaitable<Response>;
  struct Row {
    std::string_view method;
    std::string_view pattern;
    core::Access access;
    R (Api::*handler)(const Request&, const RouteMatch&);
  };
  static const std::vector<Row>& table();
  // Routing, access, the handler, faults as problems (handle() adds metrics and the access log).
  R dispatch(Request& req, const RouteMatch& match);
  void account(const Request& req, const RouteMatch& match, const Response& res,
               std::chrono::nanoseconds took);
  R enqueue(const Request& req, const RouteMatch& m);
  R enqueue_batch(const Request& req, const RouteMatch& m);
  R list(const Request& req, const RouteMatch& m);
  R show(const Request& req, const RouteMatch& m);
  R claim(const Request& req, const RouteMatch& m);
  R succeed(const Request& req, const RouteMatch& m);
  R ack(const Request& req, const RouteMatch& m);
  R fail(const Request& req, const RouteMatch& m);
  R replay(const Request& req, const RouteMatch& m);
  R extend(const Request& req, const RouteMatch& m);
  R release(const Request& req, const RouteMatch& m);
  R dismiss(const Request& req, const RouteMatch& m);
  R attempts(const Request& req, const RouteMatch& m);
  R queues(const Request& req, const RouteMatch& m);
  R queue_stats(const Request& req, const RouteMatch& m);
  R healthz(const Request& req, const RouteMatch& m);
  R metrics(const Request& req, const RouteMatch& m);
  R readyz(const Request& req, const RouteMatch& m);
  R openapi(const Request& req, const RouteMatch& m);
  R audit(const Request& req, const RouteMatch& m);
  R purge(const Request& req, const RouteMatch& m);
  R dead_letters(const Request& req, const RouteMatch& m);
  R dlq_replay(const Request& req, const RouteMatch& m);
  R dlq_dismiss(const Request& req, const RouteMatch& m);
  R replay_runs(const Request& req, const RouteMatch& m);
  R replay_run(const Request& req, const RouteMatch& m);
  R pause_run(const Request& req, const RouteMatch& m);
  R resume_run(const Request& req, const RouteMatch& m);
  R cancel_run(const Request& req, const RouteMatch& m);
  R dead_hourly(const Request& req, const RouteMatch& m);
  R ui_redirect(const Request& req, const RouteMatch& m);
  R ui_index(const Request& req, const RouteMatch& m);
  R ui_asset(const Request& req, const RouteMatch& m);
  // One UI file (built in, or from ui.dir) with its type and the UI's headers; 404 when unknown.
  Response ui_file(const Request& req, std::string_view name) const;
  R change_run(const Request& req, const RouteMatch& m, core::RunAction action);
  Response preview_answer(const core::BatchPreviewView& p) const;

  Response answer(const Request& req, const Result<Message>& result, Audience audience) const;

  core::QueueService& service_;
  core::DeadLetterDesk& desk_;
  store::Store& store_;  // housekeeping (purge) works on the store directly
  const core::TaskHost& tasks_;
  const core::AccessControl& access_;
  ops::Metrics& metrics_;
  // The database's message counts for /metrics, at most metrics.cache_seconds old.
  std::mutex stats_mu_;
  TimeMs stats_at_ = 0;
  std::vector<store::QueueStats> stats_;
  const Config& config_;
  const Lifecycle& lifecycle_;
  Router router_;
};

}  // namespace dlq::http

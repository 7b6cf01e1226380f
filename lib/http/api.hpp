// The HTTP API of dlqd: the route table (every endpoint, listed once, at the top of api.cpp),
// routing, access and the faults every handler may meet, which become 500/503/507 problems here
// and nowhere else. The handlers are one class per resource (http/api_*.hpp); a handler decodes,
// calls the core, encodes; it returns a Response and never touches the socket.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/access.hpp"
#include "core/desk.hpp"
#include "core/queue_service.hpp"
#include "core/task_host.hpp"
#include "core/trials.hpp"
#include "http/origin_guard.hpp"
#include "http/request.hpp"
#include "http/router.hpp"
#include "ops/metrics.hpp"
#include "store/store.hpp"

namespace dlq::http {

class Lifecycle;

// One route as the table lists it: what `dlqd --print-routes` prints and docs/openapi.json must
// describe (tests/unit/openapi_test.cpp).
struct RouteInfo {
  std::string method;
  std::string pattern;
  core::Access access;
};

// Every resource's handler object (api.cpp).
struct ResourceHandlers;

class Api {
 public:
  // The route table, in table order, without handlers; needs no server.
  static std::vector<RouteInfo> routes();

  Api(core::QueueService& service, core::DeadLetterDesk& desk, core::TrialDesk& trials,
      store::Store& store, const core::TaskHost& tasks, const core::AccessControl& access,
      ops::Metrics& metrics, const Config& config, const Lifecycle& lifecycle);
  ~Api();

  // Never throws: every outcome, including faults, is a Response. Sets req.actor once access
  // is granted.
  boost::asio::awaitable<Response> handle(Request& req);
  // The address the server bound ("127.0.0.1:8080"): the SQS front's queue URLs name it when
  // sqs.public_url is empty.
  void bound(const std::string& address);

 private:
  // Routing, Host and Origin, access, the handler, faults as problems (handle() adds metrics and
  // the access log).
  boost::asio::awaitable<Response> dispatch(Request& req, const RouteMatch& match);
  void account(const Request& req, const RouteMatch& match, const Response& res,
               std::chrono::nanoseconds took);

  std::unique_ptr<ResourceHandlers> handlers_;
  const core::AccessControl& access_;
  ops::Metrics& metrics_;
  const Config& config_;
  OriginGuard guard_;
  Router router_;
};

}  // namespace dlq::http

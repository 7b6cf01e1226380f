// The operational routes' handlers: queue stats, /metrics, health, readiness, the OpenAPI
// document, and an operator's purge of a queue's finished messages.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "core/task_host.hpp"
#include "http/request.hpp"
#include "http/router.hpp"
#include "ops/metrics.hpp"
#include "store/store.hpp"

namespace dlq::http {

class OpsHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  OpsHandlers(core::QueueService& service, store::Store& store, const core::TaskHost& tasks,
              ops::Metrics& metrics, const Config& config);

  R queues(const Request& req, const RouteMatch& m);
  R queue_stats(const Request& req, const RouteMatch& m);
  R metrics(const Request& req, const RouteMatch& m);
  R purge(const Request& req, const RouteMatch& m);
  R whoami(const Request& req, const RouteMatch& m);
  R healthz(const Request& req, const RouteMatch& m);
  R readyz(const Request& req, const RouteMatch& m);
  R openapi(const Request& req, const RouteMatch& m);

 private:
  core::QueueService& service_;
  store::Store& store_;  // housekeeping (purge) works on the store directly
  const core::TaskHost& tasks_;
  ops::Metrics& metrics_;
  const Config& config_;
};

}  // namespace dlq::http

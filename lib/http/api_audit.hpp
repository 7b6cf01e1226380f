// The audit route's handler: GET /audit, the operators' audit log, newest first, keyset-paged by
// after_id.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "http/request.hpp"
#include "http/router.hpp"

namespace dlq::http {

class AuditHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  AuditHandlers(core::QueueService& service, const Config& config);

  R audit(const Request& req, const RouteMatch& m);

 private:
  core::QueueService& service_;
  const Config& config_;
};

}  // namespace dlq::http

// The SQS front's routes (POST / and POST /{account_id}/{queue}, access kind `sqs`): the JSON
// 1.0 protocol of current AWS SDKs, authenticated by SigV4 access keys or anonymous, answered in
// SQS's shapes (docs/sqs.md).
#pragma once

#include <memory>

#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/access.hpp"
#include "core/queue_service.hpp"
#include "http/origin_guard.hpp"
#include "http/request.hpp"
#include "http/router.hpp"
#include "store/store.hpp"

namespace dlq::core {
class DeadLetterDesk;
}

namespace dlq::http {

namespace sqs {
class Actions;
}

class SqsHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  SqsHandlers(core::QueueService& service, core::DeadLetterDesk& desk, store::Store& store,
              const core::AccessControl& access, const Config& config);
  ~SqsHandlers();

  R sqs(const Request& req, const RouteMatch& m);
  // The address dlqd bound, for queue URLs when sqs.public_url is empty ("127.0.0.1:8080").
  void bound(const std::string& address);
  // The answer to a request the Host or Origin check refused, in SQS's shape.
  static Response refused(const Request& req, const std::string& message);

 private:
  core::QueueService& service_;
  const core::AccessControl& access_;
  const Config& config_;
  std::unique_ptr<sqs::Actions> actions_;
};

}  // namespace dlq::http

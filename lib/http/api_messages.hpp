// The message routes' handlers: enqueue (one or a batch), list and show, a worker's claim,
// succeed, fail, ack, extend and release, an operator's replay and dismiss of one message, a
// worker's recorded side effects and the attempts. Messages are answered in the hand-written JSON
// of json_codec (hot paths).
#pragma once


#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "http/json_codec.hpp"
#include "http/request.hpp"
#include "http/router.hpp"

namespace dlq::http {

class Lifecycle;

class MessageHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  MessageHandlers(core::QueueService& service, const Config& config,
                  const Lifecycle& lifecycle);

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
  R effect(const Request& req, const RouteMatch& m);  // POST .../effects (issue 36)
  R attempts(const Request& req, const RouteMatch& m);
  R versions(const Request& req, const RouteMatch& m);

 private:
  // A service outcome as the answer: the message (as its audience may see it) or the problem.
  Response answer(const Request& req, const Result<Message>& result, Audience audience) const;
  // A claim answered while the server shuts down ends its connection, so that the worker's next
  // claim finds a node that stays.
  void close_if_shutting_down(Response& r) const;

  core::QueueService& service_;
  const Config& config_;
  const Lifecycle& lifecycle_;
};

}  // namespace dlq::http

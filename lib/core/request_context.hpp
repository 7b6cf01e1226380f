// What the core knows about the request it serves, built once by the handler and passed to every
// core call: the instant it acts at, who asks, the request id for logs, and a watch on the client
// (a long-poll claim ends when its client goes away). No HTTP here.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "model/time.hpp"

namespace dlq::core {

// Watches the party waiting for an answer while the core waits on its behalf: tells when it went
// away, so a claim can end instead of taking a message nobody will receive.
class ClientWatch {
 public:
  virtual ~ClientWatch() = default;
  // Starts watching; `on_gone` runs (on any thread) when the client leaves.
  virtual void start(std::function<void()> on_gone) = 0;
  // Stops watching; afterwards gone() is final.
  virtual boost::asio::awaitable<void> stop() = 0;
  virtual bool gone() const = 0;
};

struct RequestContext {
  // The clock's reading when the handler built the context, or X-Now where testing allows it.
  TimeMs now = 0;
  bool pinned_now = false;  // `now` came from X-Now: later steps run on from that instant
  // Who asks: the access token's name ("anonymous" when tokens are not configured); none where
  // no request asks (tests, the server's own tasks).
  std::optional<std::string> actor;
  std::string request_id;
  ClientWatch* client = nullptr;  // none for callers that cannot be watched (tests, tasks)
};

}  // namespace dlq::core

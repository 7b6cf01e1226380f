#include "store/statement_watch.hpp"

#include "model/logging.hpp"
#include "store/connection.hpp"

namespace dlq::store {

StatementWatch::StatementWatch(std::chrono::milliseconds bound) : bound_(bound) {
  thread_ = std::thread([this] { loop(); });
}

StatementWatch::~StatementWatch() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void StatementWatch::add(Connection* c) {
  std::lock_guard lock(mu_);
  connections_.insert(c);
}

void StatementWatch::remove(Connection* c) {
  std::lock_guard lock(mu_);
  connections_.erase(c);
}

void StatementWatch::loop() {
  // Checking a tenth of the bound apart cuts a call off at most 10 % late.
  const auto period = std::max(std::chrono::milliseconds(50), bound_ / 10);
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stopping_; })) {
    auto now = std::chrono::steady_clock::now();
    for (Connection* c : connections_) {
      auto since = c->busy_since();
      if (since && now - *since > bound_ && c->interrupt()) {
        log::warn("database call exceeded its bound; cutting the connection",
                  {{"bound_ms", std::to_string(bound_.count())}});
      }
    }
  }
}

}  // namespace dlq::store

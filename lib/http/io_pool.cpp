// One io_context per I/O thread: see io_pool.hpp.
#include "http/io_pool.hpp"

#include <boost/asio/post.hpp>

namespace dlq::http {
namespace asio = boost::asio;

IoPool::IoPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    // Hint 1: one thread runs it, so handlers it posts to itself queue without waking anyone.
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    guards_.emplace_back(asio::make_work_guard(*contexts_.back()));
  }
}

IoPool::~IoPool() = default;

asio::io_context& IoPool::next() {
  asio::io_context& c = *contexts_[next_];
  next_ = (next_ + 1) % contexts_.size();
  return c;
}

void IoPool::run() {
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < contexts_.size(); ++i) {
    threads.emplace_back([c = contexts_[i].get()] { c->run(); });
  }
  contexts_.front()->run();
  for (auto& t : threads) t.join();
}

void IoPool::release() {
  // Each guard belongs to its context: reset it there, not from whichever thread asks.
  for (std::size_t i = 0; i < contexts_.size(); ++i) {
    asio::post(*contexts_[i], [this, i] { guards_[i].reset(); });
  }
}

void IoPool::stop() {
  for (auto& c : contexts_) c->stop();
}

}  // namespace dlq::http

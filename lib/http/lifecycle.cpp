// The counts and the shutdown's wait on them.
#include "http/lifecycle.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace dlq::http {
namespace asio = boost::asio;

Lifecycle::Lifecycle(asio::any_io_executor executor)
    : executor_(executor), wake_(std::move(executor)) {}

// The count drops first, then the flag is read; the shutdown sets the flag first, then reads the
// count (both sequentially consistent): either this sees the shutdown and wakes it, or the
// shutdown sees the count at zero and does not wait.
void Lifecycle::ended(std::atomic<std::size_t>& count) {
  if (count.fetch_sub(1) == 1 && shutting_down_.load()) {
    asio::post(executor_, [this] { wake_.cancel(); });
  }
}

asio::awaitable<bool> Lifecycle::until_none(const std::atomic<std::size_t>& count, Grace grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (count.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    wake_.expires_at(deadline);
    co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return count.load() == 0;
}

asio::awaitable<bool> Lifecycle::requests_drained(Grace grace) {
  co_return co_await until_none(requests_, grace);
}

asio::awaitable<bool> Lifecycle::connections_closed(Grace grace) {
  co_return co_await until_none(connections_, grace);
}

}  // namespace dlq::http

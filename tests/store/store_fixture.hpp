// A fresh store per test on the backend under test, and a way to wait for its awaitables from
// plain test code.
#pragma once

#include <future>
#include <memory>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "core/transitions.hpp"
#include "store/sql_store.hpp"
#include "support/temp_dir.hpp"

namespace dlq::test {

struct StoreFixture {
  StoreFixture();
  ~StoreFixture();

  // Another store (another dlqd node) on the same database.
  std::unique_ptr<store::SqlStore> open_another() const;
  // The same with options of the test's choosing (their target is the fixture's database).
  std::unique_ptr<store::SqlStore> open_another(store::SqlStoreOptions o) const;

  template <class T>
  T wait(boost::asio::awaitable<T> a) {
    auto f = boost::asio::co_spawn(ioc, std::move(a), boost::asio::use_future);
    ioc.restart();
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    return f.get();
  }

  Message insert(const std::string& queue, const std::string& payload, TimeMs now,
                 store::NewMessage extra = {});
  // Inserts, claims and fails a message once with max_retries 1: it is dead.
  Message dead_message(const std::string& queue, const std::string& payload,
                       store::NewMessage extra = {});
  // The same at a time of the test's choosing: inserted, claimed and failed at `at`, dead for the
  // reason `why` makes (retries_exhausted; non_retryable when why.retryable is false). Its queue
  // must hold no other due message, or the claim would take that one (it throws then).
  Message dead_message_at(const std::string& queue, const std::string& payload, TimeMs at,
                          store::NewMessage extra = {}, core::FailInput why = {});
  // Claims up to `max` messages of `queue` at `now` under `token`, with a 30 s lease.
  std::vector<Message> claim(const std::string& queue, TimeMs now, int max = 1,
                             const std::string& token = "0123456789abcdef0123456789abcdef");

  TempDir dir;
  std::string url;
  boost::asio::io_context ioc;
  std::unique_ptr<store::SqlStore> store;
};

}  // namespace dlq::test

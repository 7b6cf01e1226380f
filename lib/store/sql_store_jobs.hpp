// SqlStore's bridge between awaiting coroutines and the store threads: the job that carries an
// operation there and its result back, and the write/read templates that make one. Private to
// the SqlStore's own sources (sql_store.cpp, sql_store_desk.cpp): it brings Asio with it.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "store/sql_store.hpp"
#include "store/workers.hpp"

namespace dlq::store {
namespace detail {
namespace asio = boost::asio;

// A job whose result run() gives whole.
struct NoSettle {
  template <class R>
  void operator()(EntitySql&, R&) const {}
};

// A job that names no messages to lock ahead and may change any row (StoreJob::prepare).
struct NoPrepare {
  bool operator()(EntitySql&) const { return false; }
};

// Carries one operation to a store thread and its result back to the awaiting coroutine.
// `Settle` (writes only) completes the result after the group's before_commit (StoreJob::settle);
// `Prepare` (writes only) runs before the group's jobs do (StoreJob::prepare).
template <class R, class Fn, class Handler, class Settle = NoSettle, class Prepare = NoPrepare>
class Job final : public StoreJob {
 public:
  // `handback` (writes only) learns how long each result took to reach its coroutine.
  Job(Fn fn, Handler handler, Histogram* handback, Settle settle = {}, Prepare prepare = {})
      : fn_(std::move(fn)),
        settle_(std::move(settle)),
        prepare_(std::move(prepare)),
        handler_(std::move(handler)),
        handback_(handback),
        work_(asio::prefer(asio::get_associated_executor(handler_),
                           asio::execution::outstanding_work.tracked)) {}

  void run(EntitySql& sql) override { result_ = fn_(sql); }
  void settle(EntitySql& sql) override { settle_(sql, result_); }
  bool prepare(EntitySql& sql) override { return prepare_(sql); }

  void complete(std::exception_ptr error) override {
    // The tracked work travels with the handler and ends where it runs: a copy left on this
    // (store) thread could outlive the awaiting io_context.
    auto executor = asio::get_associated_executor(handler_);
    using Clock = std::chrono::steady_clock;
    auto done = handback_ ? Clock::now() : Clock::time_point{};
    asio::post(executor, [handler = std::move(handler_), work = std::move(work_), error,
                          result = std::move(result_), handback = handback_, done]() mutable {
      if (handback) handback->observe(Clock::now() - done);
      std::move(handler)(error, std::move(result));
    });
  }

 private:
  Fn fn_;
  Settle settle_;
  Prepare prepare_;
  Handler handler_;
  Histogram* handback_;
  R result_{};
  decltype(asio::prefer(asio::get_associated_executor(std::declval<Handler&>()),
                        asio::execution::outstanding_work.tracked)) work_;
};

}  // namespace detail

template <class R, class Fn>
awaitable<R> SqlStore::write(Fn fn) {
  return write<R>(std::move(fn), detail::NoSettle{});
}

template <class R, class Fn, class Settle>
awaitable<R> SqlStore::write(Fn fn, Settle settle) {
  return write<R>(std::move(fn), std::move(settle), detail::NoPrepare{});
}

template <class R, class Fn, class Settle, class Prepare>
awaitable<R> SqlStore::write(Fn fn, Settle settle, Prepare prepare) {
  auto initiate = [this, settle = std::move(settle), prepare = std::move(prepare)](
                      auto handler, Fn f) mutable {
    writer_->submit(std::make_unique<detail::Job<R, Fn, decltype(handler), Settle, Prepare>>(
        std::move(f), std::move(handler), &writer_->handback_seconds(), std::move(settle),
        std::move(prepare)));
  };
  return detail::asio::async_initiate<const detail::asio::use_awaitable_t<>&,
                                      void(std::exception_ptr, R)>(
      std::move(initiate), detail::asio::use_awaitable, std::move(fn));
}

template <class R, class Fn>
awaitable<R> SqlStore::read(Fn fn) {
  auto initiate = [this](auto handler, Fn f) {
    readers_->submit(std::make_unique<detail::Job<R, Fn, decltype(handler)>>(
        std::move(f), std::move(handler), nullptr));
  };
  return detail::asio::async_initiate<const detail::asio::use_awaitable_t<>&,
                                      void(std::exception_ptr, R)>(
      std::move(initiate), detail::asio::use_awaitable, std::move(fn));
}

}  // namespace dlq::store

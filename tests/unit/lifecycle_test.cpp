// The server's lifecycle without a server: the shutdown's waits end when the last request (or
// connection) ends, from any thread, not on a poll; and when the grace runs out.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "http/lifecycle.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using dlq::http::Lifecycle;
using Clock = std::chrono::steady_clock;

namespace {

// Runs `wait` on the io_context (one thread, as dlqd's main context) until it answers.
template <class Wait>
bool run(asio::io_context& ioc, Wait wait) {
  auto answer = asio::co_spawn(ioc, wait(), asio::use_future);
  ioc.restart();
  ioc.run();
  return answer.get();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_AUTO_TEST_CASE(it_counts_and_says_when_it_shuts_down) {
  asio::io_context ioc;
  Lifecycle life(ioc.get_executor());
  BOOST_TEST(!life.shutting_down());
  life.connection_opened();
  life.request_started();
  life.request_started();
  BOOST_TEST(life.requests_in_flight() == 2u);
  BOOST_TEST(life.connections() == 1u);
  life.request_ended();
  BOOST_TEST(life.requests_in_flight() == 1u);
  life.begin_shutdown();
  BOOST_TEST(life.shutting_down());
}

BOOST_AUTO_TEST_CASE(with_nothing_in_flight_the_waits_end_at_once) {
  asio::io_context ioc;
  Lifecycle life(ioc.get_executor());
  life.begin_shutdown();
  auto started = Clock::now();
  BOOST_TEST(run(ioc, [&] { return life.requests_drained(10s); }));
  BOOST_TEST(run(ioc, [&] { return life.connections_closed(10s); }));
  BOOST_TEST((Clock::now() - started < 1s));
}

BOOST_AUTO_TEST_CASE(the_last_request_to_end_wakes_the_wait_from_another_thread) {
  asio::io_context ioc;
  Lifecycle life(ioc.get_executor());
  life.request_started();
  life.request_started();
  life.begin_shutdown();
  std::thread sessions([&life] {
    std::this_thread::sleep_for(50ms);
    life.request_ended();
    std::this_thread::sleep_for(50ms);
    life.request_ended();
  });
  auto started = Clock::now();
  bool drained = run(ioc, [&] { return life.requests_drained(30s); });
  auto waited = Clock::now() - started;
  sessions.join();
  BOOST_TEST(drained);
  BOOST_TEST(life.requests_in_flight() == 0u);
  BOOST_TEST((waited >= 90ms));
  BOOST_TEST((waited < 5s));  // woken, not left to the grace
}

BOOST_AUTO_TEST_CASE(the_last_connection_to_close_wakes_the_wait) {
  asio::io_context ioc;
  Lifecycle life(ioc.get_executor());
  life.connection_opened();
  life.begin_shutdown();
  std::thread session([&life] {
    std::this_thread::sleep_for(50ms);
    life.connection_closed();
  });
  auto started = Clock::now();
  bool closed = run(ioc, [&] { return life.connections_closed(30s); });
  session.join();
  BOOST_TEST(closed);
  BOOST_TEST((Clock::now() - started < 5s));
}

BOOST_AUTO_TEST_CASE(the_grace_bounds_the_wait) {
  asio::io_context ioc;
  Lifecycle life(ioc.get_executor());
  life.request_started();  // never ends
  life.begin_shutdown();
  auto started = Clock::now();
  BOOST_TEST(!run(ioc, [&] { return life.requests_drained(200ms); }));
  auto waited = Clock::now() - started;
  BOOST_TEST((waited >= 200ms));
  BOOST_TEST((waited < 3s));
  BOOST_TEST(life.requests_in_flight() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

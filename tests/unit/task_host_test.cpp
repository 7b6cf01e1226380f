// The TaskHost with a ManualClock: tasks run at start and on their interval as the clock moves,
// failures are retried with backoff, leader-only tasks follow the leadership, and stop() waits
// for a running body.
#include <boost/test/unit_test.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/task_host.hpp"

namespace asio = boost::asio;
using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kStart = 4102444800000;  // 2100-01-01

struct Harness {
  ManualClock clock{kStart};
  asio::io_context ioc;
  TaskHost host{ioc.get_executor(), clock};
  std::vector<std::string> log;  // what happened, in order (all on the io_context's one thread)

  template <class F>
  void run(F body) {
    std::exception_ptr failure;
    auto wrapped = [this, body]() -> asio::awaitable<void> {
      co_await body(*this);
      co_await host.stop(std::chrono::seconds(5));
    };
    asio::co_spawn(ioc, wrapped(), [&failure](std::exception_ptr e) { failure = e; });
    ioc.run();
    if (failure) std::rethrow_exception(failure);
  }

  asio::awaitable<void> sleep_ms(int ms) {
    asio::steady_timer t(ioc, std::chrono::milliseconds(ms));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }

  // Moves the clock and lets the host look (a few real milliseconds).
  asio::awaitable<void> advance(TimeMs ms) {
    clock.advance(ms);
    host.clock_moved();
    co_await sleep_ms(30);
  }

  std::uint64_t runs(const std::string& name) const {
    for (const auto& s : host.stats()) {
      if (s.name == name) return s.runs;
    }
    throw std::runtime_error("no task " + name);
  }
  std::uint64_t failures(const std::string& name) const {
    for (const auto& s : host.stats()) {
      if (s.name == name) return s.failures;
    }
    throw std::runtime_error("no task " + name);
  }
};

TaskSpec counting(std::string name, TaskScope scope, TimeMs interval) {
  TaskSpec spec;
  spec.name = std::move(name);
  spec.scope = scope;
  spec.interval_ms = interval;
  spec.body = [](const TaskContext&) -> asio::awaitable<void> { co_return; };
  return spec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(task_host)

BOOST_AUTO_TEST_CASE(a_task_runs_at_start_then_once_per_interval_of_the_clock) {
  Harness h;
  h.host.add(counting("tick", TaskScope::every_node, 10000));
  h.host.start();
  h.run([](Harness& h) -> asio::awaitable<void> {
    co_await h.sleep_ms(30);
    BOOST_TEST(h.runs("tick") == 1u);
    co_await h.advance(9999);
    BOOST_TEST(h.runs("tick") == 1u);  // not due yet
    co_await h.advance(1);
    BOOST_TEST(h.runs("tick") == 2u);
    co_await h.advance(10000);
    BOOST_TEST(h.runs("tick") == 3u);
  });
}

BOOST_AUTO_TEST_CASE(a_failing_task_is_retried_with_backoff_and_never_stops_the_host) {
  Harness h;
  int calls = 0;
  TaskSpec flaky = counting("flaky", TaskScope::every_node, 60000);
  flaky.body = [&calls](const TaskContext&) -> asio::awaitable<void> {
    if (++calls <= 2) throw std::runtime_error("database went away");
    co_return;
  };
  h.host.add(std::move(flaky));
  h.host.add(counting("steady", TaskScope::every_node, 1000));
  h.host.start();
  h.run([&calls](Harness& h) -> asio::awaitable<void> {
    co_await h.sleep_ms(30);
    BOOST_TEST(calls == 1);
    BOOST_TEST(h.failures("flaky") == 1u);
    co_await h.advance(999);
    BOOST_TEST(calls == 1);  // first retry after 1 s
    co_await h.advance(1);
    BOOST_TEST(calls == 2);
    BOOST_TEST(h.failures("flaky") == 2u);
    co_await h.advance(1999);
    BOOST_TEST(calls == 2);  // then after 2 s
    co_await h.advance(1);
    BOOST_TEST(calls == 3);  // succeeded: back on its interval
    BOOST_TEST(h.failures("flaky") == 2u);
    co_await h.advance(59999);
    BOOST_TEST(calls == 3);
    co_await h.advance(1);
    BOOST_TEST(calls == 4);
    BOOST_TEST(h.runs("flaky") == 4u);
    BOOST_TEST(h.runs("steady") == 4u);  // the other task went on all along (once per move)
  });
}

BOOST_AUTO_TEST_CASE(leader_only_tasks_run_only_while_this_node_leads) {
  Harness h;
  std::vector<bool> seen_leading;
  TaskSpec leader = counting("sweep", TaskScope::leader_only, 1000);
  leader.body = [&seen_leading](const TaskContext& ctx) -> asio::awaitable<void> {
    seen_leading.push_back(ctx.leading());
    co_return;
  };
  h.host.add(std::move(leader));
  h.host.add(counting("everywhere", TaskScope::every_node, 1000));
  h.host.start();
  h.run([&seen_leading](Harness& h) -> asio::awaitable<void> {
    co_await h.sleep_ms(30);
    BOOST_TEST(h.runs("everywhere") == 1u);
    BOOST_TEST(h.runs("sweep") == 0u);  // a follower
    co_await h.advance(5000);
    BOOST_TEST(h.runs("sweep") == 0u);

    h.host.set_leader(true);
    co_await h.sleep_ms(30);
    BOOST_TEST(h.runs("sweep") == 1u);  // at once on gaining the leadership
    co_await h.advance(1000);
    BOOST_TEST(h.runs("sweep") == 2u);

    h.host.set_leader(false);
    co_await h.sleep_ms(30);
    auto everywhere = h.runs("everywhere");
    co_await h.advance(1000);
    co_await h.advance(1000);
    BOOST_TEST(h.runs("sweep") == 2u);  // stopped as soon as the loss was reported
    BOOST_TEST(h.runs("everywhere") >= everywhere + 2);
    BOOST_TEST(seen_leading == std::vector<bool>({true, true}));
  });
}

BOOST_AUTO_TEST_CASE(a_body_sees_the_leadership_end_while_it_runs) {
  Harness h;
  std::vector<int> units;
  TaskSpec replay = counting("replay-run", TaskScope::leader_only, 60000);
  replay.body = [&units, &h](const TaskContext& ctx) -> asio::awaitable<void> {
    for (int unit = 1; unit <= 100 && ctx.leading(); ++unit) {
      units.push_back(unit);
      co_await h.sleep_ms(10);
    }
  };
  h.host.add(std::move(replay));
  h.host.set_leader(true);
  h.host.start();
  h.run([&units](Harness& h) -> asio::awaitable<void> {
    co_await h.sleep_ms(35);
    h.host.set_leader(false);
    co_await h.sleep_ms(100);
    BOOST_TEST(!units.empty());
    BOOST_TEST(units.size() < 20u);  // it stopped between units, long before 100
    BOOST_TEST(h.runs("replay-run") == 1u);
  });
}

BOOST_AUTO_TEST_CASE(stop_waits_for_a_running_body_and_nothing_runs_after_it) {
  Harness h;
  TaskSpec slow = counting("slow", TaskScope::every_node, 1000);
  slow.body = [&h](const TaskContext&) -> asio::awaitable<void> {
    h.log.push_back("body started");
    co_await h.sleep_ms(200);
    h.log.push_back("body finished");
  };
  h.host.add(std::move(slow));
  h.host.start();
  h.run([](Harness& h) -> asio::awaitable<void> {
    co_await h.sleep_ms(50);  // the body is running now
    bool all_ended = co_await h.host.stop(std::chrono::seconds(5));
    h.log.push_back("stopped");
    BOOST_TEST(all_ended);
    h.host.run_now("slow");
    co_await h.advance(5000);
    BOOST_TEST(h.runs("slow") == 1u);
    BOOST_TEST(h.log == std::vector<std::string>({"body started", "body finished", "stopped"}));
  });
}

BOOST_AUTO_TEST_CASE(run_now_runs_a_task_before_its_interval) {
  Harness h;
  h.host.add(counting("runner", TaskScope::every_node, 60000));
  h.host.start();
  h.run([](Harness& h) -> asio::awaitable<void> {
    co_await h.sleep_ms(30);
    BOOST_TEST(h.runs("runner") == 1u);
    h.host.run_now("runner");
    co_await h.sleep_ms(30);
    BOOST_TEST(h.runs("runner") == 2u);
  });
}

BOOST_AUTO_TEST_SUITE_END()

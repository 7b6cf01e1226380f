// The I/O thread pool: how many threads it runs, and that each context gets a thread of its own.
#include <boost/test/unit_test.hpp>

#include <sched.h>

#include <mutex>
#include <set>
#include <thread>

#include <boost/asio/post.hpp>

#include "http/io_pool.hpp"

using dlq::http::IoPool;

namespace {

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  BOOST_REQUIRE_EQUAL(sched_getaffinity(0, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(io_pool)

BOOST_AUTO_TEST_CASE(threads_are_capped_at_the_cpus_the_process_may_use) {
  int cpus = IoPool::available_cpus();
  BOOST_TEST(cpus >= 1);
  BOOST_TEST(cpus <= affinity_cpus());  // a cgroup quota may lower it further
  BOOST_TEST(IoPool::io_threads(0) == cpus);
  BOOST_TEST(IoPool::io_threads(1) == 1);
  BOOST_TEST(IoPool::io_threads(cpus + 14) == cpus);
}

BOOST_AUTO_TEST_CASE(the_affinity_mask_lowers_the_count) {
  cpu_set_t original;
  CPU_ZERO(&original);
  BOOST_REQUIRE_EQUAL(sched_getaffinity(0, sizeof original, &original), 0);
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  BOOST_REQUIRE_EQUAL(sched_setaffinity(0, sizeof one, &one), 0);  // as `taskset -c N` would
  int pinned = IoPool::available_cpus();
  int threads = IoPool::io_threads(16);
  sched_setaffinity(0, sizeof original, &original);
  BOOST_TEST(pinned == 1);
  BOOST_TEST(threads == 1);
}

BOOST_AUTO_TEST_CASE(each_context_runs_on_a_thread_of_its_own_until_released) {
  IoPool pool(3);
  BOOST_REQUIRE_EQUAL(pool.size(), 3u);
  // Round-robin over every context, the main one included.
  std::set<boost::asio::io_context*> seen;
  for (int i = 0; i < 3; ++i) seen.insert(&pool.next());
  BOOST_TEST(seen.size() == 3u);
  BOOST_TEST(seen.count(&pool.main()) == 1u);
  BOOST_TEST(&pool.next() == &pool.main());

  std::mutex mu;
  std::set<std::thread::id> threads;
  for (auto* context : seen) {
    boost::asio::post(*context, [&] {
      std::lock_guard lock(mu);
      threads.insert(std::this_thread::get_id());
    });
  }
  // Without work each context would still wait (its guard); release() lets run() return.
  boost::asio::post(pool.main(), [&] { pool.release(); });
  pool.run();
  BOOST_TEST(threads.size() == 3u);
  BOOST_TEST(threads.count(std::this_thread::get_id()) == 1u);  // context 0 ran on the caller
}

BOOST_AUTO_TEST_SUITE_END()

// The scrape's cache of the database's message counts (ops::Metrics): kept for
// metrics.cache_seconds, so that frequent scrapes cost one query per that time.
#include <boost/test/unit_test.hpp>

#include "model/time.hpp"
#include "ops/metrics.hpp"

using namespace dlq;

namespace {

std::vector<store::QueueStats> counts(const std::string& queue, long long ready) {
  store::QueueStats s;
  s.queue = queue;
  s.ready = ready;
  return {s};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_cache)

BOOST_AUTO_TEST_CASE(queue_counts_are_kept_for_max_age) {
  ops::Metrics metrics(10);
  ManualClock clock(1'700'000'000'000);
  const TimeMs max_age = 1000;
  BOOST_TEST(!metrics.cached_queue_stats(clock.now(), max_age).has_value());  // nothing kept yet

  metrics.keep_queue_stats(counts("q", 5), clock.now());
  clock.advance(999);
  auto kept = metrics.cached_queue_stats(clock.now(), max_age);
  BOOST_TEST_REQUIRE(kept.has_value());
  BOOST_TEST_REQUIRE(kept->size() == 1u);
  BOOST_TEST(kept->front().queue == "q");
  BOOST_TEST(kept->front().ready == 5);

  clock.advance(1);  // max_age old: a scrape reads the database again
  BOOST_TEST(!metrics.cached_queue_stats(clock.now(), max_age).has_value());
  metrics.keep_queue_stats(counts("q", 6), clock.now());
  BOOST_TEST(metrics.cached_queue_stats(clock.now(), max_age)->front().ready == 6);
  // A max_age of 0 keeps nothing.
  BOOST_TEST(!metrics.cached_queue_stats(clock.now(), 0).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

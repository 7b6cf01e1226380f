// The scrape's cache of the database's counts (ops::Metrics): messages per queue and the
// incidents' gauges, kept for metrics.cache_seconds, so that frequent scrapes cost one read per
// that time.
#include <boost/test/unit_test.hpp>

#include "model/time.hpp"
#include "ops/metrics.hpp"

using namespace dlq;

namespace {

ops::Metrics::DatabaseCounts counts(const std::string& queue, long long ready) {
  ops::Metrics::DatabaseCounts c;
  store::QueueStats s;
  s.queue = queue;
  s.ready = ready;
  c.queues = {s};
  c.incidents.open = ready + 1;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_cache)

BOOST_AUTO_TEST_CASE(queue_counts_are_kept_for_max_age) {
  ops::Metrics metrics(10);
  ManualClock clock(1'700'000'000'000);
  const TimeMs max_age = 1000;
  BOOST_TEST(!metrics.cached_counts(clock.now(), max_age).has_value());  // nothing kept yet

  metrics.keep_counts(counts("q", 5), clock.now());
  clock.advance(999);
  auto kept = metrics.cached_counts(clock.now(), max_age);
  BOOST_TEST_REQUIRE(kept.has_value());
  BOOST_TEST_REQUIRE(kept->queues.size() == 1u);
  BOOST_TEST(kept->queues.front().queue == "q");
  BOOST_TEST(kept->queues.front().ready == 5);
  BOOST_TEST(kept->incidents.open == 6);

  clock.advance(1);  // max_age old: a scrape reads the database again
  BOOST_TEST(!metrics.cached_counts(clock.now(), max_age).has_value());
  metrics.keep_counts(counts("q", 6), clock.now());
  BOOST_TEST(metrics.cached_counts(clock.now(), max_age)->queues.front().ready == 6);
  BOOST_TEST(metrics.cached_counts(clock.now(), max_age)->incidents.open == 7);
  // A max_age of 0 keeps nothing.
  BOOST_TEST(!metrics.cached_counts(clock.now(), 0).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

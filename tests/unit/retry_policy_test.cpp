#include <boost/test/unit_test.hpp>

#include "core/retry_policy.hpp"

using namespace dlq;
using dlq::core::backoff_delay;

BOOST_AUTO_TEST_SUITE(retry_policy)

BOOST_AUTO_TEST_CASE(defaults_reproduce_the_reference_schedule) {
  BackoffPolicy p;
  auto none = [] { return 0.0; };
  for (int n = 1; n <= 20; ++n) {
    TimeMs expected = std::min<TimeMs>(TimeMs{1} << n, 3600) * 1000;
    BOOST_TEST(backoff_delay(p, n, none) == expected, "n=" << n);
  }
  BOOST_TEST(backoff_delay(p, 1000, none) == 3600 * 1000);
}

BOOST_AUTO_TEST_CASE(initial_multiplier_and_cap) {
  BackoffPolicy p{0.5, 3, 10, 0};
  auto none = [] { return 0.0; };
  BOOST_TEST(backoff_delay(p, 1, none) == 500);
  BOOST_TEST(backoff_delay(p, 2, none) == 1500);
  BOOST_TEST(backoff_delay(p, 3, none) == 4500);
  BOOST_TEST(backoff_delay(p, 4, none) == 10000);
}

BOOST_AUTO_TEST_CASE(jitter_stays_within_bounds) {
  BackoffPolicy p{2, 2, 3600, 1.5};
  BOOST_TEST(backoff_delay(p, 1, [] { return 0.0; }) == 2000);
  BOOST_TEST(backoff_delay(p, 1, [] { return 0.999999; }) == 3500);
  auto random = core::default_unit_random();
  for (int i = 0; i < 1000; ++i) {
    TimeMs d = backoff_delay(p, 3, random);
    BOOST_TEST((d >= 8000 && d <= 9500));
  }
}

BOOST_AUTO_TEST_SUITE_END()

#include <boost/test/unit_test.hpp>

#include "model/time.hpp"

using namespace dlq;

BOOST_AUTO_TEST_SUITE(time_format)

BOOST_AUTO_TEST_CASE(formats_utc_with_milliseconds) {
  BOOST_TEST(format_rfc3339(0) == "1970-01-01T00:00:00.000Z");
  BOOST_TEST(format_rfc3339(1780272002000) == "2026-06-01T00:00:02.000Z");
  BOOST_TEST(format_rfc3339(1780272002007) == "2026-06-01T00:00:02.007Z");
  BOOST_TEST(format_rfc3339(951782400000) == "2000-02-29T00:00:00.000Z");
  BOOST_TEST(format_rfc3339(-1) == "1969-12-31T23:59:59.999Z");
  BOOST_TEST(format_rfc3339(kMaxTimeMs) == "9999-12-31T23:59:59.999Z");
}

BOOST_AUTO_TEST_CASE(parses_rfc3339_variants) {
  BOOST_TEST(*parse_timestamp("2026-06-01T00:00:02Z") == 1780272002000);
  BOOST_TEST(*parse_timestamp("2026-06-01T00:00:02.5Z") == 1780272002500);
  BOOST_TEST(*parse_timestamp("2026-06-01T00:00:02.123456789Z") == 1780272002123);
  BOOST_TEST(*parse_timestamp("2026-06-01t00:00:02z") == 1780272002000);
  BOOST_TEST(*parse_timestamp("2026-06-01T02:00:02+02:00") == 1780272002000);
  BOOST_TEST(*parse_timestamp("2026-05-31T23:00:02-01:00") == 1780272002000);
  BOOST_TEST(*parse_timestamp("2026-06-01 00:00:02") == 1780272002000);
  BOOST_TEST(*parse_timestamp("2026-06-01 00:00:02Z") == 1780272002000);
}

BOOST_AUTO_TEST_CASE(rejects_malformed_times) {
  for (const char* bad : {"", "2026-06-01", "2026-06-01T00:00:02", "2026-13-01T00:00:00Z",
                          "2026-02-29T00:00:00Z", "2026-06-01T24:00:00Z", "2026-06-01T00:60:00Z",
                          "2026-06-01T00:00:02.Z", "2026-06-01T00:00:02+0200", "26-06-01T00:00:02Z",
                          "2026-06-01T00:00:02Z junk", "2026-06-01X00:00:02Z"}) {
    BOOST_TEST(!parse_timestamp(bad).has_value(), bad);
  }
}

BOOST_AUTO_TEST_CASE(round_trips) {
  for (TimeMs t : {TimeMs{0}, TimeMs{1}, TimeMs{4102444800123}, kMaxTimeMs}) {
    BOOST_TEST(*parse_timestamp(format_rfc3339(t)) == t);
  }
}

BOOST_AUTO_TEST_CASE(manual_clock_moves_only_when_told) {
  ManualClock clock(1000);
  BOOST_TEST(clock.now() == 1000);
  clock.advance(500);
  BOOST_TEST(clock.now() == 1500);
  clock.set(42);
  BOOST_TEST(clock.now() == 42);
}

BOOST_AUTO_TEST_SUITE_END()

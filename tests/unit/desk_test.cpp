// The desk's pure rules: the canonical text of a filter (what a confirmation must repeat), and
// numbers as people write them.
#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "core/desk.hpp"

namespace json = boost::json;
using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kT = 4102444800000;  // 2100-01-01T00:00:00.000Z

}  // namespace

BOOST_AUTO_TEST_SUITE(desk)

BOOST_AUTO_TEST_CASE(an_empty_filter_is_an_empty_object) {
  BOOST_TEST(canonical_filter(store::DeadFilter{}) == "{}");
}

BOOST_AUTO_TEST_CASE(a_filter_lists_the_members_that_are_set_in_the_documented_order) {
  // Set in another order than the canonical one: the text does not depend on it.
  store::DeadFilter f;
  f.ids = {3, 1, 2};
  f.until = kT + 1500;
  f.since = kT;
  f.dead_reason = DeadReason::retries_exhausted;
  f.error_class = ErrorClass::transient;
  f.job_type = "send";
  f.queue = "emails";
  BOOST_TEST(canonical_filter(f) ==
             R"({"queue":"emails","job_type":"send","error_class":"transient",)"
             R"("dead_reason":"retries_exhausted","since":"2100-01-01T00:00:00.000Z",)"
             R"("until":"2100-01-01T00:00:01.500Z","ids":[3,1,2]})");

  store::DeadFilter some;
  some.dead_reason = DeadReason::lease_expired;
  some.queue = "q";
  BOOST_TEST(canonical_filter(some) == R"({"queue":"q","dead_reason":"lease_expired"})");
}

BOOST_AUTO_TEST_CASE(filters_with_the_same_members_have_the_same_text_and_others_differ) {
  store::DeadFilter a;
  a.queue = "q";
  a.since = kT;
  store::DeadFilter b = a;
  BOOST_TEST(canonical_filter(a) == canonical_filter(b));
  b.since = kT + 1;  // a millisecond later is another filter
  BOOST_TEST(canonical_filter(a) != canonical_filter(b));
  store::DeadFilter c = a;
  c.job_type = "x";
  BOOST_TEST(canonical_filter(a) != canonical_filter(c));
}

BOOST_AUTO_TEST_CASE(whole_numbers_are_written_as_integers_and_fractions_stay_fractions) {
  BOOST_TEST(json::serialize(json_number(10)) == "10");
  BOOST_TEST(json::serialize(json_number(0)) == "0");
  BOOST_TEST(json_number(0.5).is_double());
  BOOST_TEST(json_number(0.5).as_double() == 0.5);
  BOOST_TEST(json_number(2.25).as_double() == 2.25);
  BOOST_TEST(json_number(1e20).is_double());  // too large to be an exact integer
}

BOOST_AUTO_TEST_SUITE_END()

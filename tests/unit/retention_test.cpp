// Retention's cut-offs without a database: which deletes a sweep makes, over which queues, from
// which instant — the global retention for the queues without their own, then each queue with
// its own merged over it; an age of 0 keeps forever.
#include <boost/test/unit_test.hpp>

#include "core/retention.hpp"

using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kNow = 4102444800000;  // 2100-01-01

std::string describe(const RetentionCut& c) {
  std::string except;
  for (const auto& q : c.except) except += (except.empty() ? "" : ",") + q;
  return (c.queue ? *c.queue : "*") + (except.empty() ? "" : " except " + except) + " " +
         std::string(to_string(c.status)) + " older than " + std::to_string(kNow - c.before) +
         " ms";
}

std::vector<std::string> describe(const std::vector<RetentionCut>& cuts) {
  std::vector<std::string> out;
  for (const auto& c : cuts) out.push_back(describe(c));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(retention)

BOOST_AUTO_TEST_CASE(the_defaults_cut_every_queue_at_a_week_a_week_and_thirty_days) {
  auto cuts = retention_cuts(Config{}, kNow);
  BOOST_TEST(describe(cuts) == std::vector<std::string>({
                                   "* succeeded older than 604800000 ms",
                                   "* dismissed older than 604800000 ms",
                                   "* dead older than 2592000000 ms",
                               }));
  BOOST_TEST(cuts.at(2).older_than_seconds == 2592000);
  BOOST_TEST(!cuts.at(0).queue.has_value());
}

BOOST_AUTO_TEST_CASE(queues_with_their_own_retention_are_cut_on_their_own) {
  Config c = parse_config(R"({"retention": {"dismissed_seconds": 0, "succeeded_seconds": 3600},
                              "queues": {"fast": {"retention": {"succeeded_seconds": 60}},
                                         "keep": {"retention": {"dead_seconds": 0}},
                                         "plain": {"max_retries": 5}}})");
  BOOST_TEST(describe(retention_cuts(c, kNow)) ==
             std::vector<std::string>({
                 // Every other queue ("plain" has no retention of its own) under the global one;
                 // dismissed ones are kept forever.
                 "* except fast,keep succeeded older than 3600000 ms",
                 "* except fast,keep dead older than 2592000000 ms",
                 // Its own age for succeeded, the global one for the rest.
                 "fast succeeded older than 60000 ms",
                 "fast dead older than 2592000000 ms",
                 // Its dead ones kept forever.
                 "keep succeeded older than 3600000 ms",
             }));
}

BOOST_AUTO_TEST_CASE(fractional_ages_are_cut_to_the_millisecond) {
  Config c = parse_config(R"({"retention": {"succeeded_seconds": 1.5, "dismissed_seconds": 0,
                                            "dead_seconds": 0}})");
  auto cuts = retention_cuts(c, kNow);
  BOOST_REQUIRE_EQUAL(cuts.size(), 1u);
  BOOST_TEST(cuts[0].before == kNow - 1500);
  BOOST_TEST(cuts[0].older_than_seconds == 1.5);
  // Nothing at all is cut when every age is 0.
  Config forever = parse_config(R"({"retention": {"succeeded_seconds": 0, "dismissed_seconds": 0,
                                                  "dead_seconds": 0}})");
  BOOST_TEST(retention_cuts(forever, kNow).empty());
}

BOOST_AUTO_TEST_SUITE_END()

// Answers the API builds as values: an acknowledgement item's status is the one its problem
// would have (one map, status_for).
#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "http/problem.hpp"

namespace json = boost::json;
using namespace dlq;
using namespace dlq::http;

BOOST_AUTO_TEST_SUITE(answers)

BOOST_AUTO_TEST_CASE(an_error_has_one_status_for_problems_and_ack_items) {
  const std::string base = "https://dlq.example/problems";
  const std::string path = "/queues/q/ack";
  ProblemContext pc{base, path};
  for (Errc code : {Errc::unknown_queue, Errc::message_not_found, Errc::invalid_state,
                    Errc::lease_lost, Errc::already_succeeded, Errc::idempotency_conflict,
                    Errc::preview_stale, Errc::validation_failed, Errc::replay_not_found}) {
    BOOST_TEST(status_for(code) == problem_from_error(pc, Error(code, "e")).status);
  }
  BOOST_TEST(status_for(Errc::lease_lost) == 409);
  BOOST_TEST(status_for(Errc::message_not_found) == 404);
  BOOST_TEST(status_for(Errc::validation_failed) == 422);
}

BOOST_AUTO_TEST_SUITE_END()

// Issue 16, framing and routing answers (defect 7): 405 on a literal segment.
#include <boost/test/unit_test.hpp>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(a_literal_segment_wins_over_an_id_for_405) {
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/queues/q/messages/batch");
  BOOST_TEST(res.status == 405);
  BOOST_TEST(res.header("allow") == "POST");
  BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/method-not-allowed");
  std::string q = fresh_queue("batch");
  auto batch = c.post("/queues/" + q + "/messages/batch",
                      json::object{{"messages", json::array{json::object{{"payload", "x"}}}}});
  BOOST_TEST(batch.status == 201);
  BOOST_TEST(c.get(message_path(q, batch.json().at("messages").at(0).at("id").as_int64())).status == 200);
}

BOOST_AUTO_TEST_SUITE_END()

// Issue 16, framing and routing answers (defect 7): `instance` in ASCII, 405 on a literal
// segment.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::string raw(const std::string& bytes) { return HttpClient(shared_dlqd().port()).raw(bytes, 3000); }

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(instance_percent_encodes_bytes_outside_printable_ascii) {
  // Raw bytes above 0x7E (Beast refuses controls in a target) are percent-encoded, so the body
  // is valid JSON text; problem_instance parses it with Boost.JSON, which checks UTF-8.
  std::string reply = raw("GET /queues/\xff\xfe/messages HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 404 Not Found");
  BOOST_TEST(problem_instance(reply) == "/queues/%FF%FE/messages");
  reply = raw("GET /queues/caf\xc3\xa9%20x/messages/1 HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(problem_instance(reply) == "/queues/caf%C3%A9%20x/messages/1");
  BOOST_TEST(healthy(shared_dlqd().port()));
}

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

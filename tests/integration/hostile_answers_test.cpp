// Issue 16, answers: a parked long-poll keeps watching its client after pipelined bytes
// (defect 6).
#include <boost/test/unit_test.hpp>

#include <thread>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

using namespace dlq::test;
using std::chrono::milliseconds;

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(a_parked_claim_notices_a_client_that_pipelined_and_left) {
  std::string q = fresh_queue("watch");
  std::string body = R"({"wait_seconds": 30})";
  std::string park = "POST /queues/" + q + "/claim HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body;
  {
    // One byte of a next request, then the client hangs up.
    RawConnection client(shared_dlqd().port());
    BOOST_REQUIRE(client.send(park));
    std::this_thread::sleep_for(milliseconds(300));
    BOOST_REQUIRE(client.send("G"));
    std::this_thread::sleep_for(milliseconds(300));
  }
  {
    // More pipelined bytes than the connection buffers: treated as gone as well.
    RawConnection client(shared_dlqd().port());
    BOOST_REQUIRE(client.send(park));
    std::this_thread::sleep_for(milliseconds(300));
    client.flood(std::string(16 * 1024, 'G'), 256 * 1024);
    std::this_thread::sleep_for(milliseconds(300));
  }
  std::this_thread::sleep_for(milliseconds(300));
  HttpClient c(shared_dlqd().port());
  auto m = enqueue(c, q, "for a live worker");
  std::this_thread::sleep_for(milliseconds(500));
  // Nobody claimed it for the departed clients.
  BOOST_TEST(str(c.get(message_path(q, m.at("id").as_int64())).json(), "status") == "pending");
  BOOST_TEST(claim(c, q).json().at("claimed").as_bool());

  // A request pipelined behind a long-poll is still answered after it.
  RawConnection client(shared_dlqd().port());
  std::string short_wait = R"({"wait_seconds": 1})";
  BOOST_REQUIRE(client.send("POST /queues/" + q + "/claim HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                            std::to_string(short_wait.size()) + "\r\n\r\n" + short_wait));
  std::this_thread::sleep_for(milliseconds(300));
  BOOST_REQUIRE(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  client.read(5000);
  BOOST_TEST(client.received().find(R"({"claimed":false,"message":null})") != std::string::npos);
  BOOST_TEST(client.received().find(R"({"status":"ok"})") != std::string::npos);
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_SUITE_END()

// Issue 16, answers: a list answer of large messages is streamed, so clients that do not read
// cannot pin its text, and a write that makes no progress ends at limits.write_timeout_seconds
// (defect 3); a parked long-poll keeps watching its client after pipelined bytes (defect 6).
#include <boost/test/unit_test.hpp>

#include <thread>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;
using std::chrono::milliseconds;

namespace {

// Control characters are written as six-byte escapes: each message's text is ~1 MiB, from a
// payload of 170,000 bytes sent in a body just under the 1 MiB body limit.
constexpr int kMessages = 64;
constexpr std::size_t kPayloadBytes = 170000;

std::vector<std::int64_t> enqueue_large(HttpClient& c, const std::string& q) {
  std::vector<std::int64_t> ids;
  std::string payload(kPayloadBytes, '\x01');
  for (int i = 0; i < kMessages; ++i) ids.push_back(enqueue(c, q, payload).at("id").as_int64());
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(large_list_answers_are_streamed_bounded_and_complete) {
  DlqdProcess server(DlqdOptions(R"({"limits": {"write_timeout_seconds": 2}})"));
  HttpClient c(server.port());
  std::string q = fresh_queue("big");
  auto ids = enqueue_large(c, q);
  std::string list = "GET /queues/" + q + "/messages?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

  // Three clients ask for the whole page (~64 MiB of text each) and read nothing.
  long before = peak_resident_mib(server.pid());
  std::vector<std::unique_ptr<RawConnection>> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(std::make_unique<RawConnection>(server.port(), 4096));
    BOOST_REQUIRE(readers.back()->send(list));
  }
  std::this_thread::sleep_for(milliseconds(1000));
  if (!kSanitized) {
    // Built whole, the three answers took ~200 MiB; streamed, each holds one message's text
    // and a 64 KiB chunk at a time.
    BOOST_TEST(peak_resident_mib(server.pid()) - before < 48);
  }
  // Past the write timeout the server has given up on them: what they can still read is what
  // the kernel had buffered, then the connection ends.
  std::this_thread::sleep_for(milliseconds(3000));
  for (auto& r : readers) {
    r->read(5000);
    BOOST_TEST(r->closed());
    BOOST_TEST(status_line(r->received()) == "HTTP/1.1 200 OK");
    BOOST_TEST(r->received().size() < 32u * 1024 * 1024);
  }
  BOOST_TEST(healthy(server.port()));

  // A client that reads gets every page whole: paging with offset += limit sees each message
  // once, in order.
  std::vector<std::int64_t> seen;
  for (int offset = 0; offset < kMessages; offset += 10) {
    auto page = c.get("/queues/" + q + "/messages?limit=10&offset=" + std::to_string(offset));
    BOOST_REQUIRE_EQUAL(page.status, 200);
    BOOST_TEST(page.header("transfer-encoding") == "chunked");
    auto body = page.json();
    BOOST_TEST(body.at("count").as_int64() == static_cast<std::int64_t>(body.at("messages").as_array().size()));
    for (const auto& m : body.at("messages").as_array()) {
      seen.push_back(m.at("id").as_int64());
      BOOST_TEST(m.at("payload").as_string().size() == kPayloadBytes);
    }
  }
  BOOST_TEST(seen == ids, boost::test_tools::per_element());
  // HEAD says how long GET's answer is, without sending it.
  auto get = c.get("/queues/" + q + "/messages?limit=3");
  auto head = c.request("HEAD", "/queues/" + q + "/messages?limit=3");
  BOOST_TEST(head.status == 200);
  BOOST_TEST(head.header("content-length") == std::to_string(get.body.size()));
  // Small answers are still sent whole.
  BOOST_TEST(!c.get("/queues/" + q + "/messages?limit=1&status=dead").header("content-length").empty());
}

BOOST_AUTO_TEST_CASE(a_parked_claim_notices_a_client_that_pipelined_and_left) {
  std::string q = fresh_queue("watch");
  std::string body = R"({"wait_seconds": 30})";
  std::string park = "POST /queues/" + q + "/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
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
  BOOST_REQUIRE(client.send("POST /queues/" + q + "/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                            std::to_string(short_wait.size()) + "\r\n\r\n" + short_wait));
  std::this_thread::sleep_for(milliseconds(300));
  BOOST_REQUIRE(client.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  client.read(5000);
  BOOST_TEST(client.received().find(R"({"claimed":false,"message":null})") != std::string::npos);
  BOOST_TEST(client.received().find(R"({"status":"ok"})") != std::string::npos);
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_SUITE_END()

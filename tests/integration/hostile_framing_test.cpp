// Issue 16, framing: what one connection can make the server hold while it sends a request
// (defect 1), Transfer-Encoding smuggling (defect 2), and the framing and routing answers of
// defect 7 (Host, `instance`, 405 on a literal segment). Raw sockets throughout.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::string raw(const std::string& bytes) { return HttpClient(shared_dlqd().port()).raw(bytes, 3000); }

std::size_t answers_in(const std::string& bytes) {
  std::size_t n = 0;
  for (auto at = bytes.find("HTTP/1.1 "); at != std::string::npos; at = bytes.find("HTTP/1.1 ", at + 1)) ++n;
  return n;
}

// Sends `head`, then `filler` until the server answers or `limit` bytes went out.
std::string flood_after(DlqdProcess& server, const std::string& head, const std::string& filler,
                        std::size_t limit, std::size_t& sent) {
  RawConnection c(server.port());
  BOOST_REQUIRE(c.send(head));
  sent = c.flood(filler, limit);
  c.read();
  return c.received();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(chunk_lines_and_trailers_cannot_grow_a_connection_without_bound) {
  DlqdProcess server(DlqdOptions{});
  long before = peak_resident_mib(server.pid());
  const std::size_t limit = 64 * 1024 * 1024;
  const std::string filler(64 * 1024, 'a');
  const std::string chunked = "POST /queues/q/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::size_t sent = 0;
  // A chunk-size line that never ends (a chunk extension of 64 MiB)...
  std::string reply = flood_after(server, chunked + "1;ext=", filler, limit, sent);
  BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
  BOOST_TEST(problem_slug(reply) == "bad-request");
  BOOST_TEST(sent < limit);
  // ...and a trailer section that never ends.
  std::string trailer;
  while (trailer.size() < 64 * 1024) trailer += "X-A: " + std::string(57, 'a') + "\r\n";
  reply = flood_after(server, chunked + "1\r\n{\r\n0\r\n", trailer, limit, sent);
  BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
  BOOST_TEST(sent < limit);
  if (!kSanitized) {
    // The read buffer is 64 KiB; before the bound, the server held all 64 MiB sent.
    BOOST_TEST(peak_resident_mib(server.pid()) - before < 32);
  }
  BOOST_TEST(healthy(server.port()));
}

BOOST_AUTO_TEST_CASE(a_transfer_encoding_that_does_not_end_in_chunked_is_refused_not_smuggled) {
  std::string q = fresh_queue("te");
  std::string smuggled = "GET /queues/" + q + "/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  std::string reply = raw("POST /queues/" + q + "/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Transfer-Encoding: gzip\r\n\r\n" + smuggled);
  BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
  BOOST_TEST(problem_slug(reply) == "bad-request");
  BOOST_TEST(answers_in(reply) == 1u);  // the body was not read as a second request
  auto head = [&](const std::string& fields) {
    return raw("POST /queues/" + q + "/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + "\r\n0\r\n\r\n");
  };
  // A coding dlqd does not implement is refused, never ignored.
  reply = head("Transfer-Encoding: gzip, chunked\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 501 Not Implemented");
  BOOST_TEST(problem_slug(reply) == "not-implemented");
  reply = head("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n");
  BOOST_TEST(problem_slug(reply) == "not-implemented");
  for (std::string bad : {"Transfer-Encoding: chunked, chunked\r\n", "Transfer-Encoding: \r\n",
                          "Transfer-Encoding: chunked\r\nContent-Length: 1\r\n"}) {
    reply = head(bad);
    BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request", bad);
    BOOST_TEST(answers_in(reply) == 1u, bad);
  }
  reply = raw("POST /queues/" + q + "/messages HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
  // Chunked bodies, extensions and trailers within the limits still work.
  std::string body = R"({"payload":"chunked"})";
  char size[16];
  std::snprintf(size, sizeof size, "%zx", body.size());
  reply = raw("POST /queues/" + q + "/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
              "Connection: close\r\n\r\n" + std::string(size) + ";note=ok\r\n" + body +
              "\r\n0\r\nX-Trailer: t\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 201 Created");
  HttpClient c(shared_dlqd().port());
  auto list = c.get("/queues/" + q + "/messages").json();
  BOOST_TEST(list.at("count").as_int64() == 1);  // only the chunked one: nothing was smuggled
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_CASE(framing_answers_carry_the_request_path) {
  std::string reply = raw("POST /queues/q/messages?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Content-Length: 999999999\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 413 Payload Too Large");
  BOOST_TEST(problem_instance(reply) == "/queues/q/messages");
  reply = raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  BOOST_TEST(problem_slug(reply) == "headers-too-large");
  BOOST_TEST(problem_instance(reply) == "/healthz");
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_CASE(instance_percent_encodes_bytes_outside_printable_ascii) {
  // Raw bytes above 0x7E (Beast refuses controls in a target) are percent-encoded, so the body
  // is valid JSON text; problem_instance parses it with Boost.JSON, which checks UTF-8.
  std::string reply = raw("GET /queues/\xff\xfe/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 404 Not Found");
  BOOST_TEST(problem_instance(reply) == "/queues/%FF%FE/messages");
  reply = raw("GET /queues/caf\xc3\xa9%20x/messages/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  BOOST_TEST(problem_instance(reply) == "/queues/caf%C3%A9%20x/messages/1");
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_CASE(http_1_1_needs_exactly_one_host) {
  std::string reply = raw("GET /healthz HTTP/1.1\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
  BOOST_TEST(problem_slug(reply) == "bad-request");
  reply = raw("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
  // HTTP/1.0 predates Host.
  BOOST_TEST(status_line(raw("GET /healthz HTTP/1.0\r\n\r\n")) == "HTTP/1.0 200 OK");
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

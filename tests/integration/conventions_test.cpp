// Section 0 of the contract: bodies, errors, routing, request ids, limits, the clock override —
// and that bad input never takes the server down.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(conventions)

// GET /openapi.json serves docs/openapi.json of this tree, byte for byte (docs/api-decisions.md).
BOOST_AUTO_TEST_CASE(openapi_json_is_the_document_in_the_tree) {
  std::ifstream in(DLQ_SOURCE_DIR "/docs/openapi.json", std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  BOOST_TEST_REQUIRE(!file.str().empty());
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/openapi.json");
  BOOST_TEST(res.status == 200);
  BOOST_TEST(res.header("content-type") == "application/json");
  BOOST_TEST((res.body == file.str()));
  BOOST_TEST(str(res.json(), "openapi") == "3.1.0");
  auto head = c.request("HEAD", "/openapi.json");
  BOOST_TEST(head.status == 200);
  BOOST_TEST(head.body.empty());
  auto post = c.post("/openapi.json");
  BOOST_TEST(post.status == 405);
  BOOST_TEST(post.header("allow") == "GET, HEAD");
}

BOOST_AUTO_TEST_CASE(problem_details_carry_every_member) {
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/queues/q/messages/12345678");
  BOOST_TEST(res.status == 404);
  BOOST_TEST(res.header("content-type") == "application/problem+json");
  auto p = res.json().as_object();
  std::vector<std::string> keys;
  for (const auto& [k, v] : p) keys.emplace_back(k);
  BOOST_TEST(keys == (std::vector<std::string>{"type", "title", "status", "instance", "detail", "error"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(p, "instance") == "/queues/q/messages/12345678");
  BOOST_TEST(p.at("status").as_int64() == 404);
}

BOOST_AUTO_TEST_CASE(instance_is_the_path_as_received_without_query) {
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/queues/b%2Ead/messages?limit=1");
  BOOST_TEST(res.status == 404);
  BOOST_TEST(str(res.json(), "instance") == "/queues/b%2Ead/messages");
}

BOOST_AUTO_TEST_CASE(malformed_or_non_object_json_is_400_invalid_json) {
  HttpClient c(shared_dlqd().port());
  std::string path = "/queues/" + fresh_queue() + "/messages";
  for (std::string body : {"{", "[]", "\"payload\"", "42", "null", "{\"payload\": \"x\",}",
                           "{\"payload\": 'x'}", "{\"payload\":\"x\"} trailing", "\xff\xfe"}) {
    auto res = c.request("POST", path, body);
    BOOST_TEST(res.status == 400, body);
    BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/invalid-json");
    BOOST_TEST(str(res.json(), "error") == "request body must be a JSON object");
  }
  BOOST_TEST(c.get("/healthz").status == 200);
}

BOOST_AUTO_TEST_CASE(an_empty_body_counts_as_an_empty_object) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto res = c.request("POST", "/queues/" + q + "/messages", "");
  BOOST_TEST(res.status == 422);
  BOOST_TEST(str(res.json().at("errors").at(0), "field") == "payload");
  BOOST_TEST(c.request("POST", "/queues/" + q + "/claim", "").status == 200);
}

BOOST_AUTO_TEST_CASE(bodies_over_the_limit_are_413) {
  HttpClient c(shared_dlqd().port());
  std::string big = "{\"payload\":\"" + std::string(1024 * 1024, 'x') + "\"}";
  auto res = c.request("POST", "/queues/" + fresh_queue() + "/messages", big);
  BOOST_TEST(res.status == 413);
  BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/payload-too-large");
  BOOST_TEST(HttpClient(shared_dlqd().port()).get("/healthz").status == 200);
}

BOOST_AUTO_TEST_CASE(wrong_method_is_405_with_allow) {
  HttpClient c(shared_dlqd().port());
  auto res = c.request("DELETE", "/queues/q/claim");
  BOOST_TEST(res.status == 405);
  BOOST_TEST(res.header("allow") == "POST");
  BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/method-not-allowed");
  auto list = c.request("PUT", "/queues/q/messages");
  BOOST_TEST(list.status == 405);
  BOOST_TEST(list.header("allow") == "DELETE, GET, HEAD, POST");  // DELETE: purge (B5)
  auto show = c.request("POST", "/queues/q/messages/1");
  BOOST_TEST(show.status == 405);
  BOOST_TEST(show.header("allow") == "GET, HEAD");
}

BOOST_AUTO_TEST_CASE(unknown_paths_and_trailing_slashes_are_404_not_found) {
  HttpClient c(shared_dlqd().port());
  for (std::string path : {"/nope", "/queue", "/queues/q/messages/", "/queues/q//messages",
                           "/queues/q/messages/1/explode", "/queues/q/claim/"}) {
    auto res = c.get(path);
    BOOST_TEST(res.status == 404, path);
    BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/not-found", path);
  }
}

// "/" is the SQS front's (POST only, docs/sqs.md): other methods are 405, as on every route.
BOOST_AUTO_TEST_CASE(the_root_is_post_only) {
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/");
  BOOST_TEST(res.status == 405);
  BOOST_TEST(res.header("allow") == "POST");
  BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/method-not-allowed");
}

BOOST_AUTO_TEST_CASE(head_is_served_as_get_without_a_body) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x");
  auto get = c.get("/queues/" + q + "/messages");
  auto head = c.request("HEAD", "/queues/" + q + "/messages");
  BOOST_TEST(head.status == 200);
  BOOST_TEST(head.body.empty());
  BOOST_TEST(head.header("content-length") == std::to_string(get.body.size()));
  // The connection is still usable after a HEAD.
  BOOST_TEST(c.get("/healthz").status == 200);
}

BOOST_AUTO_TEST_CASE(request_ids_are_echoed_when_valid_and_generated_otherwise) {
  HttpClient c(shared_dlqd().port());
  auto echoed = c.get("/healthz", {{"X-Request-Id", "abc.DEF_1:2-3"}});
  BOOST_TEST(echoed.header("x-request-id") == "abc.DEF_1:2-3");
  BOOST_TEST(echoed.header("x-content-type-options") == "nosniff");
  for (std::string bad : {std::string("has space"), std::string(129, 'a'), std::string("semi;colon")}) {
    auto res = c.get("/healthz", {{"X-Request-Id", bad}});
    BOOST_TEST(!res.header("x-request-id").empty());
    BOOST_TEST(res.header("x-request-id") != bad);
  }
  auto errors = c.get("/nope");
  BOOST_TEST(!errors.header("x-request-id").empty());
  BOOST_TEST(errors.header("x-content-type-options") == "nosniff");
}

BOOST_AUTO_TEST_CASE(timestamps_accept_rfc3339_and_the_space_form) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto a = enqueue(c, q, "a", {}, now_header("2099-03-04T05:06:07+02:00"));
  BOOST_TEST(str(a, "created_at") == "2099-03-04T03:06:07.000Z");
  auto b = enqueue(c, q, "b", {}, now_header("2099-03-04 05:06:07"));
  BOOST_TEST(str(b, "created_at") == "2099-03-04T05:06:07.000Z");
  auto d = enqueue(c, q, "d", {}, now_header("2099-03-04T05:06:07.123456z"));
  BOOST_TEST(str(d, "created_at") == "2099-03-04T05:06:07.123Z");
  for (std::string bad : {"2099-02-30T00:00:00Z", "2099-03-04T05:06:07", "yesterday", "2099-03-04"}) {
    auto res = c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}}, now_header(bad));
    BOOST_TEST(res.status == 422, bad);
  }
}

BOOST_AUTO_TEST_CASE(x_now_is_ignored_on_routes_that_do_not_read_the_clock) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  BOOST_TEST(c.get("/queues/" + q + "/messages", now_header("garbage")).status == 200);
}

BOOST_AUTO_TEST_CASE(x_now_is_refused_when_the_override_is_off) {
  DlqdProcess server(DlqdOptions{});
  HttpClient c(server.port());
  std::string q = fresh_queue();
  auto res = c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}},
                    now_header("2099-01-01T00:00:00Z"));
  BOOST_TEST(res.status == 422);
  auto error = res.json().at("errors").at(0);
  BOOST_TEST(str(error, "field") == "X-Now");
  BOOST_TEST(str(error, "code") == "disabled");
  BOOST_TEST(c.post("/queues/" + q + "/claim", json::object{}, now_header("2099-01-01T00:00:00Z")).status == 422);
  // Without the header the same requests work.
  BOOST_TEST(c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}}).status == 201);
  BOOST_TEST(c.get("/queues/" + q + "/messages", now_header("2099-01-01T00:00:00Z")).status == 200);
}

BOOST_AUTO_TEST_CASE(malformed_http_gets_400_and_the_server_keeps_serving) {
  HttpClient c(shared_dlqd().port());
  std::string reply = c.raw("THIS IS NOT HTTP\r\n\r\n");
  BOOST_TEST(reply.starts_with("HTTP/1.1 400"), reply);
  std::string bad_length = c.raw("POST /queues/q/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n");
  BOOST_TEST(bad_length.starts_with("HTTP/1.1 400"), bad_length);
  std::string huge_header = c.raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                                  std::string(20000, 'a') + "\r\n\r\n");
  BOOST_TEST(huge_header.starts_with("HTTP/1.1 431"), huge_header.substr(0, 40));
  // A client that says it will send a huge body and does not.
  std::string lying = c.raw("POST /queues/q/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\n\r\n{");
  BOOST_TEST(lying.starts_with("HTTP/1.1 413"), lying.substr(0, 40));
  // A connection that sends half a request and goes away.
  c.raw("POST /queues/q/messages HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"pay", 200);
  BOOST_TEST(c.get("/healthz").status == 200);
}

BOOST_AUTO_TEST_CASE(pipelined_requests_are_answered_in_order) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  std::string body = R"({"payload":"p1"})";
  std::string one = "POST /queues/" + q + "/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  std::string two = "GET /queues/" + q + "/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  std::string reply = c.raw(one + two);
  auto first = reply.find("HTTP/1.1 201");
  auto second = reply.find("HTTP/1.1 200");
  BOOST_TEST(first != std::string::npos);
  BOOST_TEST(second != std::string::npos);
  BOOST_TEST(first < second);
}

BOOST_AUTO_TEST_CASE(connection_limits_and_timeouts) {
  DlqdProcess server(DlqdOptions(
      R"({"limits": {"max_connections": 2, "idle_timeout_seconds": 1, "header_timeout_seconds": 1}})"));
  HttpClient first(server.port());
  HttpClient second(server.port());
  BOOST_TEST(first.get("/healthz").status == 200);
  BOOST_TEST(second.get("/healthz").status == 200);
  // A third connection is closed at once: it gets no answer at all.
  BOOST_TEST(HttpClient(server.port()).raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 2000).empty());
  // The two idle keep-alive connections are closed after idle_timeout_seconds, making room.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  BOOST_TEST(first.get("/healthz").status == 200);  // the client reconnects
  // A connection idle past idle_timeout_seconds is closed by the server...
  auto start = std::chrono::steady_clock::now();
  std::string idle = HttpClient(server.port()).raw("", 5000);
  BOOST_TEST(idle.empty());
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(4)));
  // ...and so is one that starts a request and never finishes its headers.
  start = std::chrono::steady_clock::now();
  std::string slow = HttpClient(server.port()).raw("GET /healthz HTTP/1.1\r\nHost:", 5000);
  BOOST_TEST(slow.empty());
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(4)));
}

BOOST_AUTO_TEST_CASE(healthz_and_readyz) {
  HttpClient c(shared_dlqd().port());
  auto h = c.get("/healthz");
  BOOST_TEST(h.status == 200);
  BOOST_TEST(h.body == R"({"status":"ok"})");
  auto r = c.get("/readyz");
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.body == R"({"status":"ready"})");
}

BOOST_AUTO_TEST_SUITE_END()

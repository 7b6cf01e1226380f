// Issue 16, the hostile-input catalogue: bodies that are not what they claim, wrong types in every
// field of every body, names with SQL and percent-encoding tricks, and transport abuse (huge and
// endless bodies, slowloris heads, invalid UTF-8 in headers and paths, thousands of idle
// connections). Each gets a defined 4xx or a closed connection, and the server stays healthy and
// small afterwards.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

std::string slug(const HttpResponse& r) {
  auto body = r.json();
  const auto* type = body.is_object() ? body.as_object().if_contains("type") : nullptr;
  if (!type || !type->is_string()) return "";
  std::string t(type->as_string());
  return t.substr(t.rfind('/') + 1);
}

std::vector<std::string> fields(const HttpResponse& r) { return error_fields(r); }

bool contains(const std::vector<std::string>& all, const std::string& one) {
  return std::find(all.begin(), all.end(), one) != all.end();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(bodies_that_are_not_json_objects_are_400_invalid_json) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("cat");
  std::string deep = "{\"payload\":\"x\",\"a\":" + std::string(40, '[') + std::string(40, ']') + "}";
  const std::vector<std::string> bodies = {
      R"({"payload":)",               // truncated
      R"({"payload":"ab)",            // truncated inside a string
      "{\"payload\":\"a\xc3\x28z\"}",  // invalid UTF-8 inside a string
      "{\"payload\":\"\xff\"}",        // a byte that is never UTF-8
      R"({"payload":"a\ud800z"})",    // a lone surrogate escape
      R"({"payload":"x","priority":NaN})",
      R"({"payload":"x",})",
      R"({"payload":"x"} {"payload":"y"})",  // two documents
      deep,                                  // nests deeper than 32
      "[1,2,3]",
      "\"just a string\"",
      "null",
  };
  for (const auto& body : bodies) {
    auto r = c.request("POST", "/queues/" + q + "/messages", body, {{"Content-Type", "application/json"}});
    BOOST_TEST(r.status == 400, body.substr(0, 40));
    BOOST_TEST(slug(r) == "invalid-json", body.substr(0, 40));
  }
  BOOST_TEST(c.get("/queues/" + q + "/stats").json().at("ready").as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(wrong_types_in_every_field_are_422_naming_each_field) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("cat");
  auto m = enqueue(c, q, "p");
  std::string msg = message_path(q, m.at("id").as_int64());
  struct Case {
    std::string path;
    std::string body;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {"/queues/" + q + "/messages",
       R"({"payload":1,"job_type":[],"priority":"x","max_retries":"3","delay_seconds":{},"idempotency_key":5,"run_at":7})",
       {"payload", "max_retries", "job_type", "priority", "delay_seconds", "idempotency_key", "run_at"}},
      {"/queues/" + q + "/messages",
       R"({"payload":"x","max_retries":1e400,"priority":99999999999999999999999,"delay_seconds":-1e308})",
       {"max_retries", "priority", "delay_seconds"}},
      {"/queues/" + q + "/messages/batch", R"({"messages":{"payload":"x"}})", {"messages"}},
      {"/queues/" + q + "/messages/batch", R"({"messages":[{"payload":2}]})", {"messages[0].payload"}},
      {"/queues/" + q + "/claim", R"({"visibility_timeout":"x","max":true,"job_types":"a","wait_seconds":null})",
       {"wait_seconds", "visibility_timeout", "job_types", "max"}},
      {msg + "/succeed", R"({"lease_id":["a"]})", {"lease_id"}},
      {msg + "/fail", R"({"lease_id":1,"retryable":"no","error_class":7,"retry_in":"soon"})",
       {"lease_id", "error_class", "retryable", "retry_in"}},
      {msg + "/extend", R"({"lease_id":{},"seconds":"long","checkpoint":3})",
       {"lease_id", "seconds", "checkpoint"}},
      {msg + "/release", R"({"lease_id":false,"delay_seconds":"x"})", {"lease_id", "delay_seconds"}},
      {msg + "/replay", R"({"payload":5,"delay_seconds":[],"reason":9,"force":"yes"})",
       {"payload", "delay_seconds", "reason", "force"}},
      {msg + "/dismiss", R"({"reason":[]})", {"reason"}},
      {"/dlq/replay", R"({"filter":"all","dry_run":"yes"})", {"filter", "dry_run"}},
      {"/dlq/dismiss", R"({"filter":{"queue":5},"reason":1})", {"filter.queue", "reason"}},
  };
  for (const auto& k : cases) {
    auto r = c.request("POST", k.path, k.body, {{"Content-Type", "application/json"}});
    BOOST_TEST(r.status == 422, k.path << " " << k.body);
    BOOST_TEST(slug(r) == "validation-failed", k.path);
    auto named = fields(r);
    for (const auto& f : k.fields) BOOST_TEST(contains(named, f), k.path << " names " << f);
  }
  // Nothing changed: the message is still ready, and nothing else was enqueued.
  auto stats = c.get("/queues/" + q + "/stats").json();
  BOOST_TEST(stats.at("ready").as_int64() == 1);
  BOOST_TEST(stats.at("processing").as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(names_with_sql_and_percent_tricks_are_refused_or_kept_literally) {
  HttpClient c(shared_dlqd().port());
  const std::vector<std::string> names = {"a'%3B%20DROP%20TABLE%20messages%3B--", "%2e%2e", "q%2Fx",
                                         "%252e", "%C0%AE", "%00", "q%20", "%E2%80%AE",
                                         std::string(65, 'a')};
  for (const auto& name : names) {
    auto r = c.post("/queues/" + name + "/messages", json::object{{"payload", "x"}});
    BOOST_TEST(r.status == 404, name);
    BOOST_TEST(slug(r) == "unknown-queue", name);
  }
  // Text that looks like SQL is data: stored and answered byte for byte, matched only exactly.
  std::string q = fresh_queue("cat");
  const std::string job = "' OR 1=1 --";
  const std::string key = "k'); DELETE FROM messages; --";
  auto first = c.post("/queues/" + q + "/messages",
                      json::object{{"payload", "x"}, {"job_type", job}, {"idempotency_key", key}});
  BOOST_REQUIRE_EQUAL(first.status, 201);
  BOOST_TEST(first.json().at("job_type").as_string() == job);
  auto again = c.post("/queues/" + q + "/messages",
                      json::object{{"payload", "x"}, {"job_type", job}, {"idempotency_key", key}});
  BOOST_TEST(again.status == 200);  // the same key: the same message
  BOOST_TEST(again.json().at("id") == first.json().at("id"));
  auto m = claim_one(c, q);
  c.post(message_path(q, m.at("id").as_int64(), "fail"),
         json::object{{"lease_id", m.at("lease_id")}, {"retryable", false}});
  auto literal = c.get("/dlq?queue=" + q + "&job_type=%27%20OR%201%3D1%20--");
  BOOST_REQUIRE_EQUAL(literal.status, 200);
  BOOST_TEST(literal.json().at("messages").as_array().size() == 1u);
  for (const std::string pattern : {"%25", "_", "%27%20OR%20%271%27%3D%271"}) {
    auto none = c.get("/dlq?queue=" + q + "&job_type=" + pattern);
    BOOST_REQUIRE_EQUAL(none.status, 200);
    BOOST_TEST(none.json().at("messages").as_array().empty(), pattern);
  }
}

BOOST_AUTO_TEST_CASE(transport_abuse_gets_an_answer_or_a_close_and_the_server_stays_small) {
  DlqdProcess server(DlqdOptions(
      R"({"limits": {"header_timeout_seconds": 1, "max_connections": 300}})"));
  long before = peak_resident_mib(server.pid());

  // A 100 MB body, chunked so no length announces it: 413 after the 1 MiB limit.
  {
    RawConnection c(server.port());
    BOOST_REQUIRE(c.send("POST /queues/q/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
    std::string chunk = "10000\r\n" + std::string(0x10000, 'a') + "\r\n";
    std::size_t sent = c.flood(chunk, 100u * 1024 * 1024);
    c.read();
    BOOST_TEST(status_line(c.received()) == "HTTP/1.1 413 Payload Too Large");
    BOOST_TEST(sent < 100u * 1024 * 1024);
  }
  // A chunked body that never ends, and a head sent a byte at a time: closed after the header
  // timeout (1 s), whatever the client keeps sending.
  for (bool body : {true, false}) {
    const char* what = body ? "endless body" : "slowloris head";
    RawConnection c(server.port());
    auto start = Clock::now();
    c.send(body ? "POST /queues/q/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                : "GET /healthz HTTP/1.1\r\nX-Slow: ");
    while (Clock::now() - start < std::chrono::seconds(6)) {
      if (!c.send(body ? "1\r\na\r\n" : "a")) break;  // a chunk, or one byte of the head
      c.read(100);
      if (c.closed()) break;
    }
    BOOST_TEST(c.closed(), what);
    BOOST_TEST((Clock::now() - start < std::chrono::seconds(4)), what);
  }
  // Invalid UTF-8 in a header and in the path: answered, never echoed raw.
  {
    RawConnection c(server.port());
    c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: \xff\xfe\r\nX-Other: \xc0\xae\r\nConnection: close\r\n\r\n");
    c.read();
    BOOST_TEST(status_line(c.received()) == "HTTP/1.1 200 OK");
    BOOST_TEST(c.received().find('\xff') == std::string::npos);
    RawConnection p(server.port());
    p.send("GET /queues/\xff\xfe/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    p.read();
    BOOST_TEST(status_line(p.received()) == "HTTP/1.1 404 Not Found");
    BOOST_TEST(p.received().find('\xff') == std::string::npos);
  }
  // Two thousand idle connections against max_connections 300: the ones beyond are closed at
  // once, and the server still answers.
  {
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (int i = 0; i < 2000; ++i) idle.push_back(std::make_unique<RawConnection>(server.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    int closed = 0;
    for (auto& c : idle) {
      c->read(1);
      if (c->closed()) ++closed;
    }
    BOOST_TEST(closed >= 1700);
    idle.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    BOOST_TEST(healthy(server.port()));
  }
  if (!kSanitized) BOOST_TEST(peak_resident_mib(server.pid()) - before < 64);
  BOOST_TEST(healthy(server.port()));
  BOOST_TEST(server.running());
}

BOOST_AUTO_TEST_SUITE_END()

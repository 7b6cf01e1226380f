// Issue 31, hostile input round two: what an adversary found on the operator's side after the
// first round (issue 16). Each section below is one group of the issue's items; each keeps its
// helpers in a namespace of its own and its cases in a suite of its own. Raw sockets where the
// bytes matter, the real dlqd throughout, both databases where the store is involved.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

// ---------------------------------------------------------------------------------------------
// Items 1, 2 and 14: the method label, Host and Origin, two Authorization headers.
// ---------------------------------------------------------------------------------------------

// This section's own standard headers (here, so that the sections merge without touching the top).
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace round2_front {

// A tokenless server that knows one extra name and one extra origin.
const char* kOpenConfig = R"({"http": {"allowed_hosts": ["dlq.internal", "10.1.2.3"],
                                       "allowed_origins": ["https://ops.example.com"]}})";

Headers with(Headers base, const Headers& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// Everything a caller can see of what a write did: the queue's counts and the audit log.
std::string state_of(HttpClient& c, const std::string& queue, const Headers& auth = {}) {
  auto stats = c.get("/queues/" + queue + "/stats", auth);
  auto audit = c.get("/audit?limit=100", auth);
  return std::to_string(stats.status) + " " + stats.body + " | " + audit.body;
}

// A dead message of `queue`: enqueued, claimed, failed without retries.
std::int64_t dead_message(HttpClient& c, const std::string& queue, const Headers& auth = {}) {
  auto m = c.post("/queues/" + queue + "/messages", json::object{{"payload", "p"}}, auth);
  BOOST_REQUIRE_EQUAL(m.status, 201);
  std::int64_t id = claim_one(c, queue, auth).at("id").as_int64();
  auto failed = c.post(message_path(queue, id, "fail"),
                       json::object{{"error", "boom"}, {"retryable", false}}, auth);
  BOOST_REQUIRE_EQUAL(failed.status, 200);
  return id;
}

std::string secret_hash(const std::string& secret) {
  return run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), secret + "\n").out.substr(0, 64);
}

// Sends `requests` pipelined, `batch` at a time, each batch sent before its answers are read;
// returns every byte answered.
std::string pipeline(unsigned short port, const std::vector<std::string>& requests,
                     std::size_t batch) {
  RawConnection c(port);
  std::size_t answered = 0, scanned = 0;
  for (std::size_t i = 0; i < requests.size() && !c.closed(); i += batch) {
    std::string bytes;
    std::size_t end = std::min(requests.size(), i + batch);
    for (std::size_t j = i; j < end; ++j) bytes += requests[j];
    BOOST_REQUIRE(c.send(bytes));
    while (answered < end && !c.closed()) {
      std::size_t before = c.received().size();
      c.read(100);
      if (c.received().size() == before) break;  // quiet: the server stopped answering
      for (auto at = c.received().find("HTTP/1.1 ", scanned); at != std::string::npos;
           at = c.received().find("HTTP/1.1 ", at + 1)) {
        ++answered;
        scanned = at + 1;
      }
    }
  }
  return c.received();
}

std::size_t count_of(const std::string& bytes, const std::string& what) {
  std::size_t n = 0;
  for (auto at = bytes.find(what); at != std::string::npos; at = bytes.find(what, at + 1)) ++n;
  return n;
}

}  // namespace round2_front

BOOST_AUTO_TEST_SUITE(hostile_round2_front)

// Item 1: the method label is one of seven, whatever the client sends.
BOOST_AUTO_TEST_CASE(made_up_methods_do_not_grow_the_request_counter) {
  using namespace round2_front;
  DlqdProcess server(DlqdOptions{});
  HttpClient c(server.port());
  BOOST_REQUIRE_EQUAL(c.get("/metrics").status, 200);
  long before = resident_mib(server.pid());
  std::vector<std::string> requests;
  char name[16];
  for (int i = 0; i < 20000; ++i) {
    std::snprintf(name, sizeof name, "M%08d", i);  // 9 bytes, every one different
    requests.push_back(std::string(name) + (i % 2 ? " /queues" : " /nope") +
                       " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  }
  std::string reply = pipeline(server.port(), requests, 1000);
  requests.clear();
  for (int i = 0; i < 200; ++i) {
    std::snprintf(name, sizeof name, "%06d", i);
    requests.push_back(std::string(8192 - 6, 'X') + name + (i % 2 ? " /queues" : " /nope") +
                       " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  }
  std::string long_reply = pipeline(server.port(), requests, 20);
  // The answers stay what they were: 405 where the path exists, 404 where it does not.
  BOOST_TEST(count_of(reply, "HTTP/1.1 404 ") == 10000u);
  BOOST_TEST(count_of(reply, "HTTP/1.1 405 ") == 10000u);
  BOOST_TEST(count_of(long_reply, "HTTP/1.1 404 ") + count_of(long_reply, "HTTP/1.1 405 ") == 200u);

  auto metrics = c.get("/metrics");
  BOOST_REQUIRE_EQUAL(metrics.status, 200);
  const std::set<std::string> labels = {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"};
  std::size_t series = 0;
  std::set<std::string> seen;
  std::istringstream lines(metrics.body);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("dlq_http_requests_total{")) continue;
    ++series;
    auto at = line.find("method=\"");
    BOOST_REQUIRE(at != std::string::npos);
    at += 8;
    std::string method = line.substr(at, line.find('"', at) - at);
    if (!labels.contains(method)) seen.insert(method.substr(0, 20));
  }
  BOOST_TEST(seen.empty(), seen.size() << " method labels outside the set, e.g. "
                                       << (seen.empty() ? "" : *seen.begin()));
  BOOST_TEST(series < 100u);
  BOOST_TEST(metrics.body.find("method=\"other\",status=\"405\"") != std::string::npos);
  if (!kSanitized) BOOST_TEST(resident_mib(server.pid()) - before <= 16);
  BOOST_TEST(healthy(server.port()));
}

// Item 2, Host: without tokens only names of this machine (and the listed ones) are answered.
BOOST_AUTO_TEST_CASE(without_tokens_a_foreign_host_is_refused_but_probes_answer) {
  using namespace round2_front;
  DlqdProcess server(DlqdOptions{});
  HttpClient c(server.port());
  std::string q = fresh_queue("host");
  for (std::string evil : {"evil.example", "evil.example:8080", "EVIL.example", "localhost.evil.example",
                           "127.0.0.1.nip.io", "10.1.2.4", "[::2]", "a b", ""}) {
    Headers h = {{"Host", evil}};
    auto res = c.get("/queues", h);
    BOOST_TEST(res.status == 403, evil << ": " << res.status);
    BOOST_TEST(res.header("content-type") == "application/problem+json");
    BOOST_TEST(res.body.find("/host-not-allowed\"") != std::string::npos, evil << ": " << res.body);
    BOOST_TEST(res.body.find("http.allowed_hosts") != std::string::npos);
    BOOST_TEST(res.header("access-control-allow-origin").empty());
    for (const char* path : {"/ui/", "/metrics", "/openapi.json", "/dlq"}) {
      BOOST_TEST(c.get(path, h).status == 403, evil << " " << path);
    }
    // Refused before anything is written.
    BOOST_TEST(c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}}, h).status == 403);
    // Probes name whatever host they were given; routing still comes first.
    BOOST_TEST(c.get("/healthz", h).status == 200, evil);
    BOOST_TEST(c.get("/readyz", h).status == 200, evil);
    BOOST_TEST(c.get("/nope", h).status == 404);
  }
  BOOST_TEST(c.get("/queues/" + q + "/messages").body.find("\"messages\":[]") != std::string::npos);
  const std::string port = std::to_string(server.port());
  const std::vector<std::string> loopback = {"127.0.0.1", "127.0.0.1:" + port, "127.8.9.10:1",
                                             "localhost", "LocalHost:" + port, "ui.localhost",
                                             "[::1]:" + port, "[::1]"};
  for (const std::string& good : loopback) {
    BOOST_TEST(c.get("/queues", {{"Host", good}}).status == 200, good);
    BOOST_TEST(c.get("/ui/", {{"Host", good}}).status == 200, good);
  }
  // HTTP/1.0 without Host names no site.
  std::string reply = HttpClient(server.port()).raw("GET /queues HTTP/1.0\r\n\r\n", 3000);
  BOOST_TEST(status_line(reply) == "HTTP/1.0 200 OK");

  // The names http.allowed_hosts adds, and only those.
  DlqdProcess listed(DlqdOptions{kOpenConfig});
  HttpClient l(listed.port());
  for (std::string name : {"dlq.internal", "DLQ.Internal:443", "10.1.2.3:1"}) {
    BOOST_TEST(l.get("/queues", {{"Host", name}}).status == 200, name);
  }
  for (std::string name : {"dlq.internal.evil", "10.1.2.4", "evil.example"}) {
    BOOST_TEST(l.get("/queues", {{"Host", name}}).status == 403, name);
  }
}

// Item 2, Origin: without tokens, another site's page cannot enqueue, replay, dismiss or purge.
BOOST_AUTO_TEST_CASE(without_tokens_writes_from_another_site_are_refused_and_change_nothing) {
  using namespace round2_front;
  DlqdProcess server(DlqdOptions{});
  HttpClient c(server.port());
  const std::string port = std::to_string(server.port());
  std::string q = fresh_queue("csrf");
  std::int64_t id = dead_message(c, q);
  const std::vector<Headers> foreign = {
      {{"Origin", "http://127.0.0.1:1"}},
      {{"Sec-Fetch-Site", "cross-site"}},
      {{"Origin", "null"}},
      {{"Origin", "http://127.0.0.1"}, {"Host", "127.0.0.1:" + port}},  // another port
      {{"Origin", "http://localhost:" + port}, {"Host", "127.0.0.1:" + port}},
      {{"Origin", "https://ops.example.com"}},
      {{"Origin", "http://127.0.0.1:" + port}, {"Host", "127.0.0.1:" + port},
       {"Sec-Fetch-Site", "cross-site"}},
      {{"Origin", "http://evil.example"}, {"Host", "evil.example"}},  // Host comes first
  };
  const std::string before = state_of(c, q);
  for (const auto& h : foreign) {
    std::string why = h.front().first + ": " + h.front().second;
    bool host_refused = h.size() > 1 && h[1].second == "evil.example";
    std::string slug = host_refused ? "/host-not-allowed\"" : "/origin-not-allowed\"";
    const HttpResponse answers[] = {
        c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}}, h),
        c.post(message_path(q, id, "replay"), json::object{{"reason", "r"}}, h),
        c.post(message_path(q, id, "dismiss"), json::object{{"reason", "r"}}, h),
        c.request("DELETE", "/queues/" + q + "/messages?status=dead", "", h),
    };
    for (const auto& res : answers) {
      BOOST_TEST(res.status == 403, why);
      BOOST_TEST(res.body.find(slug) != std::string::npos, why << ": " << res.body);
      if (!host_refused) BOOST_TEST(res.body.find("http.allowed_origins") != std::string::npos);
      BOOST_TEST(res.header("access-control-allow-origin").empty());
    }
  }
  BOOST_TEST(state_of(c, q) == before);  // nothing enqueued, replayed, dismissed, purged, audited

  // Its own origin, none at all, or the browser's word that the page is ours.
  auto passes = [](HttpClient& client, const Headers& h) {
    std::string why = h.empty() ? "no Origin" : h.front().first + ": " + h.front().second;
    std::string p = fresh_queue("own");
    BOOST_TEST(client.post("/queues/" + p + "/messages", json::object{{"payload", "x"}}, h).status == 201, why);
    std::int64_t replayed = dead_message(client, p);
    BOOST_TEST(client.post(message_path(p, replayed, "replay"), json::object{{"reason", "r"}}, h).status == 200, why);
    std::int64_t dismissed = dead_message(client, p);
    BOOST_TEST(client.post(message_path(p, dismissed, "dismiss"), json::object{{"reason", "r"}}, h).status == 200, why);
    dead_message(client, p);
    auto purged = client.request("DELETE", "/queues/" + p + "/messages?status=dead", "", h);
    BOOST_TEST(purged.status == 200, why);
    // How many it took depends on the clock's millisecond (before defaults to now): not the point.
    BOOST_TEST(purged.body.find("\"purged\":") != std::string::npos, purged.body);
  };
  const std::vector<Headers> own = {
      {{"Origin", "http://127.0.0.1:" + port}, {"Host", "127.0.0.1:" + port}},
      {{"Origin", "HTTP://LOCALHOST:" + port}, {"Host", "localhost:" + port},
       {"Sec-Fetch-Site", "same-site"}},
      {{"Origin", "http://127.0.0.1"}, {"Host", "127.0.0.1"}},  // both on the default port
      // dlqd cannot tell its scheme (a TLS proxy may be in front): host and port decide.
      {{"Origin", "https://127.0.0.1:" + port}, {"Host", "127.0.0.1:" + port}},
      {},
      {{"Origin", "http://evil.example"}, {"Sec-Fetch-Site", "same-origin"}},
      {{"Sec-Fetch-Site", "same-site"}},
  };
  for (const auto& h : own) passes(c, h);

  // A listed origin passes even from another site; one that merely starts like it does not.
  DlqdProcess listed(DlqdOptions{kOpenConfig});
  HttpClient l(listed.port());
  passes(l, {{"Origin", "https://ops.example.com"}, {"Sec-Fetch-Site", "cross-site"}});
  passes(l, {{"Origin", "HTTPS://OPS.example.com:443"}});
  auto lookalike = l.post("/queues/" + q + "/messages", json::object{{"payload", "x"}},
                          {{"Origin", "https://ops.example.com.evil"}});
  BOOST_TEST(lookalike.status == 403);
}

// Item 2 with tokens: Host is the token's business, Origin is still checked, before the token.
BOOST_AUTO_TEST_CASE(with_tokens_a_foreign_host_passes_and_a_cross_site_write_does_not) {
  using namespace round2_front;
  const std::string admin = "front-admin-5c1d9e2f7a", reader = "front-reader-3b8a6d0c4e";
  auto token = [](const char* name, const std::string& secret, const char* role) {
    return json::object{{"name", name}, {"token_sha256", secret_hash(secret)}, {"roles", json::array{role}}};
  };
  DlqdProcess server(DlqdOptions(json::serialize(json::object{
      {"auth", json::object{{"tokens", json::array{token("admin", admin, "admin"),
                                                    token("reader", reader, "reader")}}}}})));
  HttpClient c(server.port());
  Headers as_admin = {{"Authorization", "Bearer " + admin}};
  Headers as_reader = {{"Authorization", "Bearer " + reader}};
  BOOST_TEST(c.get("/queues", with(as_reader, {{"Host", "evil.example"}})).status == 200);
  BOOST_TEST(c.get("/queues", {{"Host", "evil.example"}}).status == 401);
  std::string q = fresh_queue("tok");
  std::int64_t id = dead_message(c, q, as_admin);
  const std::string before = state_of(c, q, as_admin);
  for (const Headers& h : {Headers{{"Sec-Fetch-Site", "cross-site"}},
                           Headers{{"Origin", "http://evil.example"}}}) {
    for (const auto& res :
         {c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}}, with(as_admin, h)),
          c.post(message_path(q, id, "dismiss"), json::object{{"reason", "r"}}, with(as_admin, h)),
          c.post(message_path(q, id, "replay"), json::object{}, h)}) {  // before the 401
      BOOST_TEST(res.status == 403);
      BOOST_TEST(res.body.find("/origin-not-allowed\"") != std::string::npos, res.body);
    }
  }
  BOOST_TEST(state_of(c, q, as_admin) == before);
  // A reader token is still a reader's: forbidden comes after the origin passed.
  auto forbidden = c.post(message_path(q, id, "dismiss"), json::object{{"reason", "r"}}, as_reader);
  BOOST_TEST(forbidden.body.find("/forbidden\"") != std::string::npos, forbidden.body);
  BOOST_TEST(c.post(message_path(q, id, "dismiss"), json::object{{"reason", "r"}},
                    with(as_admin, {{"Origin", "http://127.0.0.1"}})).status == 200);
}

// Item 2: a malformed list entry is named by --check-config.
BOOST_AUTO_TEST_CASE(a_malformed_allowed_entry_fails_check_config_naming_it) {
  TempDir dir;
  auto check = [&](const std::string& key, const std::string& entry) {
    std::ofstream(dir.file("c.json")) << json::serialize(json::object{
        {"http", json::object{{key, json::array{key == "allowed_hosts" ? "ok.example" : "https://ok.example", entry}}}}});
    return run_dlqd({"--config", dir.file("c.json"), "--check-config"});
  };
  for (std::string bad : {"evil.example:80", "*.example.com", "http://a.example", "", "a..b",
                          "[::1]:80", "a b", "a/b", "[zz::1]"}) {
    auto r = check("allowed_hosts", bad);
    BOOST_TEST(r.exit_code == 2, bad);
    BOOST_TEST(r.err.find("http.allowed_hosts") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("\"" + bad + "\"") != std::string::npos, r.err);
  }
  for (std::string bad : {"https://a.example/", "ftp://a.example", "https://a.example:99999",
                          "null", "*", "a.example", "https://", "https://u@a.example",
                          "https://a.example?x", "https://a.example:443/x"}) {
    auto r = check("allowed_origins", bad);
    BOOST_TEST(r.exit_code == 2, bad);
    BOOST_TEST(r.err.find("http.allowed_origins") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("\"" + bad + "\"") != std::string::npos, r.err);
  }
  std::ofstream(dir.file("c.json")) << R"({"http": {
      "allowed_hosts": ["dlq.example.com", "10.0.0.5", "[fd00::1]", "fd00::2", "LOCAL_box"],
      "allowed_origins": ["https://dlq.example.com", "http://10.0.0.5:8080", "http://[fd00::1]:80"]}})";
  auto ok = run_dlqd({"--config", dir.file("c.json"), "--check-config"});
  BOOST_TEST(ok.exit_code == 0, ok.err);
}

// Item 14: two credentials are one too many, in either order.
BOOST_AUTO_TEST_CASE(two_authorization_headers_are_refused_in_either_order) {
  using namespace round2_front;
  const std::string admin = "front-two-auth-8e7f6a5b4c";
  DlqdProcess server(DlqdOptions(json::serialize(json::object{{"auth", json::object{{"tokens", json::array{
      json::object{{"name", "admin"}, {"token_sha256", secret_hash(admin)}, {"roles", json::array{"admin"}}}}}}}})));
  auto send = [&](const std::string& fields) {
    RawConnection c(server.port());
    BOOST_REQUIRE(c.send("GET /queues HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + "\r\n"));
    c.read();
    return std::make_pair(c.received(), c.closed());
  };
  auto [one, one_closed] = send("Authorization: Bearer " + admin + "\r\nConnection: close\r\n");
  BOOST_TEST(status_line(one) == "HTTP/1.1 200 OK");
  for (const std::string& fields :
       {"Authorization: Bearer " + admin + "\r\nAuthorization: Bearer nope\r\n",
        "Authorization: Bearer nope\r\nAuthorization: Bearer " + admin + "\r\n",
        "Authorization: Bearer " + admin + "\r\nauthorization: Bearer " + admin + "\r\n"}) {
    auto [reply, closed] = send(fields);
    BOOST_TEST(status_line(reply) == "HTTP/1.1 400 Bad Request");
    BOOST_TEST(problem_slug(reply) == "bad-request");
    BOOST_TEST(closed);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// (end of items 1, 2 and 14)

// ---------------------------------------------------------------------------------------------
// Item 3: slow readers of /dlq, batch claims and /audit.
// ---------------------------------------------------------------------------------------------

// (end of item 3)

// ---------------------------------------------------------------------------------------------
// Item 5: folded releases and paged attempts.
// ---------------------------------------------------------------------------------------------

// (end of item 5)

// ---------------------------------------------------------------------------------------------
// Items 6 and 15: the number of queues and of previews.
// ---------------------------------------------------------------------------------------------

// (end of items 6 and 15)

// ---------------------------------------------------------------------------------------------
// Items 7 to 11: signals at start-up, reloads, logs and file modes.
// ---------------------------------------------------------------------------------------------

// (end of items 7 to 11)

// ---------------------------------------------------------------------------------------------
// Items 12 and 13: what the server returns for the UI and dlqctl to show (redaction).
// ---------------------------------------------------------------------------------------------

// (end of items 12 and 13)

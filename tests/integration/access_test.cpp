// Access control over real HTTP: every route tried with every role, no token and a wrong token,
// against the one matrix below (http-api.md B4; shown in docs/access.md). Also: several roles on
// one token, auth.public_metrics, dlqd hash-token, SIGHUP reloads, and tokens never echoed.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <map>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

// Token names and the secrets they stand for; the config holds only their SHA-256.
const std::map<std::string, std::string> kSecrets = {
    {"producer", "tok-producer-6b1f0e2a9c"}, {"worker", "tok-worker-0d9e8c7b6a"},
    {"reader", "tok-reader-5a4b3c2d1e"},     {"admin", "tok-admin-9f8e7d6c5b"},
    {"pipeline", "tok-pipeline-1a2b3c4d5e"},  // producer + worker
};
const std::map<std::string, std::vector<std::string>> kRoles = {
    {"producer", {"producer"}}, {"worker", {"worker"}}, {"reader", {"reader"}},
    {"admin", {"admin"}},       {"pipeline", {"producer", "worker"}},
};

std::string hash_of(const std::string& token) {
  auto r = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), token + "\n");
  if (r.exit_code != 0) throw std::runtime_error("hash-token failed: " + r.err);
  return r.out.substr(0, r.out.find('\n'));
}

std::string config_with_tokens(const std::vector<std::string>& names, std::string extra = "") {
  json::array tokens;
  for (const auto& name : names) {
    json::array roles;
    for (const auto& r : kRoles.at(name)) roles.emplace_back(r);
    tokens.push_back(json::object{{"name", name}, {"token_sha256", hash_of(kSecrets.at(name))},
                                  {"roles", roles}});
  }
  json::object auth{{"tokens", tokens}};
  if (!extra.empty()) auth[extra] = true;
  return json::serialize(json::object{{"auth", auth}, {"log", json::object{{"level", "debug"}}}});
}

Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// The matrix: each route and the access it needs. "open" routes need no token.
struct RouteCase {
  const char* method;
  const char* target;
  const char* needs;  // open, producer, worker, reader, admin
};
const RouteCase kRoutes[] = {
    {"POST", "/queues/acl/messages", "producer"},
    {"GET", "/queues/acl/messages", "reader"},
    {"POST", "/queues/acl/messages/batch", "producer"},
    {"GET", "/queues/acl/messages/1", "reader"},
    {"POST", "/queues/acl/claim", "worker"},
    {"POST", "/queues/acl/ack", "worker"},
    {"POST", "/queues/acl/messages/1/succeed", "worker"},
    {"POST", "/queues/acl/messages/1/fail", "worker"},
    {"POST", "/queues/acl/messages/1/extend", "worker"},
    {"POST", "/queues/acl/messages/1/effects", "worker"},
    {"POST", "/queues/acl/messages/1/release", "worker"},
    {"POST", "/queues/acl/messages/1/replay", "admin"},
    {"POST", "/queues/acl/messages/1/dismiss", "admin"},
    {"GET", "/queues/acl/messages/1/attempts", "reader"},
    {"GET", "/queues/acl/messages/1/versions", "reader"},
    {"GET", "/queues", "reader"},
    {"GET", "/queues/acl/stats", "reader"},
    {"GET", "/dlq", "reader"},
    {"POST", "/dlq/replay", "admin"},
    {"POST", "/dlq/dismiss", "admin"},
    {"GET", "/dlq/replays", "reader"},
    {"GET", "/dlq/hourly", "reader"},
    {"GET", "/dlq/incidents", "reader"},
    {"GET", "/dlq/incidents/0123456789abcdef", "reader"},
    {"POST", "/dlq/incidents/0123456789abcdef/mute", "admin"},
    {"GET", "/dlq/replays/1", "reader"},
    {"POST", "/dlq/replays/1/pause", "admin"},
    {"POST", "/dlq/replays/1/resume", "admin"},
    {"POST", "/dlq/replays/1/cancel", "admin"},
    {"GET", "/audit", "admin"},
    {"GET", "/metrics", "reader"},
    {"GET", "/openapi.json", "reader"},
    {"GET", "/whoami", "any_token"},
    {"DELETE", "/queues/acl/messages?status=dead", "admin"},
    {"GET", "/healthz", "open"},
    {"GET", "/readyz", "open"},
    {"GET", "/ui", "open"},
    {"GET", "/ui/", "open"},
    {"GET", "/ui/index.html", "open"},
};

bool may(const std::string& who, const std::string& needs) {
  if (needs == "open") return true;
  if (!kRoles.contains(who)) return false;
  if (needs == "any_token") return true;
  for (const auto& r : kRoles.at(who)) {
    if (r == needs || r == "admin") return true;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(access_control)

BOOST_AUTO_TEST_CASE(every_route_with_every_role_matches_the_matrix) {
  DlqdProcess node{DlqdOptions(config_with_tokens({"producer", "worker", "reader", "admin",
                                                   "pipeline"}))};
  HttpClient c(node.port());
  std::vector<std::string> bodies;
  const std::vector<std::string> callers = {"none",   "wrong",  "producer", "worker",
                                            "reader", "admin", "pipeline"};
  for (const auto& route : kRoutes) {
    for (const auto& who : callers) {
      Headers headers;
      if (who == "wrong") headers = bearer("tok-nobody-0000000000");
      if (kSecrets.contains(who)) headers = bearer(kSecrets.at(who));
      std::string body = std::string(route.method) == "POST" ? "{}" : "";
      auto res = c.request(route.method, route.target, body, headers);
      bodies.push_back(res.body);
      std::string what = std::string(route.method) + " " + route.target + " as " + who;
      if (may(who, route.needs)) {
        BOOST_TEST((res.status != 401 && res.status != 403), what << " -> " << res.status);
        // The route exists: an allowed caller never sees "no such route".
        BOOST_TEST((res.status != 405 && res.body.find("/problems/not-found") == std::string::npos),
                   what << " -> " << res.status);
      } else if (who == "none" || who == "wrong") {
        BOOST_TEST(res.status == 401, what << " -> " << res.status);
        BOOST_TEST(res.header("www-authenticate") == R"(Bearer realm="dlq")", what);
        BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/unauthorized", what);
        // The detail says what the request carried, never why a token was refused.
        BOOST_TEST(str(res.json(), "detail") ==
                       (who == "none" ? "this route needs an access token: Authorization: Bearer <token>"
                                      : "the access token sent was not accepted"),
                   what);
      } else {
        BOOST_TEST(res.status == 403, what << " -> " << res.status);
        BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/forbidden", what);
      }
    }
  }
  // No token ever comes back: not in an answer, not in the log (written at debug level). The
  // log is read once the node has stopped, so that every line it gathered has been written.
  BOOST_TEST(node.terminate() == 0);
  std::string log = node.log();
  for (const auto& [name, secret] : kSecrets) {
    BOOST_TEST(log.find(secret) == std::string::npos, name << "'s token is in the log");
    for (const auto& b : bodies) BOOST_TEST_REQUIRE(b.find(secret) == std::string::npos);
  }
  BOOST_TEST(log.find("tok-nobody") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(access_is_checked_before_the_queue_name_and_the_body) {
  DlqdProcess node{DlqdOptions(config_with_tokens({"reader"}))};
  HttpClient c(node.port());
  // An invalid queue name and a broken body: still 401 / 403 first (http-api.md 0).
  BOOST_TEST(c.request("POST", "/queues/bad%20name/messages", "{not json").status == 401);
  BOOST_TEST(c.request("POST", "/queues/bad%20name/messages", "{not json",
                       bearer(kSecrets.at("reader"))).status == 403);
  // Routing still comes first: an unknown path is 404 without a token.
  BOOST_TEST(c.get("/nowhere").status == 404);
  // The scheme is case-insensitive; anything but Bearer is refused.
  BOOST_TEST(c.get("/queues", {{"Authorization", "bearer " + kSecrets.at("reader")}}).status == 200);
  BOOST_TEST(c.get("/queues", {{"Authorization", "Basic " + kSecrets.at("reader")}}).status == 401);
  BOOST_TEST(c.get("/queues", {{"Authorization", "Bearer"}}).status == 401);
}

BOOST_AUTO_TEST_CASE(public_metrics_opens_metrics_and_nothing_else) {
  DlqdProcess node{DlqdOptions(config_with_tokens({"reader"}, "public_metrics"))};
  HttpClient c(node.port());
  BOOST_TEST(c.get("/metrics").status == 200);
  BOOST_TEST(c.get("/openapi.json").status == 200);
  BOOST_TEST(c.get("/queues").status == 401);
}

BOOST_AUTO_TEST_CASE(a_token_hashed_by_hash_token_authenticates) {
  auto crlf = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), "round-trip-secret-42\r\n");
  auto bare = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), "round-trip-secret-42");
  BOOST_TEST(crlf.exit_code == 0);
  BOOST_TEST(crlf.out == bare.out);  // one trailing newline (LF or CRLF) is not part of it
  BOOST_TEST(crlf.out.size() == 65u);
  std::string hash = crlf.out.substr(0, 64);
  json::object config{{"auth", json::object{{"tokens", json::array{json::object{
                                  {"name", "ci"}, {"token_sha256", hash},
                                  {"roles", json::array{"reader"}}}}}}}};
  DlqdProcess node{DlqdOptions(json::serialize(config))};
  HttpClient c(node.port());
  BOOST_TEST(c.get("/queues", bearer("round-trip-secret-42")).status == 200);
  BOOST_TEST(c.get("/queues", bearer("round-trip-secret-4")).status == 401);

  auto empty = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), "\n");
  BOOST_TEST(empty.exit_code == 2);
  BOOST_TEST(empty.out.empty());
}

BOOST_AUTO_TEST_CASE(sighup_reloads_tokens_and_a_bad_file_keeps_the_old_ones) {
  DlqdProcess node{DlqdOptions(config_with_tokens({"reader"}))};
  HttpClient c(node.port());
  BOOST_TEST(c.get("/queues", bearer(kSecrets.at("reader"))).status == 200);

  node.rewrite_config(config_with_tokens({"admin"}));
  node.signal(SIGHUP);
  bool swapped = false;
  for (int i = 0; i < 200 && !swapped; ++i) {
    swapped = c.get("/queues", bearer(kSecrets.at("admin"))).status == 200;
    if (!swapped) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST(swapped);
  BOOST_TEST(c.get("/queues", bearer(kSecrets.at("reader"))).status == 401);

  node.rewrite_config(R"({"auth": {"tokens": [{"name": "x", "token_sha256": "zz", "roles": []}]}})");
  node.signal(SIGHUP);
  bool logged = false;
  for (int i = 0; i < 200 && !logged; ++i) {
    logged = node.log().find("keeping the old tokens") != std::string::npos;
    if (!logged) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST(logged);
  BOOST_TEST(c.get("/queues", bearer(kSecrets.at("admin"))).status == 200);
  BOOST_TEST(node.running());  // SIGHUP never ends the process
}

// GET /whoami: any valid token, whatever its roles (each once, in Role's order); the current
// token table (a SIGHUP that removes the token makes it a 401); without tokens, anonymous admin.
BOOST_AUTO_TEST_CASE(whoami_answers_each_token) {
  DlqdProcess node{DlqdOptions(config_with_tokens({"admin", "reader", "pipeline"}))};
  HttpClient c(node.port());
  auto who = [&](const std::string& name) {
    auto res = c.get("/whoami", bearer(kSecrets.at(name)));
    BOOST_REQUIRE_EQUAL(res.status, 200);
    return json::serialize(res.json());
  };
  BOOST_TEST(who("admin") == R"({"actor":"admin","roles":["admin"],"tokens_configured":true})");
  BOOST_TEST(who("reader") == R"({"actor":"reader","roles":["reader"],"tokens_configured":true})");
  BOOST_TEST(who("pipeline") ==
             R"({"actor":"pipeline","roles":["producer","worker"],"tokens_configured":true})");
  auto none = c.get("/whoami");
  BOOST_TEST(none.status == 401);
  BOOST_TEST(str(none.json(), "detail") ==
             "this route needs an access token: Authorization: Bearer <token>");
  auto wrong = c.get("/whoami", bearer("tok-nobody-0000000000"));
  BOOST_TEST(wrong.status == 401);
  BOOST_TEST(str(wrong.json(), "detail") == "the access token sent was not accepted");
  for (const auto& name : {"admin", "reader", "pipeline"}) {
    BOOST_TEST(c.get("/whoami", bearer(kSecrets.at(name))).body.find(kSecrets.at(name)) ==
               std::string::npos);
  }

  node.rewrite_config(config_with_tokens({"admin"}));
  node.signal(SIGHUP);
  bool removed = false;
  for (int i = 0; i < 200 && !removed; ++i) {
    removed = c.get("/whoami", bearer(kSecrets.at("reader"))).status == 401;
    if (!removed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST(removed);
  auto gone = c.get("/whoami", bearer(kSecrets.at("reader")));
  BOOST_TEST(str(gone.json(), "detail") == "the access token sent was not accepted");

  DlqdProcess open{DlqdOptions("{}")};
  HttpClient o(open.port());
  auto anonymous = o.get("/whoami");
  BOOST_REQUIRE_EQUAL(anonymous.status, 200);
  BOOST_TEST(json::serialize(anonymous.json()) ==
             R"({"actor":"anonymous","roles":["admin"],"tokens_configured":false})");
}

BOOST_AUTO_TEST_SUITE_END()

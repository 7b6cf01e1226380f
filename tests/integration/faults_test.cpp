// Database faults: a SQLite database that runs out of space (testing.sqlite_max_page_count
// stands in for a full disk) and a PostgreSQL server whose network goes silent (a user-space
// proxy that stops forwarding). Each answers a defined problem within a bound, writes nothing
// half and recovers without restarting dlqd.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <regex>
#include <string>
#include <thread>

#include "integration/server_fixture.hpp"
#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"
#include "support/tcp_proxy.hpp"

namespace json = boost::json;
namespace utf = boost::unit_test;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

std::string str(const json::value& v, const char* key) {
  const auto* s = v.as_object().if_contains(key);
  return s && s->is_string() ? std::string(s->as_string()) : std::string();
}

std::int64_t pending(HttpClient& c, const std::string& q) {
  auto stats = c.get("/queues/" + q + "/stats");
  BOOST_REQUIRE_EQUAL(stats.status, 200);
  return stats.json().at("ready").as_int64() + stats.json().at("scheduled").as_int64();
}

// A dlqd on a fresh PostgreSQL database that it reaches only through a proxy the test can
// silence; statements bounded at 2 s, connects at 2 s.
struct ProxiedNode {
  static unsigned short server_port(const std::string& url) {
    std::smatch port;
    BOOST_REQUIRE(std::regex_search(url, port, std::regex(":([0-9]+)/")));
    return static_cast<unsigned short>(std::stoi(port[1].str()));
  }
  explicit ProxiedNode(const std::string& direct)
      : proxy(server_port(direct)),
        node{DlqdOptions(
            R"({"database": {"statement_timeout_seconds": 2, "connect_timeout_seconds": 2}})",
            std::regex_replace(direct, std::regex(":[0-9]+/"),
                               ":" + std::to_string(proxy.port()) + "/"))} {}
  TcpProxy proxy;
  DlqdProcess node;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(faults)

BOOST_AUTO_TEST_CASE(a_full_sqlite_database_answers_507_writes_nothing_half_and_recovers,
                     *utf::precondition(on_sqlite)) {
  // 1,000 pages of 4 KiB: a few MB, of which the schema takes a few dozen pages.
  DlqdProcess node{DlqdOptions(R"({"testing": {"sqlite_max_page_count": 1000}})")};
  HttpClient c(node.port());
  std::string q = fresh_queue("full");
  const std::string big(60000, 'x');

  // Dead letters an operator can purge later to make room.
  for (int i = 0; i < 8; ++i) {
    enqueue(c, q, big);
    auto m = claim_one(c, q);
    auto failed = c.post(message_path(q, m.at("id").as_int64(), "fail"),
                         json::object{{"lease_id", m.at("lease_id")}, {"error", "bad input"},
                                      {"retryable", false}});
    BOOST_REQUIRE_EQUAL(failed.status, 200);
  }

  std::int64_t acked = 0;
  HttpResponse full;
  for (int i = 0; i < 100; ++i) {
    full = c.post("/queues/" + q + "/messages", json::object{{"payload", big}});
    if (full.status != 201) break;
    ++acked;
  }
  BOOST_REQUIRE_EQUAL(full.status, 507);
  BOOST_TEST(str(full.json(), "type") == "https://dlq.dev/problems/storage-full");
  BOOST_TEST(full.header("content-type") == "application/problem+json");
  BOOST_TEST(acked > 10);

  // A batch that does not fit is refused whole: none of its messages exists.
  json::array batch;
  for (int i = 0; i < 5; ++i) batch.push_back(json::object{{"payload", big}});
  auto refused = c.post("/queues/" + q + "/messages/batch", json::object{{"messages", batch}});
  BOOST_TEST(refused.status == 507);
  BOOST_TEST(pending(c, q) == acked);

  // Reads and health go on while the database is full.
  BOOST_TEST(c.get("/healthz").status == 200);
  auto listed = c.get("/queues/" + q + "/messages?status=pending&limit=100");
  BOOST_REQUIRE_EQUAL(listed.status, 200);
  auto body = listed.json();
  const auto& messages = body.at("messages").as_array();
  BOOST_TEST(messages.size() == static_cast<std::size_t>(acked));
  for (const auto& m : messages) BOOST_TEST(m.at("payload").as_string().size() == big.size());

  // Space returns (the operator purges the dead letters): writes work again, no restart.
  auto purged = c.request("DELETE", "/queues/" + q + "/messages?status=dead");
  BOOST_REQUIRE_EQUAL(purged.status, 200);
  BOOST_TEST(purged.json().at("purged").as_int64() == 8);
  auto after = c.post("/queues/" + q + "/messages", json::object{{"payload", big}});
  BOOST_TEST(after.status == 201);
  BOOST_TEST(pending(c, q) == acked + 1);
  BOOST_TEST(node.running());
}

BOOST_AUTO_TEST_CASE(a_silent_postgresql_network_answers_503_in_bounded_time_and_recovers,
                     *utf::precondition(on_postgresql)) {
  // dlqd reaches its database only through the proxy.
  ProxiedNode proxied(create_pg_database("dlq_it"));
  auto& proxy = proxied.proxy;
  auto& node = proxied.node;
  HttpClient c(node.port());
  std::string q = fresh_queue("silent");
  for (int i = 0; i < 10; ++i) enqueue(c, q, std::to_string(i));

  proxy.silence(true);
  // Statement bound 2 s, a job is cut off 1 s later, a reconnect gives up after 2 s: every
  // request is answered within a few seconds, never left hanging on the silent network.
  for (const char* what : {"write", "read"}) {
    auto start = Clock::now();
    auto res = std::string(what) == "write"
                   ? c.post("/queues/" + q + "/messages", json::object{{"payload", "lost?"}})
                   : c.get("/queues/" + q + "/stats");
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    BOOST_TEST_MESSAGE(what << " answered " << res.status << " after " << took << " s");
    BOOST_TEST(res.status == 503, what);
    BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/database-unavailable", what);
    BOOST_TEST(took < 8.0, what);
  }
  BOOST_TEST(c.get("/healthz").status == 200);
  BOOST_TEST(c.get("/readyz").status == 503);

  // The network comes back: service resumes without a restart, and nothing was lost or added.
  proxy.silence(false);
  int status = 0;
  for (int i = 0; i < 60 && status != 201; ++i) {
    status = c.post("/queues/" + q + "/messages", json::object{{"payload", "after"}}).status;
    if (status != 201) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  BOOST_REQUIRE_EQUAL(status, 201);
  BOOST_TEST(pending(c, q) == 11);
  BOOST_TEST(node.running());
}

// A claim carrying acknowledgements commits them with its first attempt; if it then waits and a
// later attempt loses the database, the answer is 200 with the acks and no message, not a 503
// (which would tell the worker that nothing changed: it would do the work again). Found while
// writing the chaos test's history checker, whose `unexpected` rule it breaks.
BOOST_AUTO_TEST_CASE(a_waiting_claim_that_loses_the_database_still_answers_its_committed_acks,
                     *utf::precondition(on_postgresql)) {
  ProxiedNode proxied(create_pg_database("dlq_it"));
  auto& proxy = proxied.proxy;
  auto& node = proxied.node;
  HttpClient c(node.port());
  std::string q = fresh_queue("ackwait");
  enqueue(c, q, "done");
  auto m = claim_one(c, q);
  // Due in 1 s: it wakes the waiting claim, whose attempt then finds the network silent.
  auto later = c.post("/queues/" + q + "/messages",
                      json::object{{"payload", "later"}, {"delay_seconds", 1}});
  BOOST_REQUIRE_EQUAL(later.status, 201);

  auto answer = std::async(std::launch::async, [&] {
    HttpClient worker(node.port());
    json::array ack{json::object{{"id", m.at("id")}, {"lease_id", m.at("lease_id")}}};
    return worker.post("/queues/" + q + "/claim?wait=8", json::object{{"ack", ack}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // committed and parked
  proxy.silence(true);
  auto res = answer.get();
  BOOST_TEST_MESSAGE("the claim answered " << res.status << ": " << res.body);
  BOOST_REQUIRE_EQUAL(res.status, 200);
  auto body = res.json();
  BOOST_TEST(body.at("claimed").as_bool() == false);
  const auto& acked = body.at("acked").as_array();
  BOOST_REQUIRE_EQUAL(acked.size(), 1u);
  BOOST_TEST(acked[0].at("status").as_int64() == 200);

  proxy.silence(false);
  int status = 0;
  json::value message;
  for (int i = 0; i < 60 && status != 200; ++i) {
    auto got = c.get("/queues/" + q + "/messages/" + std::to_string(m.at("id").as_int64()));
    status = got.status;
    if (status == 200) message = got.json();
    else std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  BOOST_REQUIRE_EQUAL(status, 200);
  BOOST_TEST(str(message, "status") == "succeeded");
}

BOOST_AUTO_TEST_SUITE_END()

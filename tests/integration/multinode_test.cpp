// Several dlqd nodes on one PostgreSQL database, and PostgreSQL going away under load. These
// need PostgreSQL; on the SQLite run they are reported as skipped (one process owns a SQLite file).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "integration/server_fixture.hpp"
#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"
#include "support/webhook_receiver.hpp"

namespace json = boost::json;
namespace utf = boost::unit_test;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

// A PostgreSQL cluster of the test's own (the shared one must stay up for the other tests).
class OwnCluster {
 public:
  OwnCluster() { url_ = run("start"); }
  ~OwnCluster() { run("stop"); }
  void stop() { run("stop"); }
  void resume() { run("resume"); }
  const std::string& url() const { return url_; }

 private:
  static std::string run(const std::string& command) {
    std::string line = "DLQ_PG_PORT=55439 " DLQ_SOURCE_DIR "/scripts/pg-cluster.sh " + command;
    FILE* p = popen(line.c_str(), "r");
    if (!p) throw std::runtime_error("cannot run pg-cluster.sh");
    std::string out;
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    if (pclose(p) != 0) throw std::runtime_error("pg-cluster.sh " + command + " failed");
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  std::string url_;
};

bool leads(unsigned short port) {
  auto body = HttpClient(port).get("/metrics").body;
  return body.find("\ndlq_leader 1") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(multi_node)

BOOST_AUTO_TEST_CASE(two_nodes_32_claimers_5000_messages_each_claimed_once,
                     *utf::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_nodes");
  DlqdProcess a(DlqdOptions("{}", db));
  DlqdProcess b(DlqdOptions("{}", db));
  std::string q = fresh_queue("nodes");
  constexpr int kMessages = 5000;
  {
    HttpClient c(a.port());
    for (int i = 0; i < kMessages / 1000; ++i) {
      json::array batch;
      for (int j = 0; j < 1000; ++j) batch.push_back(json::object{{"payload", std::to_string(i * 1000 + j)}});
      BOOST_REQUIRE_EQUAL(c.post("/queues/" + q + "/messages/batch", json::object{{"messages", batch}}).status, 201);
    }
  }
  std::mutex mu;
  std::multiset<std::int64_t> seen;
  std::vector<std::string> problems;
  std::vector<std::thread> claimers;
  for (int w = 0; w < 32; ++w) {
    claimers.emplace_back([&, w] {
      try {
        HttpClient c(w % 2 == 0 ? a.port() : b.port());
        for (;;) {
          auto res = claim(c, q, {{"max", 10}});
          auto body = res.json();
          auto& list = body.at("messages").as_array();
          if (list.empty()) return;
          json::array acks;
          for (const auto& m : list) acks.push_back(json::object{{"id", m.at("id")}, {"lease_id", m.at("lease_id")}});
          auto ack = c.post("/queues/" + q + "/ack", json::object{{"items", acks}}).json();
          std::lock_guard lock(mu);
          for (const auto& m : list) seen.insert(m.at("id").as_int64());
          for (const auto& r : ack.at("results").as_array()) {
            if (r.at("status").as_int64() != 200) problems.push_back(json::serialize(r));
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        problems.push_back(e.what());
      }
    });
  }
  for (auto& t : claimers) t.join();
  BOOST_TEST(problems.empty(), (problems.empty() ? "" : problems.front()));
  BOOST_TEST(seen.size() == static_cast<std::size_t>(kMessages));
  BOOST_TEST(std::set<std::int64_t>(seen.begin(), seen.end()).size() == static_cast<std::size_t>(kMessages));
  HttpClient c(b.port());
  auto stats = c.get("/queues/" + q + "/stats").json();
  BOOST_TEST(stats.at("succeeded").as_int64() == kMessages);
}

BOOST_AUTO_TEST_CASE(nodes_starting_at_once_on_a_new_database_migrate_it_once,
                     *utf::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_race");
  std::vector<std::unique_ptr<DlqdProcess>> nodes(3);
  std::vector<std::thread> starters;
  std::mutex mu;
  std::vector<std::string> failures;
  for (auto& node : nodes) {
    starters.emplace_back([&, slot = &node] {
      try {
        *slot = std::make_unique<DlqdProcess>(DlqdOptions("{}", db));
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        failures.push_back(e.what());
      }
    });
  }
  for (auto& t : starters) t.join();
  BOOST_TEST(failures.empty(), (failures.empty() ? "" : failures.front()));
  for (auto& node : nodes) {
    if (!node) continue;
    HttpClient c(node->port());
    BOOST_TEST(c.get("/readyz").status == 200);
    BOOST_TEST(c.post("/queues/race/messages", json::object{{"payload", "x"}}).status == 201);
  }
}

BOOST_AUTO_TEST_CASE(a_claimer_on_one_node_wakes_on_an_enqueue_on_the_other,
                     *utf::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_wake");
  DlqdProcess a(DlqdOptions("{}", db));
  DlqdProcess b(DlqdOptions("{}", db));
  std::string q = fresh_queue("wake");
  HttpClient producer(b.port());
  std::vector<double> latencies_ms;
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> answered{false};
    Clock::time_point answered_at;
    HttpResponse answer;
    std::thread claimer([&] {
      HttpClient c(a.port());
      answer = claim(c, q, {{"wait_seconds", 20}});
      answered_at = Clock::now();
      answered = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // parked on node A
    enqueue(producer, q, std::to_string(round));
    auto enqueued_at = Clock::now();
    claimer.join();
    BOOST_REQUIRE(answer.json().at("claimed").as_bool());
    latencies_ms.push_back(std::max(0.0, std::chrono::duration<double, std::milli>(answered_at - enqueued_at).count()));
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  double median = latencies_ms[latencies_ms.size() / 2];
  BOOST_TEST_MESSAGE("cross-node wake-up: median " << median << " ms, max " << latencies_ms.back() << " ms");
  BOOST_TEST(median < 100.0);
  BOOST_TEST(latencies_ms.back() < 1000.0);  // the 1 s safety net would be the worst case
}

BOOST_AUTO_TEST_CASE(a_database_outage_answers_503_then_recovers_with_nothing_lost,
                     *utf::precondition(on_postgresql)) {
  OwnCluster cluster;
  DlqdProcess node(DlqdOptions("{}", cluster.url()));
  HttpClient c(node.port());
  std::string q = fresh_queue("outage");
  std::vector<std::int64_t> acked;
  for (int i = 0; i < 30; ++i) acked.push_back(enqueue(c, q, std::to_string(i)).at("id").as_int64());
  auto m = claim_one(c, q);
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, m.at("id").as_int64(), "succeed")).status, 200);

  cluster.stop();
  auto start = Clock::now();
  auto refused = c.post("/queues/" + q + "/messages", json::object{{"payload", "during outage"}});
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  BOOST_TEST(refused.status == 503);
  BOOST_TEST(str(refused.json(), "type") == "https://dlq.dev/problems/database-unavailable");
  BOOST_TEST(took < 10.0);
  BOOST_TEST(c.get("/queues/" + q + "/messages").status == 503);
  BOOST_TEST(c.get("/readyz").status == 503);
  BOOST_TEST(c.get("/healthz").status == 200);  // the process itself is fine

  cluster.resume();
  bool recovered = false;
  for (int i = 0; i < 100 && !recovered; ++i) {
    recovered = c.post("/queues/" + q + "/messages", json::object{{"payload", "after"}}).status == 201;
    if (!recovered) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  BOOST_TEST(recovered);
  BOOST_TEST(c.get("/readyz").status == 200);
  auto stats = c.get("/queues/" + q + "/stats").json();
  BOOST_TEST(stats.at("succeeded").as_int64() == 1);
  BOOST_TEST(stats.at("ready").as_int64() == 30);  // 29 acknowledged + 1 after recovery
  for (auto id : acked) BOOST_TEST(c.get(message_path(q, id)).status == 200);
}

// Incident events with two nodes, and a leader killed between two of them: each event arrives
// once, and the new leader does not tell again what the old one told (kept in the database).
BOOST_AUTO_TEST_CASE(incident_events_arrive_once_across_nodes_and_a_takeover,
                     *utf::precondition(on_postgresql)) {
  WebhookReceiver receiver;
  std::string db = create_pg_database("dlq_incident_alerts");
  const std::string config =
      R"({"database": {"leader_takeover_seconds": 2}, "alerts": {"webhook_url": "http://127.0.0.1:)" +
      std::to_string(receiver.port()) +
      R"(/hook", "min_interval_seconds": 1, "on_new_incident": true}})";
  DlqdProcess a(DlqdOptions(config, db));
  DlqdProcess b(DlqdOptions(config, db));
  BOOST_REQUIRE(eventually([&] { return leads(a.port()) != leads(b.port()); }, 10));
  DlqdProcess& leader = leads(a.port()) ? a : b;
  DlqdProcess& follower = leads(a.port()) ? b : a;
  auto events = [&](const std::string& fingerprint) {
    std::vector<std::string> out;
    for (const auto& r : receiver.received()) {
      auto body = json::parse(r.body);
      if (str(body, "event").starts_with("incident_") &&
          (fingerprint.empty() || str(body, "fingerprint") == fingerprint)) {
        out.push_back(str(body, "event"));
      }
    }
    return out;
  };
  HttpClient f(follower.port()), l(leader.port());
  for (int i = 0; i < 3; ++i) fail_to_death(f, "nodes-a", "relay", "relay refused");
  for (int i = 0; i < 2; ++i) fail_to_death(l, "nodes-b", "relay", "relay refused");
  BOOST_REQUIRE(eventually([&] { return events("").size() == 1; }, 15));
  const std::string relay = str(f.get("/dlq/incidents?job_type=relay").json().at("incidents").at(0),
                                "fingerprint");

  leader.kill9();
  BOOST_REQUIRE(eventually([&] { return leads(follower.port()); }, 15));
  for (int i = 0; i < 5; ++i) fail_to_death(f, "nodes-a", "relay", "relay refused");
  fail_to_death(f, "nodes-a", "billing", "card declined", "", "invalid_input");
  BOOST_REQUIRE(eventually([&] { return events("").size() == 3; }, 15));
  BOOST_TEST((events(relay) == std::vector<std::string>{"incident_opened", "incident_grew"}));
  // A further check changes nothing.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  BOOST_TEST(events("").size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

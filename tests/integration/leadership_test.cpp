// Leadership across real dlqd processes on one PostgreSQL database: exactly one node leads
// (dlq_leader in /metrics); kill -9 of the leader hands the leadership to the other within
// database.leader_takeover_seconds; a node that loses its lock connection stops its leader-only
// tasks at once and resumes them when it wins the lock back. SQLite: the process leads.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "integration/server_fixture.hpp"
#include "store/pg_leader.hpp"
#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"

namespace utf = boost::unit_test;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTakeoverSeconds = 2;
const std::string kConfig =
    R"({"database": {"leader_takeover_seconds": )" + std::to_string(kTakeoverSeconds) + "}}";

// A sample's value from /metrics (the first line that starts with `series`), or -1.
double metric(unsigned short port, const std::string& series) {
  auto body = HttpClient(port).get("/metrics").body;
  auto at = body.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + series.size() + 2));
}

bool leads(unsigned short port) { return metric(port, "dlq_leader") == 1; }

double heartbeats(unsigned short port) {
  return metric(port, "dlq_task_runs_total{task=\"leader-heartbeat\"}");
}

template <class Pred>
double seconds_until(Pred done, double limit_seconds) {
  auto start = Clock::now();
  while (!done() && Clock::now() - start < std::chrono::duration<double>(limit_seconds)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(leadership)

BOOST_AUTO_TEST_CASE(a_sqlite_node_leads_and_runs_its_leader_only_tasks,
                     *utf::precondition(on_sqlite)) {
  DlqdProcess node{DlqdOptions(kConfig)};
  seconds_until([&] { return heartbeats(node.port()) >= 1; }, 10);
  BOOST_TEST(leads(node.port()));
  BOOST_TEST(heartbeats(node.port()) >= 1);
}

BOOST_AUTO_TEST_CASE(two_nodes_one_leads_and_a_killed_leader_is_replaced_within_the_bound,
                     *utf::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_leader");
  DlqdProcess a(DlqdOptions(kConfig, db));
  DlqdProcess b(DlqdOptions(kConfig, db));
  seconds_until([&] { return leads(a.port()) || leads(b.port()); }, 10);
  // Several beats later, still exactly one.
  std::this_thread::sleep_for(std::chrono::milliseconds(kTakeoverSeconds * 1000));
  BOOST_REQUIRE(leads(a.port()) != leads(b.port()));
  DlqdProcess& leader = leads(a.port()) ? a : b;
  DlqdProcess& follower = leads(a.port()) ? b : a;
  BOOST_TEST(heartbeats(leader.port()) >= 1);
  BOOST_TEST(heartbeats(follower.port()) == 0);  // leader-only: never ran on the follower

  leader.kill9();
  double took = seconds_until([&] { return leads(follower.port()); }, 15);
  BOOST_TEST(leads(follower.port()));
  // The bound, plus this test's 20 ms polling of /metrics.
  BOOST_TEST(took <= kTakeoverSeconds + 0.5, "took " << took << " s");
  seconds_until([&] { return heartbeats(follower.port()) >= 1; }, 10);
  BOOST_TEST(heartbeats(follower.port()) >= 1);
}

BOOST_AUTO_TEST_CASE(a_node_that_loses_its_lock_connection_stops_its_leader_only_tasks,
                     *utf::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_leader_lost");
  DlqdProcess node(DlqdOptions(kConfig, db));
  seconds_until([&] { return leads(node.port()) && heartbeats(node.port()) >= 1; }, 10);
  BOOST_REQUIRE(leads(node.port()));

  // End the node's lock session and hold the lock ourselves: the node cannot win it back.
  PgSession test(db);
  test.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
             "WHERE application_name LIKE 'dlqd-leader-%'");
  test.query("SELECT pg_advisory_lock(" + std::to_string(dlq::store::kLeaderLockKey) + ")");
  double noticed = seconds_until([&] { return !leads(node.port()); }, 10);
  BOOST_TEST(!leads(node.port()));
  BOOST_TEST(noticed <= kTakeoverSeconds, "noticed after " << noticed << " s");
  // Log lines reach stderr within 50 ms (the sink gathers them).
  BOOST_TEST(seconds_until([&] {
               return node.log().find("leadership lost; leader-only tasks stop") != std::string::npos;
             }, 5) < 5);

  // Its leader-only task (renewing every takeover / 2 = 1 s) no longer runs (a body that had
  // already started when the loss arrived may finish: let it).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double runs = heartbeats(node.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(kTakeoverSeconds * 1500));
  BOOST_TEST(heartbeats(node.port()) == runs);
  BOOST_TEST(!leads(node.port()));

  // The lock is free again: the node leads within the bound and its task resumes.
  test.query("SELECT pg_advisory_unlock(" + std::to_string(dlq::store::kLeaderLockKey) + ")");
  double back = seconds_until([&] { return leads(node.port()); }, 15);
  BOOST_TEST(leads(node.port()));
  BOOST_TEST(back <= kTakeoverSeconds + 0.5, "took " << back << " s");
  seconds_until([&] { return heartbeats(node.port()) > runs; }, 10);
  BOOST_TEST(heartbeats(node.port()) > runs);
}

BOOST_AUTO_TEST_SUITE_END()

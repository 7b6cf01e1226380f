// Leadership of a database, on the real backends: SQLite's process leads at once; on PostgreSQL
// exactly one of several stores leads, another takes over within the bound when the leader closes
// or loses its lock connection. And the leadership record's conditional renewal.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "store/pg_leader.hpp"
#include "store/store_fixture.hpp"
#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"

using namespace dlq;
using namespace dlq::test;
namespace utf = boost::unit_test;
using std::chrono::steady_clock;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01
constexpr TimeMs kTakeoverMs = 1000;

// A store of its own (another dlqd node) that campaigns and remembers what it was told.
struct Node {
  explicit Node(const std::string& url) {
    store::SqlStoreOptions o;
    o.target = parse_database_url(url);
    o.leader_takeover_ms = kTakeoverMs;
    store = std::make_unique<store::SqlStore>(o);
    store->campaign([this](bool leading) {
      this->leading = leading;
      ++changes;
    });
  }
  ~Node() { close(); }
  void close() {
    if (store) store->close();
  }
  std::unique_ptr<store::SqlStore> store;
  std::atomic<bool> leading{false};
  std::atomic<int> changes{0};
};

// Waits up to `limit` for `done`; returns how long it took (or `limit` when it never happened).
template <class Pred>
std::chrono::milliseconds wait_for(Pred done, std::chrono::milliseconds limit) {
  auto start = steady_clock::now();
  while (!done() && steady_clock::now() - start < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock::now() - start);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store_leadership, StoreFixture)

BOOST_AUTO_TEST_CASE(the_leadership_record_is_renewed_by_its_node_and_taken_only_when_stale) {
  store::LeadershipRenewParams a{"node-a", T, T - 5000};
  auto first = wait(store->leadership_renew(a));
  BOOST_TEST(first.node == "node-a");
  BOOST_TEST(first.since == T);
  BOOST_TEST(first.renewed_at == T);

  // Its own node renews it and keeps `since`.
  a.now = T + 2000;
  a.stale_before = T + 2000 - 5000;
  auto renewed = wait(store->leadership_renew(a));
  BOOST_TEST(renewed.node == "node-a");
  BOOST_TEST(renewed.since == T);
  BOOST_TEST(renewed.renewed_at == T + 2000);

  // Another node cannot take a record renewed within the bound: a second run is a no-op.
  store::LeadershipRenewParams b{"node-b", T + 3000, T + 3000 - 5000};
  auto refused = wait(store->leadership_renew(b));
  BOOST_TEST(refused.node == "node-a");
  BOOST_TEST(refused.renewed_at == T + 2000);

  // Once stale, it is taken over, with a new `since`.
  b.now = T + 8000;
  b.stale_before = T + 8000 - 5000;
  auto taken = wait(store->leadership_renew(b));
  BOOST_TEST(taken.node == "node-b");
  BOOST_TEST(taken.since == T + 8000);
  BOOST_TEST(taken.renewed_at == T + 8000);
}

BOOST_AUTO_TEST_CASE(a_message_history_is_scoped_to_its_queue) {
  Message m = dead_message("q", "p");
  auto history = wait(store->message_history("q", m.id));
  BOOST_REQUIRE(history.has_value());
  BOOST_TEST(history->message.id == m.id);
  BOOST_TEST(history->attempts.size() == 1u);
  BOOST_TEST(!wait(store->message_history("other", m.id)).has_value());
  BOOST_TEST(!wait(store->message_history("q", m.id + 1000)).has_value());
}

BOOST_AUTO_TEST_CASE(sqlite_leads_at_once, *utf::precondition(on_sqlite)) {
  store->close();
  Node node(url);
  BOOST_TEST(node.leading.load());
  BOOST_TEST(node.changes.load() == 1);
}

BOOST_AUTO_TEST_CASE(two_nodes_exactly_one_leads_and_the_other_takes_over_within_the_bound,
                     *utf::precondition(on_postgresql)) {
  auto a = std::make_unique<Node>(url);
  auto b = std::make_unique<Node>(url);
  wait_for([&] { return a->leading || b->leading; }, std::chrono::seconds(10));
  // Give the follower several beats to (wrongly) take the lock too.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kTakeoverMs / 5));
  BOOST_REQUIRE(a->leading.load() != b->leading.load());

  auto& leader = a->leading ? a : b;
  auto& follower = a->leading ? b : a;
  leader->close();  // the process ends: its lock connection closes
  auto took = wait_for([&] { return follower->leading.load(); }, std::chrono::seconds(10));
  BOOST_TEST(follower->leading.load());
  BOOST_TEST(took.count() <= kTakeoverMs + 500, "took " << took.count() << " ms");
}

BOOST_AUTO_TEST_CASE(a_node_that_loses_its_lock_connection_is_told_at_once,
                     *utf::precondition(on_postgresql)) {
  Node node(url);
  wait_for([&] { return node.leading.load(); }, std::chrono::seconds(10));
  BOOST_REQUIRE(node.leading.load());

  // End the node's lock session and take the lock ourselves, so the node cannot win it back.
  PgSession test(url);
  test.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
             "'dlqd-leader-" + node.store->node_id() + "'");
  test.query("SELECT pg_advisory_lock(" + std::to_string(store::kLeaderLockKey) + ")");
  auto lost = wait_for([&] { return !node.leading.load(); }, std::chrono::seconds(10));
  BOOST_TEST(!node.leading.load());
  BOOST_TEST(lost.count() <= kTakeoverMs, "noticed after " << lost.count() << " ms");

  // While the lock is held elsewhere, the node stays a follower.
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kTakeoverMs / 5));
  BOOST_TEST(!node.leading.load());

  // Released: the node leads again within the bound.
  test.query("SELECT pg_advisory_unlock(" + std::to_string(store::kLeaderLockKey) + ")");
  auto back = wait_for([&] { return node.leading.load(); }, std::chrono::seconds(10));
  BOOST_TEST(node.leading.load());
  BOOST_TEST(back.count() <= kTakeoverMs + 500, "took " << back.count() << " ms");
}

BOOST_AUTO_TEST_SUITE_END()

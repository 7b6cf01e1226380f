// Cross-node change notifications: on PostgreSQL a node hears what another node committed (which
// queue, due when), never its own changes and never a change that was rolled back; on SQLite,
// where one process owns the file, nothing is delivered. Waits are bounded by deadlines.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "core/transitions.hpp"
#include "store/connection.hpp"
#include "store/prepared.hpp"
#include "store/store_fixture.hpp"
#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"

using namespace dlq;
using namespace dlq::test;
namespace utf = boost::unit_test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

struct Heard {
  std::string queue;
  TimeMs due;
};

// What a subscribed node was told, with a bounded wait for what it expects.
class Ear {
 public:
  store::ChangeCallback callback() {
    return [this](const std::string& queue, TimeMs due) {
      {
        std::lock_guard lock(mu_);
        heard_.push_back({queue, due});
      }
      cv_.notify_all();
    };
  }

  // Waits until `queue` was heard `times` times, up to `limit`; returns the due times heard for
  // it (fewer when the limit passed first).
  std::vector<TimeMs> wait_for(const std::string& queue, std::size_t times = 1,
                               std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, limit, [&] { return dues_locked(queue).size() >= times; });
    return dues_locked(queue);
  }

  std::vector<TimeMs> dues(const std::string& queue) {
    std::lock_guard lock(mu_);
    return dues_locked(queue);
  }

  std::size_t count() {
    std::lock_guard lock(mu_);
    return heard_.size();
  }

  // Waits up to `limit` for anything at all; true when something came.
  bool anything_within(std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return !heard_.empty(); });
  }

 private:
  std::vector<TimeMs> dues_locked(const std::string& queue) const {
    std::vector<TimeMs> out;
    for (const auto& h : heard_) {
      if (h.queue == queue) out.push_back(h.due);
    }
    return out;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Heard> heard_;
};

}  // namespace

struct ChangesFixture : StoreFixture {
  ChangesFixture() { store->subscribe_changes(ear.callback()); }
  // The listener thread calls into `ear`: it must stop before `ear` goes (the base class closes
  // the store again, which does nothing more).
  ~ChangesFixture() { store->close(); }

  // The listener LISTENs on a connection of its own, set up after subscribe_changes returned:
  // a node announces changes to queue "ready-check" until one is heard (bounded).
  void until_listening(store::Store& other) {
    for (int i = 0; i < 50 && ear.dues("ready-check").empty(); ++i) {
      // Payloads unique across the test: one test adds a unique constraint on them.
      insert_on(other, "ready-check", "ready-check-" + std::to_string(i), T);
      ear.wait_for("ready-check", 1, std::chrono::milliseconds(100));
    }
    BOOST_REQUIRE_MESSAGE(!ear.dues("ready-check").empty(), "the listener never listened");
  }

  Message insert_on(store::Store& s, const std::string& queue, const std::string& payload,
                    TimeMs now, std::optional<TimeMs> run_at = std::nullopt) {
    store::NewMessage n;
    n.payload = payload;
    n.run_at = run_at;
    return wait(s.messages_insert({queue, {n}, now})).value().at(0).message;
  }

  Ear ear;
};

BOOST_FIXTURE_TEST_SUITE(store_changes, ChangesFixture)

BOOST_AUTO_TEST_CASE(another_nodes_commits_arrive_with_their_queue_and_due_time,
                     *utf::precondition(on_postgresql)) {
  auto other = open_another();
  until_listening(*other);

  insert_on(*other, "born", "now", T);
  insert_on(*other, "later", "later", T, T + 60000);
  // A failure that schedules a retry: due at its retry_after.
  Message failing = insert_on(*other, "retry", "fails", T);
  store::ClaimParams c;
  c.queue = "retry";
  c.now = T;
  c.lease_expires_at = T + 30000;
  c.lease_token = "0123456789abcdef0123456789abcdef";
  BOOST_REQUIRE_EQUAL(wait(other->messages_claim(c)).size(), 1u);
  store::UpdateParams fail;
  fail.queue = "retry";
  fail.id = failing.id;
  fail.decide = [](const Message& m, const store::Related&) {
    core::FailInput in;
    in.retry_in_seconds = 45;
    return core::fail(m, in, QueuePolicy{}, T + 10, [] { return 0.0; });
  };
  auto failed = wait(other->message_update(fail));
  BOOST_REQUIRE(failed.has_value());
  BOOST_REQUIRE((failed->retry_after == T + 10 + 45000));

  auto born = ear.wait_for("born");
  BOOST_REQUIRE_EQUAL(born.size(), 1u);
  BOOST_TEST(born[0] <= T);  // 0 or past: now
  BOOST_TEST(ear.wait_for("later") == std::vector<TimeMs>{T + 60000}, boost::test_tools::per_element());
  // Heard twice: its insert (due now), then its failure (due at the retry).
  auto retry = ear.wait_for("retry", 2);
  BOOST_REQUIRE_EQUAL(retry.size(), 2u);
  BOOST_TEST(retry[0] <= T);
  BOOST_TEST(retry[1] == T + 10 + 45000);
  other->close();
}

// A change that never committed is never announced. Notifications arrive in commit order, so
// once a later committed change is heard, an earlier one that was announced would be too.
BOOST_AUTO_TEST_CASE(rolled_back_and_own_changes_do_not_arrive,
                     *utf::precondition(on_postgresql)) {
  auto other = open_another();
  until_listening(*other);

  // Rolled back: a commit that fails (a deferred constraint, checked only at COMMIT).
  insert_on(*other, "commit", "duplicate", T);
  BOOST_REQUIRE_EQUAL(ear.wait_for("commit").size(), 1u);
  pg_exec(url, "ALTER TABLE messages ADD CONSTRAINT test_unique_payload UNIQUE (payload) "
               "DEFERRABLE INITIALLY DEFERRED");
  BOOST_CHECK_THROW(insert_on(*other, "commit", "duplicate", T + 1), std::exception);
  pg_exec(url, "ALTER TABLE messages DROP CONSTRAINT test_unique_payload");

  // Rolled back: an update job whose second item throws after the first made a message due.
  Message m = insert_on(*other, "thrown", "thrown", T);
  store::ClaimParams c;
  c.queue = "thrown";
  c.now = T;
  c.lease_expires_at = T + 30000;
  c.lease_token = "0123456789abcdef0123456789abcdef";
  BOOST_REQUIRE_EQUAL(wait(other->messages_claim(c)).size(), 1u);
  BOOST_REQUIRE_EQUAL(ear.wait_for("thrown").size(), 1u);  // its insert
  std::vector<store::UpdateParams> batch(2);
  batch[0].queue = "thrown";
  batch[0].id = m.id;
  batch[0].decide = [](const Message& current, const store::Related&) {
    core::FailInput in;
    in.retry_in_seconds = 5;
    return core::fail(current, in, QueuePolicy{}, T, [] { return 0.0; });
  };
  batch[1].queue = "thrown";
  batch[1].id = m.id;
  batch[1].decide = [](const Message&, const store::Related&) -> Result<store::Change> {
    throw std::runtime_error("injected fault");
  };
  BOOST_CHECK_THROW(wait(other->messages_update(std::move(batch))), std::runtime_error);
  BOOST_TEST(to_string(wait(store->message_find("thrown", m.id))->status) == "processing");

  // This node's own change: it wakes its own waiters itself, the listener skips it.
  insert_on(*store, "own", "mine", T);

  // Committed after them, on whichever of the node's writer connections: a change the rollback
  // left behind to be announced with a later commit of its connection would show up by now.
  for (int i = 0; i < 4; ++i) insert_on(*other, "marker", "marker-" + std::to_string(i), T);
  BOOST_REQUIRE_EQUAL(ear.wait_for("marker", 4).size(), 4u);
  BOOST_TEST(ear.dues("thrown").size() == 1u);  // the insert only, not the rolled-back retry
  BOOST_TEST(ear.dues("commit").size() == 1u);
  BOOST_TEST(ear.dues("own").empty());
  other->close();
}

// An update whose decide refuses writes nothing, so it has nothing to announce.
BOOST_AUTO_TEST_CASE(a_refused_update_announces_nothing, *utf::precondition(on_postgresql)) {
  auto other = open_another();
  until_listening(*other);
  Message m = insert_on(*other, "refused", "x", T);
  BOOST_REQUIRE_EQUAL(ear.wait_for("refused").size(), 1u);
  store::UpdateParams replay;  // a pending message cannot be replayed
  replay.queue = "refused";
  replay.id = m.id;
  replay.decide = [](const Message& current, const store::Related& r) {
    return core::replay(current, r, {}, T);
  };
  BOOST_TEST(!wait(other->message_update(replay)).has_value());
  insert_on(*other, "marker", "last", T);
  BOOST_REQUIRE_EQUAL(ear.wait_for("marker").size(), 1u);
  BOOST_TEST(ear.dues("refused").size() == 1u);
  other->close();
}

// The NOTIFY travels with the COMMIT in one query (Connection::commit_with). A statement sent
// that way that fails takes the COMMIT with it: nothing of the transaction stays, commit()
// throws, and the connection is usable again at once (not left in an aborted transaction).
BOOST_AUTO_TEST_CASE(a_failed_statement_sent_with_the_commit_rolls_it_back,
                     *utf::precondition(on_postgresql)) {
  store::ConnectionOptions o;
  o.target = parse_database_url(url);
  store::Connection c(o);
  auto names = [&c] {
    long long n = -1;
    c.session() << "SELECT COUNT(*) FROM queue_names WHERE queue LIKE 'with-commit-%'", soci::into(n);
    return n;
  };
  c.begin_write();
  c.execute("INSERT INTO queue_names (queue) VALUES ('with-commit-lost')");
  c.commit_with("SELECT 1 / 0");
  BOOST_CHECK_THROW(c.commit(), soci::soci_error);
  BOOST_TEST(names() == 0);

  c.begin_write();
  c.execute("INSERT INTO queue_names (queue) VALUES ('with-commit-kept')");
  c.commit_with("SELECT 1");
  c.commit();
  BOOST_TEST(names() == 1);

  // A rollback forgets what was to go with the commit: the next COMMIT is a plain one.
  c.begin_write();
  c.commit_with("SELECT 1 / 0");
  c.rollback();
  c.begin_write();
  c.execute("INSERT INTO queue_names (queue) VALUES ('with-commit-after-rollback')");
  BOOST_CHECK_NO_THROW(c.commit());
  BOOST_TEST(names() == 2);
}

// A few rows of a young table, found by their ids; prepared again after 6, 12, 24… runs, or
// prepared once (Prepared).
template <long long ReplanFrom>
struct FindYoung {
  static constexpr long long kReplanFrom = ReplanFrom;
  std::string body, ids = "{1,2}";

  static std::string sql(const store::Dialect&) {
    return "SELECT body FROM young WHERE id = ANY(CAST(:ids AS bigint[]))";
  }
  void exchange(soci::statement& st, const store::Dialect&) {
    st.exchange(soci::into(body));
    st.exchange(soci::use(ids, "ids"));
  }
};

// A statement prepared again at doubling run counts (kReplanFrom: the group's lock and write of
// acknowledged rows) finds its rows by the primary key once the table has grown. One prepared
// once keeps the plan cached at its fifth run, made while the table held ten rows: a scan of the
// whole table (docs/performance.md, "Plans made for a young table").
BOOST_AUTO_TEST_CASE(a_statement_prepared_again_follows_its_table_as_it_grows,
                     *utf::precondition(on_postgresql)) {
  store::ConnectionOptions o;
  o.target = parse_database_url(url);
  store::Connection c(o);
  c.execute("CREATE TEMPORARY TABLE young (id bigint PRIMARY KEY, body text)");
  c.execute("INSERT INTO young SELECT i, repeat('x', 200) FROM generate_series(1, 10) AS i");
  c.execute("ANALYZE young");  // as autovacuum does early in a fresh database's life
  store::Prepared<FindYoung<6>> replanned;
  store::Prepared<FindYoung<0>> cached;
  auto scans = [&c] {
    long long n = -1;
    c.session() << "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'young'",
        soci::into(n);
    return n;
  };
  c.begin_write();
  for (int i = 0; i < 6; ++i) {
    BOOST_TEST(store::run_once(c, replanned.on(c)));
    BOOST_TEST(store::run_once(c, cached.on(c)));
  }
  c.execute("INSERT INTO young SELECT i, repeat('x', 200) FROM generate_series(11, 50000) AS i");
  const long long before = scans();
  BOOST_TEST(store::run_once(c, replanned.on(c)));
  BOOST_TEST(scans() == before);
  BOOST_TEST(store::run_once(c, cached.on(c)));
  BOOST_TEST(scans() == before + 1);
  c.rollback();
}

BOOST_AUTO_TEST_CASE(sqlite_delivers_nothing, *utf::precondition(on_sqlite)) {
  auto other = open_another();
  insert_on(*other, "q", "from another store", T);
  insert_on(*store, "q", "from this one", T);
  BOOST_TEST(!ear.anything_within(std::chrono::milliseconds(300)));
  BOOST_TEST(ear.count() == 0u);
  other->close();
}

BOOST_AUTO_TEST_SUITE_END()

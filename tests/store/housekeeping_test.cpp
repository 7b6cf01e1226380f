// Deleting finished messages (retention and POST /purge) on both databases: which ones go (by
// the time they entered their status), which queues are spared or chosen, that their history goes
// with them, and the one audit entry a batch that deleted something writes.
#include <boost/test/unit_test.hpp>

#include "core/transitions.hpp"
#include "store/connection.hpp"
#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

// The rows of `message`'s history the database still holds, read past the Store: once the
// message is gone, message_history cannot tell whether its history went too.
long long history_rows(const std::string& url, MessageId message) {
  store::ConnectionOptions o;
  o.target = parse_database_url(url);
  store::Connection c(o);
  long long n = -1, id = message;
  c.session() << "SELECT COUNT(*) FROM attempts WHERE message_id = :id", soci::into(n),
      soci::use(id, "id");
  return n;
}

// A purge of succeeded messages that records what its audit callback was given.
struct RecordingPurge {
  store::PurgeParams params;
  int audits = 0;
  std::vector<std::pair<std::string, long long>> audited;

  explicit RecordingPurge(TimeMs before) {
    params.before = before;
    params.audit = [this](const std::vector<std::pair<std::string, long long>>& by_queue) {
      ++audits;
      audited = by_queue;
      AuditEntry e;
      e.at = T + 10000;
      e.action = "retention_purge";
      e.details = R"({"queues":)" + std::to_string(by_queue.size()) + "}";
      return e;
    };
  }
};

}  // namespace

struct HousekeepingFixture : StoreFixture {
  // Inserted at `created`, claimed then, succeeded at `done_at` (its status_at).
  Message succeeded_at(const std::string& queue, TimeMs created, TimeMs done_at) {
    Message m = insert(queue, "done", created);
    auto claimed = claim(queue, created);
    BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
    BOOST_REQUIRE_EQUAL(claimed[0].id, m.id);
    store::UpdateParams p;
    p.queue = queue;
    p.id = m.id;
    p.decide = [done_at](const Message& current, const store::Related&) {
      return core::succeed(current, std::nullopt, done_at);
    };
    return wait(store->message_update(p)).value();
  }

  store::Purged purge(RecordingPurge& r) { return wait(store->messages_purge(r.params)); }

  bool exists(const Message& m) { return wait(store->message_find(m.queue, m.id)).has_value(); }
};

BOOST_FIXTURE_TEST_SUITE(store_housekeeping, HousekeepingFixture)

BOOST_AUTO_TEST_CASE(purge_deletes_what_entered_its_status_before_the_cutoff_with_its_history) {
  const TimeMs before = T + 1000;
  Message early = succeeded_at("a", T, T + 100);
  // Created long before the cutoff, finished after it: kept.
  Message finished_late = succeeded_at("a", T, T + 5000);
  // Finished before the cutoff, updated after it (only updated_at moves, as an edit would):
  // still purged, for it entered its status before.
  Message touched = succeeded_at("a", T, T + 200);
  store::UpdateParams touch;
  touch.queue = "a";
  touch.id = touched.id;
  touch.decide = [](const Message& m, const store::Related&) -> Result<store::Change> {
    store::Change c{m, {}, std::nullopt};
    c.next.updated_at = T + 9000;
    return c;
  };
  BOOST_REQUIRE(wait(store->message_update(touch)).has_value());
  BOOST_REQUIRE_EQUAL(wait(store->message_find("a", touched.id))->updated_at, T + 9000);
  Message other_queue = succeeded_at("b", T, T + 300);
  Message dead = dead_message_at("a", "another status", T + 100);
  BOOST_REQUIRE_EQUAL(history_rows(url, early.id), 1);

  RecordingPurge r(before);
  auto purged = purge(r);
  BOOST_TEST(purged.total == 3);
  using ByQueue = std::vector<std::pair<std::string, long long>>;
  BOOST_TEST((purged.by_queue == ByQueue{{"a", 2}, {"b", 1}}));
  BOOST_TEST(r.audits == 1);
  BOOST_TEST((r.audited == purged.by_queue));

  for (const Message& gone : {early, touched, other_queue}) {
    BOOST_TEST(!exists(gone), "message " << gone.id << " should be purged");
    BOOST_TEST(!wait(store->message_history(gone.queue, gone.id)).has_value());
    BOOST_TEST(history_rows(url, gone.id) == 0, "history of " << gone.id << " left behind");
  }
  BOOST_TEST(exists(finished_late));
  BOOST_TEST(wait(store->message_history("a", finished_late.id))->attempts.size() == 1u);
  BOOST_TEST(exists(dead));

  auto entries = wait(store->audit_list({}));
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST(entries[0].action == "retention_purge");
  BOOST_TEST(*entries[0].details == R"({"queues":2})");
}

BOOST_AUTO_TEST_CASE(purge_restricts_to_its_queue_and_spares_the_except_queues) {
  Message a = succeeded_at("a", T, T + 100);
  Message b = succeeded_at("b", T, T + 100);
  Message kept = succeeded_at("keep", T, T + 100);
  Message kept_too = succeeded_at("keep-too", T, T + 100);

  RecordingPurge only_b(T + 1000);
  only_b.params.queue = "b";
  auto first = purge(only_b);
  BOOST_TEST(first.total == 1);
  BOOST_REQUIRE_EQUAL(first.by_queue.size(), 1u);
  BOOST_TEST(first.by_queue[0].first == "b");
  BOOST_TEST(!exists(b));
  BOOST_TEST(exists(a));

  RecordingPurge all_but(T + 1000);
  all_but.params.except = {"keep", "keep-too"};
  auto second = purge(all_but);
  BOOST_TEST(second.total == 1);
  BOOST_REQUIRE_EQUAL(second.by_queue.size(), 1u);
  BOOST_TEST(second.by_queue[0].first == "a");
  BOOST_TEST(!exists(a));
  BOOST_TEST(exists(kept));
  BOOST_TEST(exists(kept_too));
  BOOST_TEST(wait(store->audit_list({})).size() == 2u);  // one per purge that deleted something
}

BOOST_AUTO_TEST_CASE(a_purge_that_deletes_nothing_writes_no_audit_entry) {
  Message recent = succeeded_at("a", T, T + 5000);
  Message pending = insert("a", "old but pending", T);
  Message elsewhere = succeeded_at("spared", T, T + 100);
  RecordingPurge r(T + 1000);
  r.params.except = {"spared"};
  auto purged = purge(r);
  BOOST_TEST(purged.total == 0);
  BOOST_TEST(purged.by_queue.empty());
  BOOST_TEST(r.audits == 0);
  BOOST_TEST(wait(store->audit_list({})).empty());
  for (const Message& m : {recent, pending, elsewhere}) BOOST_TEST(exists(m));
}

BOOST_AUTO_TEST_CASE(purge_takes_the_oldest_first_up_to_its_limit) {
  // Ids in the opposite order of the times they finished.
  Message newest = succeeded_at("a", T, T + 300);
  Message middle = succeeded_at("a", T, T + 200);
  Message oldest = succeeded_at("a", T, T + 100);
  RecordingPurge r(T + 1000);
  r.params.limit = 2;
  auto purged = purge(r);
  BOOST_TEST(purged.total == 2);
  BOOST_TEST(!exists(oldest));
  BOOST_TEST(!exists(middle));
  BOOST_TEST(exists(newest));
  BOOST_TEST(purge(r).total == 1);
  BOOST_TEST(!exists(newest));
  BOOST_TEST(r.audits == 2);
}

BOOST_AUTO_TEST_SUITE_END()

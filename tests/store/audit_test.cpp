// The audit writer on both databases: an entry commits with the change it records, and only
// then — not when the transition is refused, not on a dry run.
#include <boost/test/unit_test.hpp>

#include "core/transitions.hpp"
#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

// A replay of `id` that records an audit entry (as the core's replay does).
store::UpdateParams audited_replay(const std::string& queue, MessageId id, bool dry_run = false) {
  store::UpdateParams p;
  p.queue = queue;
  p.id = id;
  p.load_key_holders = true;
  p.dry_run = dry_run;
  p.decide = [](const Message& m, const store::Related& r) {
    auto change = core::replay(m, r, core::ReplayInput{}, T + 1000);
    if (change) {
      AuditEntry e;
      e.at = T + 1000;
      e.actor = "ops";
      e.action = "replay";
      e.queue = m.queue;
      e.message_ids = {m.id};
      e.reason = "fixed";
      e.details = R"({"status":"pending"})";
      change->audit = std::move(e);
    }
    return change;
  };
  return p;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store_audit, StoreFixture)

BOOST_AUTO_TEST_CASE(an_entry_commits_with_its_change_and_never_without_it) {
  Message m = dead_message("q", "p");
  // A dry run computes the change but writes neither it nor its entry.
  BOOST_TEST(wait(store->message_update(audited_replay("q", m.id, true))).has_value());
  BOOST_TEST(wait(store->audit_list({})).empty());

  auto done = wait(store->message_update(audited_replay("q", m.id)));
  BOOST_REQUIRE(done.has_value());
  auto entries = wait(store->audit_list({}));
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST(entries[0].id > 0);
  BOOST_TEST(entries[0].at == T + 1000);
  BOOST_TEST(*entries[0].actor == "ops");
  BOOST_TEST(entries[0].action == "replay");
  BOOST_TEST(*entries[0].queue == "q");
  BOOST_TEST(entries[0].message_ids == std::vector<MessageId>({m.id}));
  BOOST_TEST(!entries[0].filter.has_value());
  BOOST_TEST(*entries[0].reason == "fixed");
  BOOST_TEST(*entries[0].details == R"({"status":"pending"})");

  // Refused (the message is no longer dead): no second entry.
  BOOST_TEST(!wait(store->message_update(audited_replay("q", m.id))).has_value());
  BOOST_TEST(wait(store->audit_list({})).size() == 1u);
}

BOOST_AUTO_TEST_CASE(entries_page_newest_first_under_each_filter) {
  for (int i = 0; i < 4; ++i) {
    // A queue each: a replayed message would be claimed before the next one dies.
    Message m = dead_message(i < 3 ? "a" + std::to_string(i) : "b", "p" + std::to_string(i));
    BOOST_REQUIRE(wait(store->message_update(audited_replay(m.queue, m.id))).has_value());
  }
  store::AuditQuery page;
  page.limit = 2;
  auto first = wait(store->audit_list(page));
  BOOST_REQUIRE_EQUAL(first.size(), 2u);
  BOOST_TEST(first[0].id > first[1].id);
  page.before_id = first[1].id;
  auto second = wait(store->audit_list(page));
  BOOST_REQUIRE_EQUAL(second.size(), 2u);
  BOOST_TEST(second[0].id < first[1].id);

  // The same pages as ids (GET /audit fixes its page by them), and each entry found by its id.
  page.before_id.reset();
  std::vector<long long> ids;
  for (const auto& e : first) ids.push_back(e.id);
  BOOST_TEST(wait(store->audit_ids(page)) == ids, boost::test_tools::per_element());
  auto found = wait(store->audit_find(first[0].id));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->action == first[0].action);
  BOOST_TEST((found->queue == first[0].queue));
  BOOST_TEST(found->message_ids == first[0].message_ids, boost::test_tools::per_element());
  BOOST_TEST((found->details == first[0].details));
  BOOST_TEST(!wait(store->audit_find(first[0].id + 1000)).has_value());

  store::AuditQuery by_queue;
  by_queue.queue = "b";
  BOOST_TEST(wait(store->audit_list(by_queue)).size() == 1u);
  store::AuditQuery none;
  none.action = "dismiss";
  BOOST_TEST(wait(store->audit_list(none)).empty());
  store::AuditQuery window;
  window.since = T + 1000;
  window.until = T + 1000;
  window.actor = "ops";
  BOOST_TEST(wait(store->audit_list(window)).size() == 4u);
  window.since = T + 1001;
  BOOST_TEST(wait(store->audit_list(window)).empty());
}

BOOST_AUTO_TEST_SUITE_END()

// Incident alerts and mutes in the store, on both databases: the leader's check tells an opening
// and each power of ten once (the highest when several were reached), none while muted, throttled
// or with the events off, and again once the incident was emptied; two leaders checking at once
// tell each once; a mute is written with its audit entry, an unknown fingerprint is none.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

#include "store/incidents_fixture.hpp"
#include "support/preconditions.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const std::string C = "00000000000000cc";

}  // namespace

struct AlertsFixture : IncidentsFixture {
  // The leader's check at `now`; `interval`: alerts.min_interval_seconds in ms.
  std::vector<store::IncidentAlert> check(TimeMs now, bool send = true, TimeMs interval = 0,
                                          store::Store* on = nullptr) {
    store::IncidentAlertParams p;
    p.now = now;
    p.sent_before = now - interval;
    p.send = send;
    p.from_hour = T;
    p.hours = 1;
    return wait((on ? on : store.get())->incidents_alert(p));
  }

  std::optional<store::IncidentMuted> mute(const std::string& fp, std::optional<TimeMs> until,
                                           TimeMs now) {
    store::IncidentMuteParams p;
    p.fingerprint = fp;
    p.until = until;
    p.reason = until ? std::optional<std::string>("deploy at 06:00") : std::nullopt;
    p.now = now;
    p.audit = [fp, now](std::optional<TimeMs> previous) {
      AuditEntry e;
      e.at = now;
      e.actor = "oncall";
      e.action = "incident_mute";
      e.filter = R"({"fingerprint":")" + fp + R"("})";
      e.details = previous ? std::to_string(*previous) : "null";
      return e;
    };
    return wait(store->incident_mute(std::move(p)));
  }

  void die_n(const std::string& fp, int n, TimeMs at) {
    for (int i = 0; i < n; ++i) die("q1", fp, at + i);
  }
};

BOOST_FIXTURE_TEST_SUITE(store_incident_alerts, AlertsFixture)

BOOST_AUTO_TEST_CASE(an_opening_and_each_power_of_ten_are_told_once) {
  BOOST_TEST(check(T).empty());
  die_n(A, 5, T);
  auto opened = check(T + 100);
  BOOST_REQUIRE_EQUAL(opened.size(), 1u);
  BOOST_TEST(!opened[0].threshold.has_value());
  BOOST_TEST(opened[0].incident.fingerprint == A);
  BOOST_TEST(opened[0].incident.dead == 5);
  BOOST_TEST(opened[0].incident.queues.at(0).second == 5);
  BOOST_TEST(opened[0].incident.sample_ids.size() == 3u);
  BOOST_TEST(check(T + 200).empty());  // told: nothing new
  die_n(A, 25, T + 300);
  auto grew = check(T + 400);
  BOOST_REQUIRE_EQUAL(grew.size(), 1u);
  BOOST_TEST(grew[0].threshold.value_or(0) == 10);
  BOOST_TEST(grew[0].incident.dead == 30);
  die_n(A, 71, T + 500);
  // Throttled: the last event went at T + 400, the interval is 1 s.
  BOOST_TEST(check(T + 1000, true, 1000).empty());
  auto later = check(T + 1400, true, 1000);
  BOOST_REQUIRE_EQUAL(later.size(), 1u);
  BOOST_TEST(later[0].threshold.value_or(0) == 100);
  BOOST_TEST(later[0].incident.dead == 101);
  BOOST_TEST(column(A, "alert_level") == 100);
}

// An incident first seen with dead 30 is told opened once; its 10 counts as told with it.
BOOST_AUTO_TEST_CASE(an_opening_seen_late_counts_the_levels_it_reached) {
  die_n(A, 12, T);
  auto opened = check(T + 100);
  BOOST_REQUIRE_EQUAL(opened.size(), 1u);
  BOOST_TEST(!opened[0].threshold.has_value());
  BOOST_TEST(opened[0].incident.dead == 12);
  BOOST_TEST(check(T + 200).empty());
  BOOST_TEST(column(A, "alert_level") == 10);
}

BOOST_AUTO_TEST_CASE(muted_and_unwatched_incidents_count_what_they_reach_as_told) {
  die_n(A, 1, T);
  die_n(B, 1, T);
  BOOST_REQUIRE(mute(A, T + 10000, T + 50).has_value());
  auto first = check(T + 100);
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  BOOST_TEST(first[0].incident.fingerprint == B);
  die_n(A, 9, T + 200);
  BOOST_TEST(check(T + 300).empty());  // A reached 10 while muted
  BOOST_TEST(column(A, "alert_level") == 10);
  BOOST_TEST(column(A, "alert_sent_at") == -1);  // never sent
  mute(A, std::nullopt, T + 400);
  BOOST_TEST(check(T + 500).empty());  // nothing arrives when the mute ends
  // With the events off, what an incident reaches is marked told too.
  die_n(C, 10, T + 600);
  BOOST_TEST(check(T + 700, false).empty());
  BOOST_TEST(column(C, "alert_level") == 10);
  BOOST_TEST(check(T + 800).empty());
}

BOOST_AUTO_TEST_CASE(an_emptied_incident_that_dies_again_opens_again) {
  Message a1 = die("q1", A, T);
  Message a2 = die("q2", A, T + 1);
  BOOST_REQUIRE_EQUAL(check(T + 100).size(), 1u);
  dismiss(a1, T + 200);
  BOOST_TEST(column(A, "alert_level") == 1);  // still one dead
  replay(a2, T + 300);
  BOOST_TEST(column(A, "alert_level") == 0);  // emptied: forgotten
  BOOST_TEST(check(T + 400).empty());         // nothing dead, nothing to tell
  die("q1", A, T + 500);
  auto again = check(T + 600);
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST(!again[0].threshold.has_value());
  BOOST_TEST(again[0].incident.dead == 1);
}

BOOST_AUTO_TEST_CASE(a_mute_is_written_with_its_audit_entry) {
  BOOST_TEST(!mute(A, T + 5000, T).has_value());  // never died
  store::AuditQuery q;
  q.action = "incident_mute";
  BOOST_TEST(wait(store->audit_list(q)).empty());
  Message a = die("q1", A, T);
  auto muted = mute(A, T + 5000, T + 10);
  BOOST_REQUIRE(muted.has_value());
  BOOST_TEST(muted->muted_until.value_or(0) == T + 5000);
  BOOST_TEST(muted->mute_reason.value_or("") == "deploy at 06:00");
  auto found = wait(store->incident_find(A, T, 1));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->muted_until.value_or(0) == T + 5000);
  dismiss(a, T + 20);  // emptied: it can still be muted
  auto unmuted = mute(A, std::nullopt, T + 30);
  BOOST_REQUIRE(unmuted.has_value());
  BOOST_TEST(!unmuted->muted_until.has_value());
  BOOST_TEST(!unmuted->mute_reason.has_value());
  BOOST_TEST(column(A, "muted_until") == -1);
  auto entries = wait(store->audit_list(q));
  BOOST_REQUIRE_EQUAL(entries.size(), 2u);
  BOOST_TEST(entries[0].details.value_or("") == std::to_string(T + 5000));  // the mute it ended
  BOOST_TEST(entries[1].details.value_or("") == "null");
  BOOST_TEST(entries[1].actor.value_or("") == "oncall");
}

// Two leaders (a takeover) check at once: each event is told by one of them.
BOOST_AUTO_TEST_CASE(two_leaders_checking_at_once_tell_each_event_once,
                     *boost::unit_test::precondition(on_postgresql)) {
  for (const auto& fp : {A, B, C}) die_n(fp, 3, T);
  auto one = open_another();
  auto other = open_another();
  std::atomic<std::size_t> told{0};
  std::vector<std::thread> leaders;
  for (store::SqlStore* s : {one.get(), other.get()}) {
    leaders.emplace_back([&, s] {
      boost::asio::io_context local;
      auto f = boost::asio::co_spawn(local, [&]() -> boost::asio::awaitable<std::size_t> {
        store::IncidentAlertParams p;
        p.now = T + 100;
        p.sent_before = T;
        p.send = true;
        p.from_hour = T;
        p.hours = 1;
        co_return (co_await s->incidents_alert(p)).size();
      }, boost::asio::use_future);
      while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) local.run_one();
      told += f.get();
    });
  }
  for (auto& t : leaders) t.join();
  BOOST_TEST(told.load() == 3u);
  BOOST_TEST(check(T + 200).empty());
}

BOOST_AUTO_TEST_SUITE_END()

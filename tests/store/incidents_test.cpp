// Incidents' counts on both databases: after each change that moves a dead message with a
// fingerprint (a death by a failure or the reaper, a single replay, a run step, a dismissal
// single or batched, a purge, retention) the incident tables equal a recount of the messages
// table; the reads page and filter them; two nodes on one PostgreSQL count every death once.
#include <boost/test/unit_test.hpp>

#include <map>
#include <thread>

#include "store/incidents_fixture.hpp"
#include "support/preconditions.hpp"

using namespace dlq;
using namespace dlq::test;

BOOST_FIXTURE_TEST_SUITE(store_incidents, IncidentsFixture)

BOOST_AUTO_TEST_CASE(counts_equal_a_recount_after_every_change) {
  Message a1 = die("q1", A, T + 100);
  check("a death");
  Message a2 = die("q2", A, T + 200);
  Message a3 = die("q1", A, T + 300);
  Message b1 = die("q1", B, T + 50);
  check("deaths in two queues and two incidents");
  BOOST_TEST(column(A, "first_dead_at") == T + 100);
  BOOST_TEST(column(A, "last_dead_at") == T + 300);

  // The reaper: a lease that expires once too often.
  store::NewMessage n;
  n.payload = "reaped";
  store::InsertParams ins{"q3", {n}, T};
  Message r = wait(store->messages_insert(std::move(ins))).value().at(0).message;
  BOOST_REQUIRE_EQUAL(claim("q3", T).size(), 1u);
  store::ReapParams reap;
  reap.now = T + kMillisPerHour;
  reap.decide = [](const Message& m) {
    QueuePolicy one;
    one.max_lease_expiries = 1;
    auto c = core::expire_lease(m, one, T + kMillisPerHour, [] { return 0.0; });
    c.next.fingerprint = B;
    c.next.title = "lease expired";
    return c;
  };
  BOOST_REQUIRE_EQUAL(wait(store->messages_reap_expired(reap)).size(), 1u);
  check("the reaper");
  BOOST_TEST(column(B, "last_dead_at") == T + kMillisPerHour);

  // Leaving from either end moves the span to the members left.
  replay(a3, T + 400);
  check("a replay of the last death");
  BOOST_TEST(column(A, "last_dead_at") == T + 200);
  BOOST_TEST(column(A, "replayed") == 1);
  dismiss(a1, T + 500);
  check("a dismissal of the first death");
  BOOST_TEST(column(A, "first_dead_at") == T + 200);
  BOOST_TEST(column(A, "dismissed") == 1);

  // A replayed message that dies again counts again; its incident's deaths per hour keep both.
  replay(b1, T + 600);
  auto claimed = claim("q1", T + 600);
  BOOST_REQUIRE(claimed.size() == 1u && claimed[0].id == b1.id);
  fail(claimed[0], B, T + 700);
  check("a death after a replay");
  BOOST_TEST(column(B, "replayed") == 1);

  // A batch dismissal and a run step.
  Message a4 = die("q2", A, T + 800);
  store::DismissBatchParams batch;
  batch.ids = {a2.id, a4.id};
  batch.decide = [](const Message& m, const store::Related&) {
    return core::dismiss(m, std::nullopt, std::nullopt, T + 900);
  };
  batch.audit = [](const std::vector<MessageId>&, long long) {
    AuditEntry e;
    e.at = T + 900;
    e.action = "dismiss";
    return e;
  };
  BOOST_TEST(wait(store->messages_dismiss_batch(batch)).dismissed == 2);
  check("a batch dismissal");
  BOOST_TEST(column(A, "dead") == 0);
  BOOST_TEST(column(A, "dismissed") == 3);
  BOOST_TEST(column(A, "first_dead_at") == -1);  // NULL at dead 0

  Message b2 = die("q4", B, T + 1000);
  store::BatchPreview preview;
  preview.token_sha256 = "t";
  preview.kind = "replay";
  preview.created_at = T;
  preview.expires_at = T + 600000;
  BOOST_REQUIRE(wait(store->batch_preview_save(preview)));
  store::ConfirmParams confirm;
  confirm.token_sha256 = "t";
  confirm.kind = "replay";
  confirm.filter.fingerprint = B;
  confirm.decide = [](const store::ConfirmFacts& facts) -> Result<store::ConfirmPlan> {
    store::ReplayRun run;
    run.created_at = T;
    run.start_at = T;
    run.rate_per_second = 100;
    run.paced_from = T;
    run.updated_at = T;
    BOOST_TEST(facts.ids_now.size() == 3u);
    return store::ConfirmPlan{run, std::nullopt};
  };
  auto confirmed = wait(store->batch_confirm(confirm));
  BOOST_REQUIRE(confirmed.has_value());
  store::RunStepParams step;
  step.run_id = confirmed->run->id;
  step.max_replays = 2;
  step.max_items = 2;
  step.now = T + 1100;
  step.decide = [](const Message& m, const store::Related& rel) {
    return core::replay(m, rel, {}, T + 1100);
  };
  BOOST_TEST(wait(store->replay_run_step(step)).replayed.size() == 2u);
  check("a run step");
  BOOST_TEST(column(B, "dead") == 1);
  BOOST_TEST(column(B, "replayed") == 3);
  (void)b2;

  // Purge: the dead messages deleted leave their incidents.
  store::PurgeParams purge;
  purge.status = Status::dead;
  purge.before = T + 10 * kMillisPerHour;
  BOOST_TEST(wait(store->messages_purge(purge)).total >= 1);
  check("a purge");
  BOOST_TEST(column(B, "dead") == 0);
  BOOST_TEST(hours_rows(B) == 2);  // deaths per hour are never lowered
}

BOOST_AUTO_TEST_CASE(reads_sort_filter_and_page_incidents) {
  die("q1", A, T + 100);
  die("q2", A, T + 200);
  die("q1", B, T + 5 * kMillisPerHour);
  const std::string C = "00000000000000cc";
  Message c1 = die("q1", C, T + 300);
  die("q3", C, T + 400);

  store::IncidentQuery q;
  q.from_hour = T - kMillisPerHour;
  q.hours = 3;
  auto all = wait(store->incidents_list(q));
  BOOST_REQUIRE_EQUAL(all.size(), 3u);
  // dead desc, ties by fingerprint
  BOOST_TEST(all[0].fingerprint == A);
  BOOST_TEST(all[1].fingerprint == C);
  BOOST_TEST(all[2].fingerprint == B);
  const auto& a = all[0];
  BOOST_TEST(a.title == "title of " + A);
  BOOST_TEST((a.error_class == ErrorClass::timeout));
  BOOST_TEST((a.job_type == std::optional<std::string>("email")));
  BOOST_TEST((a.queues == std::vector<std::pair<std::string, long long>>{{"q1", 1}, {"q2", 1}}));
  BOOST_TEST(a.dead == 2);
  BOOST_TEST((a.first_dead_at == T + 100));
  BOOST_TEST((a.last_dead_at == T + 200));
  BOOST_TEST((a.per_hour == std::vector<long long>{0, 2, 0}));
  BOOST_TEST(a.sample_ids.size() == 2u);
  BOOST_TEST(a.sample_ids[0] > a.sample_ids[1]);  // highest first

  q.sort = store::IncidentSort::last_dead_at;
  auto newest = wait(store->incidents_list(q));
  BOOST_REQUIRE_EQUAL(newest.size(), 3u);
  BOOST_TEST(newest[0].fingerprint == B);
  BOOST_TEST(newest[1].fingerprint == C);
  BOOST_TEST(newest[2].fingerprint == A);

  // Paging after a position, in either sort.
  q.limit = 1;
  q.after = store::IncidentPosition{*newest[0].last_dead_at, newest[0].fingerprint};
  auto second = wait(store->incidents_list(q));
  BOOST_REQUIRE_EQUAL(second.size(), 1u);
  BOOST_TEST(second[0].fingerprint == C);
  q.sort = store::IncidentSort::dead;
  q.after = store::IncidentPosition{2, A};
  auto after_a = wait(store->incidents_list(q));
  BOOST_REQUIRE_EQUAL(after_a.size(), 1u);
  BOOST_TEST(after_a[0].fingerprint == C);
  q.after.reset();
  q.limit = 20;

  store::IncidentQuery by_queue = q;
  by_queue.queue = "q3";
  auto in_q3 = wait(store->incidents_list(by_queue));
  BOOST_REQUIRE_EQUAL(in_q3.size(), 1u);
  BOOST_TEST(in_q3[0].fingerprint == C);
  BOOST_TEST(in_q3[0].queues.size() == 2u);  // members stay whole-incident

  store::IncidentQuery window = q;
  window.since = T + 250;
  window.until = T + 350;
  auto in_window = wait(store->incidents_list(window));
  BOOST_REQUIRE_EQUAL(in_window.size(), 1u);
  BOOST_TEST(in_window[0].fingerprint == C);

  store::IncidentQuery other = q;
  other.job_type = "sms";
  BOOST_TEST(wait(store->incidents_list(other)).empty());
  other = q;
  other.error_class = ErrorClass::timeout;
  BOOST_TEST(wait(store->incidents_list(other)).size() == 3u);
  other.error_class = ErrorClass::auth;
  BOOST_TEST(wait(store->incidents_list(other)).empty());

  BOOST_TEST(wait(store->incident_find(C, T, 1))->dead == 2);
  BOOST_TEST(!wait(store->incident_find("00000000000000dd", T, 1)).has_value());

  // GET /dlq?fingerprint=: the incident's dead messages.
  store::DeadListParams dead;
  dead.filter.fingerprint = C;
  auto members = wait(store->messages_dead(dead));
  BOOST_REQUIRE_EQUAL(members.size(), 2u);
  BOOST_TEST(members[0].id == c1.id);

  // An incident with no dead message is not listed, nor found.
  replay(members[0], T + 500);
  replay(members[1], T + 500);
  BOOST_TEST(wait(store->incidents_list(q)).size() == 2u);
  BOOST_TEST(!wait(store->incident_find(C, T, 1)).has_value());
}

// /metrics' gauges: open incidents, the largest by dead then fingerprint, the rest's dead summed.
BOOST_AUTO_TEST_CASE(gauges_count_open_incidents_and_sum_the_rest) {
  auto none = wait(store->incident_gauges(2));
  BOOST_TEST(none.open == 0);
  BOOST_TEST(none.top.empty());
  BOOST_TEST(none.other_dead == 0);
  const std::string C = "00000000000000cc";
  die("q1", A, T + 100);
  die("q2", A, T + 200);
  die("q1", B, T + 300);
  Message c1 = die("q1", C, T + 400);
  die("q3", C, T + 500);
  die("q3", C, T + 600);
  auto g = wait(store->incident_gauges(2));
  BOOST_TEST(g.open == 3);
  BOOST_TEST((g.top == std::vector<std::pair<std::string, long long>>{{C, 3}, {A, 2}}));
  BOOST_TEST(g.other_dead == 1);
  auto unlabelled = wait(store->incident_gauges(0));
  BOOST_TEST(unlabelled.top.empty());
  BOOST_TEST(unlabelled.other_dead == 6);
  replay(c1, T + 700);
  auto after = wait(store->incident_gauges(5));
  BOOST_TEST(after.open == 3);
  BOOST_TEST((after.top == std::vector<std::pair<std::string, long long>>{{A, 2}, {C, 2}, {B, 1}}));
  BOOST_TEST(after.other_dead == 0);
}

BOOST_AUTO_TEST_CASE(retention_drops_old_hours_and_idle_incidents) {
  Message a = die("q1", A, T + 100);
  die("q1", B, T + 50 * kMillisPerHour);
  replay(a, T + 200);
  store::IncidentPruneParams p;
  p.hours_before = T + 48 * kMillisPerHour;
  auto pruned = wait(store->incidents_prune(p));
  BOOST_TEST(pruned.hours == 1);
  BOOST_TEST(pruned.incidents == 0);  // no idle_before: incidents are kept
  BOOST_TEST(hours_rows(A) == 0);
  BOOST_TEST(hours_rows(B) == 1);
  BOOST_TEST(column(A, "replayed") == 1);

  p.idle_before = T + 100;  // A's last death is not older than this
  BOOST_TEST(wait(store->incidents_prune(p)).incidents == 0);
  p.idle_before = T + 101;
  BOOST_TEST(wait(store->incidents_prune(p)).incidents == 1);
  BOOST_TEST(column(A, "replayed") == -1);  // gone
  BOOST_TEST(column(B, "dead") == 1);       // B has a dead message: kept
  p.idle_before = T + 100 * kMillisPerHour;
  BOOST_TEST(wait(store->incidents_prune(p)).incidents == 0);
  check("retention");
}

// Two nodes kill, replay and dismiss messages of the same incidents at once: every change is
// counted once, and the span is the members' own.
BOOST_AUTO_TEST_CASE(two_nodes_at_once_count_every_change_once,
                     *boost::unit_test::precondition(on_postgresql)) {
  const int kPerNode = 60;
  std::vector<Message> ready;
  for (int i = 0; i < 2 * kPerNode; ++i) {
    store::NewMessage n;
    n.max_retries = 1;
    n.payload = std::to_string(i);
    store::InsertParams ins{i % 2 ? "q1" : "q2", {n}, T};
    ready.push_back(wait(store->messages_insert(std::move(ins))).value().at(0).message);
  }
  BOOST_REQUIRE_EQUAL(claim("q1", T, 100).size(), static_cast<std::size_t>(kPerNode));
  BOOST_REQUIRE_EQUAL(claim("q2", T, 100).size(), static_cast<std::size_t>(kPerNode));
  std::array<boost::asio::io_context, 2> contexts;
  auto one = open_another();
  auto other = open_another();
  std::vector<std::thread> nodes;
  for (int node = 0; node < 2; ++node) {
    nodes.emplace_back([&, node] {
      boost::asio::io_context& local = contexts[static_cast<std::size_t>(node)];
      store::SqlStore& s = node == 0 ? *one : *other;
      auto run = [&](auto a) {
        auto f = boost::asio::co_spawn(local, std::move(a), boost::asio::use_future);
        local.restart();
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) local.run_one();
        return f.get();
      };
      for (int i = node; i < 2 * kPerNode; i += 2) {
        const Message& m = ready[static_cast<std::size_t>(i)];
        const TimeMs at = T + 10 + i;
        const std::string fp = i % 3 ? A : B;
        store::UpdateParams u;
        u.queue = m.queue;
        u.id = m.id;
        u.decide = [at, fp](const Message& current, const store::Related&) {
          auto c = core::fail(current, fatal(), QueuePolicy{}, at, [] { return 0.0; });
          if (c) {
            c->next.fingerprint = fp;
            c->next.title = "t";
          }
          return c;
        };
        Message dead = run(s.message_update(u)).value();
        if (i % 4 == 0) {  // some leave again at once, from either end of the span
          store::UpdateParams d;
          d.queue = dead.queue;
          d.id = dead.id;
          d.decide = [](const Message& current, const store::Related&) {
            return core::dismiss(current, std::nullopt, std::nullopt, T + 1000);
          };
          run(s.message_update(d)).value();
        }
      }
    });
  }
  for (auto& t : nodes) t.join();
  one->close();
  other->close();
  check("two nodes");
  long long dismissed = column(A, "dismissed") + column(B, "dismissed");
  BOOST_TEST(dismissed == 2 * kPerNode / 4);
  long long deaths = 0;
  raw->session() << "SELECT SUM(count) FROM incident_hours", soci::into(deaths);
  BOOST_TEST(deaths == 2 * kPerNode);
}

// Dead messages stored before fingerprints (a database of migration 011 or older, upgraded):
// the backfill reads them in id order with their last failed attempt's stack, and its write
// sets each one's fingerprint and title and counts it, once: written again, or by a second
// store, it changes nothing.
BOOST_AUTO_TEST_CASE(the_backfill_counts_messages_that_died_without_a_fingerprint_once) {
  std::vector<Message> old;
  for (int i = 0; i < 5; ++i) {
    Message dead = die(i % 2 ? "q1" : "q2", A, T + i);
    old.push_back(dead);
  }
  // As 011 left them: dead, no fingerprint, no incident.
  raw->session() << "UPDATE messages SET fingerprint = NULL, title = NULL";
  raw->session() << "DELETE FROM incidents";
  raw->session() << "DELETE FROM incident_queues";
  raw->session() << "DELETE FROM incident_hours";
  Message kept = die("q1", B, T + 10);  // one of today, counted already
  check("before the backfill");

  auto unprinted = wait(store->incidents_unprinted(0, 3));
  BOOST_REQUIRE_EQUAL(unprinted.size(), 3u);
  BOOST_TEST(unprinted[0].id == old[0].id);
  BOOST_TEST(unprinted[2].id == old[2].id);
  BOOST_TEST(unprinted[0].last_error.value_or("") == "boom");
  BOOST_TEST((unprinted[0].error_class == ErrorClass::timeout));
  BOOST_TEST(unprinted[0].dead_at == T);
  auto rest = wait(store->incidents_unprinted(unprinted.back().id, 1000));
  BOOST_REQUIRE_EQUAL(rest.size(), 2u);
  for (const auto& m : rest) unprinted.push_back(m);

  std::vector<store::PrintedDead> rows;
  for (const auto& m : unprinted) {
    store::PrintedDead p;
    p.id = m.id;
    p.fingerprint = A;
    p.title = "backfilled";
    p.incident_error_class = m.error_class;
    p.job_type = m.job_type;
    p.queue = m.queue;
    p.dead_at = m.dead_at;
    rows.push_back(p);
  }
  BOOST_TEST(wait(store->incidents_backfill(rows)) == 5);
  check("the backfill");
  BOOST_TEST(column(A, "dead") == 5);
  BOOST_TEST(column(A, "first_dead_at") == T);
  BOOST_TEST(column(A, "last_dead_at") == T + 4);
  BOOST_TEST(wait(store->incidents_unprinted(0, 1000)).empty());
  BOOST_TEST(wait(store->incidents_backfill(rows)) == 0);  // written already: not counted again
  check("the backfill, again");

  if (test_backend() == Backend::postgresql) {
    // Two stores backfill the same rows at once: each row is written and counted by one.
    raw->session() << "UPDATE messages SET fingerprint = NULL, title = NULL WHERE fingerprint = '" + A + "'";
    raw->session() << "DELETE FROM incidents WHERE fingerprint = '" + A + "'";
    raw->session() << "DELETE FROM incident_queues WHERE fingerprint = '" + A + "'";
    auto one = open_another();
    auto other = open_another();
    long long written[2] = {0, 0};
    std::vector<std::thread> nodes;
    for (int node = 0; node < 2; ++node) {
      nodes.emplace_back([&, node] {
        boost::asio::io_context local;
        store::SqlStore& s = node == 0 ? *one : *other;
        auto f = boost::asio::co_spawn(local, s.incidents_backfill(rows), boost::asio::use_future);
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) local.run_one();
        written[node] = f.get();
      });
    }
    for (auto& t : nodes) t.join();
    one->close();
    other->close();
    BOOST_TEST(written[0] + written[1] == 5);
    check("two stores at once");
  }
  BOOST_TEST(column(B, "dead") == 1);
  (void)kept;
}

BOOST_AUTO_TEST_SUITE_END()

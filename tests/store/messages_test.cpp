// The batch forms of the message operations (several updates in one job; acknowledgements that
// ride with a claim), the per-queue counts of GET /queues/{name}/stats and the write path's own
// counters, on both databases.
#include <boost/test/unit_test.hpp>

#include "core/transitions.hpp"
#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;
namespace asio = boost::asio;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01
const std::string kFirstToken = "11111111111111111111111111111111";
const std::string kSecondToken = "22222222222222222222222222222222";

// An acknowledgement as a worker sends it: under the lease it holds (or believes it holds).
store::UpdateParams ack(const std::string& queue, MessageId id, std::optional<std::string> lease,
                        TimeMs now) {
  store::UpdateParams p;
  p.queue = queue;
  p.id = id;
  p.decide = [lease = std::move(lease), now](const Message& m, const store::Related&) {
    return core::succeed(m, lease, now, true);
  };
  return p;
}

// Releases a claimed message back to pending, as a worker that gives it up does.
store::UpdateParams release(const std::string& queue, const Message& claimed, TimeMs now) {
  store::UpdateParams p;
  p.queue = queue;
  p.id = claimed.id;
  p.decide = [lease = *claimed.lease_id, now](const Message& m, const store::Related& related) {
    return core::release(m, related, lease, std::nullopt, now);
  };
  p.load_last_entry = true;  // as QueueService::release asks
  return p;
}

// Fails a claimed message (retryable, due again at once).
store::UpdateParams fail(const std::string& queue, const Message& claimed, TimeMs now) {
  store::UpdateParams p;
  p.queue = queue;
  p.id = claimed.id;
  p.decide = [lease = claimed.lease_id, now](const Message& m, const store::Related&) {
    core::FailInput in;
    in.lease_id = lease;
    in.retry_in_seconds = 0;
    return core::fail(m, in, QueuePolicy{}, now, [] { return 0.0; });
  };
  return p;
}

// A message whose first worker lost it: claimed under kFirstToken, released, claimed again under
// kSecondToken. Returns it as the first worker knew it (with the lease it no longer holds).
Message lost_by_first_worker(StoreFixture& f, const std::string& queue, TimeMs at) {
  Message m = f.insert(queue, "lost", at);
  auto first = f.claim(queue, at, 1, kFirstToken);
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  BOOST_REQUIRE_EQUAL(first[0].id, m.id);
  BOOST_REQUIRE(f.wait(f.store->message_update(release(queue, first[0], at))).has_value());
  BOOST_REQUIRE_EQUAL(f.claim(queue, at, 1, kSecondToken).size(), 1u);
  return first[0];
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store_messages, StoreFixture)

BOOST_AUTO_TEST_CASE(messages_update_gives_each_item_its_own_outcome) {
  Message stale = lost_by_first_worker(*this, "q", T);
  Message ok = insert("q", "ok", T + 1);
  auto claimed = claim("q", T + 1, 1, kFirstToken);
  BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
  BOOST_REQUIRE_EQUAL(claimed[0].id, ok.id);

  std::vector<store::UpdateParams> batch;
  batch.push_back(ack("q", ok.id, claimed[0].lease_id, T + 5));
  batch.push_back(ack("q", ok.id + 1000, claimed[0].lease_id, T + 5));
  batch.push_back(ack("q", stale.id, stale.lease_id, T + 5));
  auto out = wait(store->messages_update(std::move(batch)));
  BOOST_REQUIRE_EQUAL(out.size(), 3u);
  BOOST_REQUIRE(out[0].has_value());
  BOOST_TEST(to_string(out[0]->status) == "succeeded");
  BOOST_REQUIRE(!out[1].has_value());
  BOOST_TEST((out[1].error().code == Errc::message_not_found));
  BOOST_REQUIRE(!out[2].has_value());
  BOOST_TEST((out[2].error().code == Errc::lease_lost));

  // The ok item landed though its neighbours were refused; the lost one is the second worker's.
  auto done = wait(store->message_find("q", ok.id));
  BOOST_TEST(to_string(done->status) == "succeeded");
  BOOST_TEST(done->updated_at == T + 5);
  auto still = wait(store->message_find("q", stale.id));
  BOOST_TEST(to_string(still->status) == "processing");
  BOOST_TEST((*still->lease_id == kSecondToken + "-" + std::to_string(stale.id)));
  BOOST_TEST(still->updated_at == T);
  // Its history holds the release only: no success was recorded for the stale lease.
  auto history = wait(store->message_history("q", stale.id))->attempts;
  BOOST_REQUIRE_EQUAL(history.size(), 1u);
  BOOST_TEST(to_string(history[0].outcome) == "released");
}

BOOST_AUTO_TEST_CASE(failed_acks_do_not_stop_the_claim_they_ride_with) {
  Message stale = lost_by_first_worker(*this, "q", T);
  Message ok = insert("q", "ok", T + 1);
  auto held = claim("q", T + 1, 1, kFirstToken);
  BOOST_REQUIRE_EQUAL(held.size(), 1u);
  BOOST_REQUIRE_EQUAL(held[0].id, ok.id);
  Message next = insert("q", "next", T + 2);

  std::vector<store::UpdateParams> acks;
  acks.push_back(ack("q", ok.id + 1000, held[0].lease_id, T + 10));  // not found
  acks.push_back(ack("q", stale.id, stale.lease_id, T + 10));        // lease lost
  acks.push_back(ack("q", ok.id, held[0].lease_id, T + 10));         // ok
  store::ClaimParams more;
  more.queue = "q";
  more.now = T + 10;
  more.max = 5;
  more.lease_expires_at = T + 30010;
  more.lease_token = "33333333333333333333333333333333";
  auto before = store->write_stats();
  auto out = wait(store->messages_ack_and_claim(std::move(acks), more));
  auto after = store->write_stats();

  BOOST_REQUIRE_EQUAL(out.acked.size(), 3u);
  BOOST_TEST((out.acked[0].error().code == Errc::message_not_found));
  BOOST_TEST((out.acked[1].error().code == Errc::lease_lost));
  BOOST_REQUIRE(out.acked[2].has_value());
  BOOST_TEST(to_string(out.acked[2]->status) == "succeeded");
  BOOST_REQUIRE_EQUAL(out.claimed.size(), 1u);  // the lost message is still the other worker's
  BOOST_TEST(out.claimed[0].id == next.id);
  BOOST_TEST((*out.claimed[0].lease_id == more.lease_token + "-" + std::to_string(next.id)));
  // One job, one commit.
  BOOST_TEST(after.operations - before.operations == 1u);
  BOOST_TEST(after.commits - before.commits == 1u);

  BOOST_TEST(to_string(wait(store->message_find("q", ok.id))->status) == "succeeded");
  auto claimed = wait(store->message_find("q", next.id));
  BOOST_TEST(to_string(claimed->status) == "processing");
  BOOST_TEST((claimed->lease_id == out.claimed[0].lease_id));
  auto lost = wait(store->message_find("q", stale.id));
  BOOST_TEST((*lost->lease_id == kSecondToken + "-" + std::to_string(stale.id)));
}

// A claim's payloads come back up to its budget, in claim order: the first message's always, then
// the next ones' while they fit; from the first that does not, every later message comes back
// without its payload, though claimed like the others.
BOOST_AUTO_TEST_CASE(a_claim_withholds_the_payloads_past_its_budget_as_a_tail) {
  std::vector<std::string> payloads{std::string(100, 'a'), std::string(100, 'b'),
                                    std::string(300, 'c'), std::string(10, 'd')};
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    insert("budget", payloads[i], T + static_cast<TimeMs>(i));
  }
  store::ClaimParams p;
  p.queue = "budget";
  p.now = T + 10;
  p.max = 10;
  p.lease_expires_at = T + 30010;
  p.lease_token = kFirstToken;
  p.payload_budget = 250;
  auto out = wait(store->messages_claim(p));
  BOOST_REQUIRE_EQUAL(out.size(), 4u);
  BOOST_TEST(out[0].payload == payloads[0]);
  BOOST_TEST(out[1].payload == payloads[1]);
  BOOST_TEST(!out[0].payload_withheld);
  BOOST_TEST(!out[1].payload_withheld);
  for (std::size_t i = 2; i < out.size(); ++i) {
    BOOST_TEST(out[i].payload_withheld);  // the 10 bytes of the last would fit: still withheld
    BOOST_TEST(out[i].payload.empty());
    auto stored = wait(store->message_find("budget", out[i].id));
    BOOST_TEST(stored->payload == payloads[i]);
    BOOST_TEST((stored->lease_id == out[i].lease_id));
    BOOST_TEST(!stored->payload_withheld);
  }

  // The first message comes back whole even when it alone exceeds the budget.
  insert("first", std::string(300, 'e'), T);
  insert("first", std::string(1, 'f'), T + 1);
  p.queue = "first";
  p.payload_budget = 50;
  out = wait(store->messages_claim(p));
  BOOST_REQUIRE_EQUAL(out.size(), 2u);
  BOOST_TEST(out[0].payload.size() == 300u);
  BOOST_TEST(!out[0].payload_withheld);
  BOOST_TEST(out[1].payload_withheld);
}

// Every status in one queue, each made at a time of the test's choosing; another queue apart.
BOOST_AUTO_TEST_CASE(queue_stats_count_each_status_and_the_oldest_ready_and_dead) {
  // First the messages that pass through a claim (a due pending one would be claimed instead).
  insert("s", "processing", T);
  BOOST_REQUIRE_EQUAL(claim("s", T).size(), 1u);
  Message done = insert("s", "succeeded", T);
  BOOST_REQUIRE_EQUAL(claim("s", T, 1, kFirstToken).size(), 1u);
  BOOST_REQUIRE(wait(store->message_update(ack("s", done.id, std::nullopt, T))).has_value());
  dead_message_at("s", "dead later", T + 300);
  dead_message_at("s", "dead earlier", T + 200);
  Message dismissed = dead_message_at("s", "dismissed, dead earliest", T + 100);
  store::UpdateParams dismiss;
  dismiss.queue = "s";
  dismiss.id = dismissed.id;
  dismiss.decide = [](const Message& m, const store::Related&) {
    return core::dismiss(m, std::nullopt, std::nullopt, T + 400);
  };
  BOOST_REQUIRE(wait(store->message_update(dismiss)).has_value());
  // Then the pending ones. Ready since T + 100; ready since its retry time T + 50, though it
  // became pending at T + 200; scheduled for T + 10000 (and pending since T: not ready, so not
  // the oldest ready).
  insert("s", "ready", T + 100);
  store::NewMessage overdue;
  overdue.run_at = T + 50;
  insert("s", "ready since its run_at", T + 200, overdue);
  store::NewMessage later;
  later.run_at = T + 10000;
  insert("s", "scheduled", T, later);
  insert("t", "elsewhere", T + 1);

  auto one = wait(store->queue_stats(std::string("s"), T + 1000));
  BOOST_REQUIRE_EQUAL(one.size(), 1u);
  const auto& s = one[0];
  BOOST_TEST(s.queue == "s");
  BOOST_TEST(s.ready == 2);
  BOOST_TEST(s.scheduled == 1);
  BOOST_TEST(s.processing == 1);
  BOOST_TEST(s.succeeded == 1);
  BOOST_TEST(s.dead == 2);
  BOOST_TEST(s.dismissed == 1);
  BOOST_TEST((s.oldest_ready_since == T + 50));
  BOOST_TEST((s.oldest_dead_at == T + 200));  // the dismissed one died earlier: not dead now

  // The scheduled one is ready from its retry time on, not a millisecond before.
  BOOST_TEST(wait(store->queue_stats(std::string("s"), T + 9999)).at(0).scheduled == 1);
  auto due = wait(store->queue_stats(std::string("s"), T + 10000)).at(0);
  BOOST_TEST(due.scheduled == 0);
  BOOST_TEST(due.ready == 3);
  BOOST_TEST((due.oldest_ready_since == T + 50));

  auto all = wait(store->queue_stats(std::nullopt, T + 1000));
  BOOST_REQUIRE_EQUAL(all.size(), 2u);
  BOOST_TEST(all[0].queue == "s");
  BOOST_TEST(all[0].dead == 2);
  BOOST_TEST(all[1].queue == "t");
  BOOST_TEST(all[1].ready == 1);
  BOOST_TEST(all[1].dead == 0);
  BOOST_TEST((all[1].oldest_ready_since == T + 1));
  BOOST_TEST(!all[1].oldest_dead_at.has_value());
}

BOOST_AUTO_TEST_CASE(queue_stats_of_a_queue_without_messages_are_zeros) {
  insert("busy", "x", T);
  auto none = wait(store->queue_stats(std::string("idle"), T));
  BOOST_REQUIRE_EQUAL(none.size(), 1u);
  BOOST_TEST(none[0].queue == "idle");
  BOOST_TEST(none[0].ready + none[0].scheduled + none[0].processing + none[0].succeeded +
                 none[0].dead + none[0].dismissed ==
             0);
  BOOST_TEST(!none[0].oldest_ready_since.has_value());
  BOOST_TEST(!none[0].oldest_dead_at.has_value());
  // Every queue: only those that have messages.
  auto all = wait(store->queue_stats(std::nullopt, T));
  BOOST_REQUIRE_EQUAL(all.size(), 1u);
  BOOST_TEST(all[0].queue == "busy");
}

BOOST_AUTO_TEST_CASE(write_stats_grow_with_writes_and_their_histograms_agree) {
  auto start = store->write_stats();
  Message first = insert("q", "one", T);
  auto one = store->write_stats();
  BOOST_TEST(one.operations - start.operations == 1u);
  BOOST_TEST(one.commits - start.commits == 1u);
  wait(store->message_find("q", first.id));  // reads are not writes
  BOOST_TEST(store->write_stats().operations == one.operations);

  constexpr int kWrites = 60;
  std::vector<std::future<Result<std::vector<store::Inserted>>>> futures;
  for (int i = 0; i < kWrites; ++i) {
    store::NewMessage n;
    n.payload = std::to_string(i);
    futures.push_back(
        asio::co_spawn(ioc, store->messages_insert({"q", {n}, T}), asio::use_future));
  }
  ioc.restart();
  for (auto& f : futures) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    f.get();
  }
  auto s = store->write_stats();
  BOOST_TEST(s.operations - one.operations == static_cast<std::uint64_t>(kWrites));
  BOOST_TEST(s.commits > one.commits);
  BOOST_TEST(s.commits - one.commits <= static_cast<std::uint64_t>(kWrites));
  // Per commit: its COMMIT and its group's statements; per write: its wait and its way back.
  BOOST_TEST(s.commit_seconds.count() == s.commits);
  BOOST_TEST(s.statements_seconds.count() == s.commits);
  BOOST_TEST(s.wait_seconds.count() == s.operations);
  BOOST_TEST(s.handback_seconds.count() == s.operations);
  BOOST_TEST(s.commit_seconds.sum_seconds > 0.0);
  BOOST_TEST(s.statements_seconds.sum_seconds > 0.0);
}

// Issue 31, item 5: a release after a release updates its entry (count, the latest attempt,
// finish and worker, the first claim time); any other entry ends the run, and the next release
// starts a new one. A page of the history skips `after` entries and says how many are stored.
BOOST_AUTO_TEST_CASE(releases_fold_into_one_history_entry_until_another_entry_comes) {
  Message m = insert("q", "x", T);
  for (int i = 0; i < 3; ++i) {
    store::ClaimParams p;
    p.queue = "q";
    p.now = T + 10 * i;
    p.lease_expires_at = p.now + 30000;
    p.lease_token = kFirstToken;
    p.worker = "worker-" + std::to_string(i);
    auto held = wait(store->messages_claim(std::move(p)));
    BOOST_REQUIRE_EQUAL(held.size(), 1u);
    BOOST_REQUIRE(wait(store->message_update(release("q", held[0], T + 10 * i + 5))).has_value());
  }
  auto folded = wait(store->message_history("q", m.id));
  BOOST_REQUIRE_EQUAL(folded->attempts.size(), 1u);
  BOOST_TEST(folded->stored == 1);
  const auto& entry = folded->attempts[0];
  BOOST_TEST(to_string(entry.outcome) == "released");
  BOOST_TEST(entry.count == 3);
  BOOST_TEST(entry.attempt == 3);
  BOOST_TEST(*entry.claimed_at == T);
  BOOST_TEST(entry.finished_at == T + 25);
  BOOST_TEST(entry.worker.value_or("") == "worker-2");
  BOOST_TEST(folded->message.retry_count == 0);  // releases are no failures

  auto held = claim("q", T + 30, 1, kFirstToken);
  BOOST_REQUIRE(wait(store->message_update(fail("q", held[0], T + 35))).has_value());
  held = claim("q", T + 40, 1, kFirstToken);
  BOOST_REQUIRE(wait(store->message_update(release("q", held[0], T + 45))).has_value());
  auto after_fail = wait(store->message_history("q", m.id));
  BOOST_REQUIRE_EQUAL(after_fail->attempts.size(), 3u);
  BOOST_TEST(to_string(after_fail->attempts[1].outcome) == "failed");
  BOOST_TEST(after_fail->attempts[1].count == 1);
  BOOST_TEST(to_string(after_fail->attempts[2].outcome) == "released");
  BOOST_TEST(after_fail->attempts[2].count == 1);
  BOOST_TEST(after_fail->attempts[2].attempt == 5);
  BOOST_TEST(*after_fail->attempts[2].claimed_at == T + 40);

  auto page = wait(store->message_history("q", m.id, {1, 1}));
  BOOST_TEST(page->stored == 3);
  BOOST_REQUIRE_EQUAL(page->attempts.size(), 1u);
  BOOST_TEST(to_string(page->attempts[0].outcome) == "failed");
  BOOST_TEST(wait(store->message_history("q", m.id, {3, 10}))->attempts.empty());
}

BOOST_AUTO_TEST_SUITE_END()

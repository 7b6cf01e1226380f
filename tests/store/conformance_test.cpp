// One suite, every backend: what the Store promises, checked against the real database.
#include <boost/test/unit_test.hpp>

#include <array>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "core/transitions.hpp"
#include "store/store_fixture.hpp"
#include "support/pg_admin.hpp"

using namespace dlq;
using namespace dlq::test;
namespace asio = boost::asio;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

store::ClaimParams claim_params(const std::string& queue, TimeMs now, int max = 1) {
  store::ClaimParams p;
  p.queue = queue;
  p.now = now;
  p.max = max;
  p.lease_expires_at = now + 30000;
  p.lease_token = "0123456789abcdef0123456789abcdef";
  p.worker = "w1";
  return p;
}

store::UpdateParams succeed_params(const std::string& queue, MessageId id, TimeMs now) {
  store::UpdateParams p;
  p.queue = queue;
  p.id = id;
  p.decide = [now](const Message& m, const store::Related&) {
    return core::succeed(m, std::nullopt, now);
  };
  return p;
}

// Every field of what the store answered equals what it stored.
void check_same_message(const Message& f, const Message& m) {
  BOOST_TEST(f.id == m.id);
  BOOST_TEST((f.queue == m.queue));
  BOOST_TEST((f.payload == m.payload));
  BOOST_TEST(to_string(f.status) == to_string(m.status));
  BOOST_TEST((f.retry_count == m.retry_count));
  BOOST_TEST((f.max_retries == m.max_retries));
  BOOST_TEST((f.retry_after == m.retry_after));
  BOOST_TEST((f.last_error == m.last_error));
  BOOST_TEST((f.created_at == m.created_at));
  BOOST_TEST((f.updated_at == m.updated_at));
  BOOST_TEST((f.priority == m.priority));
  BOOST_TEST((f.job_type == m.job_type));
  BOOST_TEST((f.idempotency_key == m.idempotency_key));
  BOOST_TEST(f.error_class.has_value() == m.error_class.has_value());
  BOOST_TEST(f.dead_reason.has_value() == m.dead_reason.has_value());
  BOOST_TEST((f.checkpoint == m.checkpoint));
  BOOST_TEST((f.lease_expiries == m.lease_expiries));
  BOOST_TEST((f.attempts == m.attempts));
  BOOST_TEST((f.first_attempt_at == m.first_attempt_at));
  BOOST_TEST((f.last_attempt_at == m.last_attempt_at));
  BOOST_TEST((f.dead_at == m.dead_at));
  BOOST_TEST((f.replay_count == m.replay_count));
  BOOST_TEST((f.lease_expires_at == m.lease_expires_at));
  BOOST_TEST((f.lease_id == m.lease_id));
  BOOST_TEST((f.worker == m.worker));
  BOOST_TEST((f.life_started_at == m.life_started_at));
  BOOST_TEST((f.status_at == m.status_at));
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store_conformance, StoreFixture)

BOOST_AUTO_TEST_CASE(insert_stores_a_pending_message) {
  store::NewMessage extra;
  extra.max_retries = 7;
  extra.priority = 4;
  extra.job_type = "email";
  Message m = insert("q", "payload \xE2\x82\xAC", T, extra);
  BOOST_TEST(m.id > 0);
  BOOST_TEST(m.queue == "q");
  BOOST_TEST(m.payload == "payload \xE2\x82\xAC");
  BOOST_TEST(to_string(m.status) == "pending");
  BOOST_TEST(m.max_retries == 7);
  BOOST_TEST(m.priority == 4);
  BOOST_TEST(*m.job_type == "email");
  BOOST_TEST(m.created_at == T);
  BOOST_TEST(m.updated_at == T);
  BOOST_TEST(!m.retry_after.has_value());
  Message second = insert("q", "b", T);
  BOOST_TEST(second.id > m.id);
  auto found = wait(store->message_find("q", m.id));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->payload == m.payload);
  BOOST_TEST(!wait(store->message_find("other", m.id)).has_value());
}

// The insert answers with the message it built from its input (no RETURNING): every field must
// be what the database stored.
BOOST_AUTO_TEST_CASE(an_inserted_message_reads_back_as_it_was_answered) {
  store::NewMessage extra;
  extra.max_retries = 0;
  extra.priority = -3;
  extra.job_type = "report";
  extra.idempotency_key = "key-1";
  extra.run_at = T + 5000;
  for (const Message& m : {insert("q", R"({"a":[1,2]})", T, extra), insert("q", "{}", T + 1)}) {
    auto found = wait(store->message_find("q", m.id));
    BOOST_REQUIRE(found.has_value());
    check_same_message(*found, m);
  }
}

BOOST_AUTO_TEST_CASE(claimed_messages_read_back_as_they_were_answered) {
  insert("q", "a", T);
  insert("q", "b", T);
  auto p = claim_params("q", T + 10, 2);
  auto claimed = wait(store->messages_claim(p));
  BOOST_REQUIRE_EQUAL(claimed.size(), 2u);
  for (const Message& m : claimed) {
    BOOST_TEST((m.lease_id == p.lease_token + "-" + std::to_string(m.id)));
    BOOST_TEST(m.attempts == 1);
    BOOST_TEST((m.first_attempt_at == T + 10));
    auto found = wait(store->message_find("q", m.id));
    BOOST_REQUIRE(found.has_value());
    check_same_message(*found, m);
  }
}

BOOST_AUTO_TEST_CASE(ids_beyond_32_bits_round_trip) {
  Message m = insert("q", "x", T);
  store::UpdateParams p = succeed_params("q", m.id, T);
  // Times beyond 2^31 ms (every real time) must not be truncated either.
  BOOST_TEST(m.created_at == T);
  BOOST_TEST(wait(store->message_find("q", m.id))->created_at == T);
}

BOOST_AUTO_TEST_CASE(batch_insert_keeps_input_order_and_deduplicates_by_key) {
  store::InsertParams p{"q", {}, T};
  for (const char* key : {"a", "b", "a"}) {
    store::NewMessage n;
    n.payload = key;
    n.idempotency_key = key;
    p.messages.push_back(n);
  }
  auto out = wait(store->messages_insert(p)).value();
  BOOST_REQUIRE_EQUAL(out.size(), 3u);
  BOOST_TEST(out[0].created);
  BOOST_TEST(out[1].created);
  BOOST_TEST(!out[2].created);
  BOOST_TEST(out[2].message.id == out[0].message.id);
}

// Without keys, PostgreSQL inserts a batch in one statement: each answer must still be its own
// input's message, in input order, as stored.
BOOST_AUTO_TEST_CASE(a_batch_without_keys_reads_back_in_input_order) {
  store::InsertParams p{"q", {}, T};
  for (int i = 0; i < 300; ++i) {
    store::NewMessage n;
    n.payload = R"({"n":)" + std::to_string(i) + R"(,"s":"quote \" and \\ and \u00e9"})";
    n.max_retries = i % 7;
    n.priority = (i * 37) % 11 - 5;
    if (i % 3 == 0) n.job_type = "type-" + std::to_string(i % 4);
    if (i % 5 == 0) n.run_at = T + i;
    p.messages.push_back(n);
  }
  auto out = wait(store->messages_insert(p)).value();
  BOOST_REQUIRE_EQUAL(out.size(), p.messages.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Message& m = out[i].message;
    BOOST_TEST(out[i].created);
    if (i > 0) BOOST_TEST(m.id > out[i - 1].message.id);
    BOOST_TEST(m.payload == p.messages[i].payload);
    BOOST_TEST(m.priority == p.messages[i].priority);
    auto found = wait(store->message_find("q", m.id));
    BOOST_REQUIRE(found.has_value());
    check_same_message(*found, m);
  }
}

BOOST_AUTO_TEST_CASE(idempotency_key_holders) {
  store::NewMessage keyed;
  keyed.idempotency_key = "k";
  Message first = insert("q", "one", T, keyed);
  // In flight (pending, then processing): the same message comes back.
  BOOST_TEST(insert("q", "two", T, keyed).id == first.id);
  wait(store->messages_claim(claim_params("q", T)));
  BOOST_TEST(insert("q", "two", T, keyed).id == first.id);
  // The same key in another queue is another message.
  BOOST_TEST(insert("other", "x", T, keyed).id != first.id);
  // Succeeded: still returned.
  BOOST_TEST(wait(store->message_update(succeed_params("q", first.id, T))).has_value());
  BOOST_TEST(insert("q", "three", T, keyed).id == first.id);
}

BOOST_AUTO_TEST_CASE(a_key_held_only_by_dead_messages_is_free_again) {
  store::NewMessage keyed;
  keyed.idempotency_key = "k";
  Message first = dead_message("q", "one", keyed);
  auto dead = wait(store->message_find("q", first.id));
  BOOST_TEST(to_string(dead->status) == "dead");
  Message fresh = insert("q", "two", T, keyed);
  BOOST_TEST(fresh.id != first.id);
  BOOST_TEST(fresh.payload == "two");
}

BOOST_AUTO_TEST_CASE(concurrent_inserts_with_one_key_create_one_message_across_nodes) {
  // Declared before the two nodes, so they outlive the nodes' store threads, which post each
  // completion into them (ThreadSanitizer saw a thread's own io_context destroyed while a store
  // thread was still signalling it). The fixture's own node outlives the test.
  std::array<asio::io_context, 2> contexts;
  auto one = open_another();
  auto other = open_another();
  std::vector<std::thread> threads;
  std::mutex mu;
  std::set<MessageId> ids;
  for (int node = 0; node < 2; ++node) {
    threads.emplace_back([&, node] {
      asio::io_context& local = contexts[static_cast<std::size_t>(node)];
      store::SqlStore& s = node == 0 ? *one : *other;
      for (int i = 0; i < 20; ++i) {
        store::NewMessage n;
        n.payload = "x";
        n.idempotency_key = "same";
        store::InsertParams p{"q", {n}, T};
        auto f = asio::co_spawn(local, s.messages_insert(p), asio::use_future);
        local.restart();
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) local.run_one();
        std::lock_guard lock(mu);
        ids.insert(f.get().value().at(0).message.id);
      }
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(ids.size() == 1u);
  one->close();
  other->close();
}

BOOST_AUTO_TEST_CASE(list_orders_by_created_at_then_id_and_filters) {
  Message late = insert("q", "late", T + 5);
  Message early = insert("q", "early", T + 1);
  Message tie = insert("q", "tie", T + 1);
  insert("other", "x", T);
  store::ListParams all;
  all.queue = "q";
  auto list = wait(store->messages_list(all));
  BOOST_REQUIRE_EQUAL(list.size(), 3u);
  BOOST_TEST(list[0].id == early.id);
  BOOST_TEST(list[1].id == tie.id);
  BOOST_TEST(list[2].id == late.id);
  store::ListParams page = all;
  page.limit = 1;
  page.offset = 2;
  BOOST_TEST(wait(store->messages_list(page)).at(0).id == late.id);
  wait(store->messages_claim(claim_params("q", T + 10)));
  store::ListParams processing = all;
  processing.status = Status::processing;
  auto only = wait(store->messages_list(processing));
  BOOST_REQUIRE_EQUAL(only.size(), 1u);
  BOOST_TEST(only[0].id == early.id);
  // The ids of a page, in the page's order.
  auto ids = wait(store->messages_list_ids(all));
  BOOST_TEST(ids == (std::vector<MessageId>{early.id, tie.id, late.id}), boost::test_tools::per_element());
  BOOST_TEST(wait(store->messages_list_ids(page)) == std::vector<MessageId>{late.id},
             boost::test_tools::per_element());
  BOOST_TEST(wait(store->messages_list_ids(processing)) == std::vector<MessageId>{early.id},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(claim_takes_priority_then_fifo_and_sets_the_lease) {
  Message low_old = insert("q", "low old", T);
  store::NewMessage high;
  high.priority = 9;
  Message high_new = insert("q", "high new", T + 10, high);
  Message low_new = insert("q", "low new", T + 5);
  auto first = wait(store->messages_claim(claim_params("q", T + 20)));
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  BOOST_TEST(first[0].id == high_new.id);
  BOOST_TEST(to_string(first[0].status) == "processing");
  BOOST_TEST(*first[0].lease_id == "0123456789abcdef0123456789abcdef-" + std::to_string(high_new.id));
  BOOST_TEST(*first[0].lease_expires_at == T + 20 + 30000);
  BOOST_TEST(first[0].attempts == 1);
  BOOST_TEST(*first[0].first_attempt_at == T + 20);
  BOOST_TEST(*first[0].worker == "w1");
  auto rest = wait(store->messages_claim(claim_params("q", T + 20, 5)));
  BOOST_REQUIRE_EQUAL(rest.size(), 2u);
  BOOST_TEST(rest[0].id == low_old.id);
  BOOST_TEST(rest[1].id == low_new.id);
  BOOST_TEST(wait(store->messages_claim(claim_params("q", T + 20))).empty());
}

BOOST_AUTO_TEST_CASE(claim_respects_retry_after_and_job_types) {
  store::NewMessage later;
  later.run_at = T + 1000;
  Message scheduled = insert("q", "later", T, later);
  store::NewMessage typed;
  typed.job_type = "sms";
  Message sms = insert("q", "sms", T, typed);
  auto p = claim_params("q", T + 999);
  p.job_types = {"email"};
  BOOST_TEST(wait(store->messages_claim(p)).empty());
  p.job_types = {"email", "sms"};
  auto got = wait(store->messages_claim(p));
  BOOST_REQUIRE_EQUAL(got.size(), 1u);
  BOOST_TEST(got[0].id == sms.id);
  BOOST_TEST(wait(store->messages_claim(claim_params("q", T + 999))).empty());
  auto due = wait(store->messages_claim(claim_params("q", T + 1000)));
  BOOST_REQUIRE_EQUAL(due.size(), 1u);
  BOOST_TEST(due[0].id == scheduled.id);
}

BOOST_AUTO_TEST_CASE(two_nodes_claiming_at_once_never_share_a_message) {
  for (int i = 0; i < 300; ++i) insert("q", std::to_string(i), T);
  // Two nodes of their own, declared after the contexts their store threads post into (see the
  // test above); the fixture's node would outlive them.
  std::array<asio::io_context, 4> contexts;
  auto one = open_another();
  auto other = open_another();
  std::mutex mu;
  std::multiset<MessageId> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      asio::io_context& local = contexts[static_cast<std::size_t>(t)];
      store::SqlStore& s = t % 2 == 0 ? *one : *other;
      for (;;) {
        auto f = asio::co_spawn(local, s.messages_claim(claim_params("q", T, 3)), asio::use_future);
        local.restart();
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) local.run_one();
        auto got = f.get();
        if (got.empty()) return;
        std::lock_guard lock(mu);
        for (const auto& m : got) seen.insert(m.id);
      }
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(seen.size() == 300u);
  BOOST_TEST(std::set<MessageId>(seen.begin(), seen.end()).size() == 300u);
  one->close();
  other->close();
}

BOOST_AUTO_TEST_CASE(update_applies_the_decision_or_changes_nothing) {
  Message m = insert("q", "x", T);
  auto refused = wait(store->message_update(succeed_params("q", m.id, T)));
  BOOST_TEST(!refused.has_value());
  BOOST_TEST((refused.error().code == Errc::invalid_state));
  BOOST_TEST(wait(store->message_find("q", m.id))->updated_at == T);

  auto missing = wait(store->message_update(succeed_params("q", m.id + 1000, T)));
  BOOST_TEST((missing.error().code == Errc::message_not_found));
  auto wrong_queue = wait(store->message_update(succeed_params("other", m.id, T)));
  BOOST_TEST((wrong_queue.error().code == Errc::message_not_found));

  auto claimed = wait(store->messages_claim(claim_params("q", T)));
  BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
  store::UpdateParams dry = succeed_params("q", m.id, T + 5);
  dry.dry_run = true;
  auto preview = wait(store->message_update(dry));
  BOOST_TEST(to_string(preview->status) == "succeeded");
  BOOST_TEST(to_string(wait(store->message_find("q", m.id))->status) == "processing");

  auto done = wait(store->message_update(succeed_params("q", m.id, T + 5)));
  BOOST_TEST(to_string(done->status) == "succeeded");
  auto stored = wait(store->message_find("q", m.id));
  BOOST_TEST(to_string(stored->status) == "succeeded");
  BOOST_TEST(stored->updated_at == T + 5);
  // The lease is over; its id stays (never shown) so that a resent ack is recognised.
  BOOST_TEST((stored->lease_id == claimed[0].lease_id));
  BOOST_TEST(!stored->lease_expires_at.has_value());
  auto history = wait(store->message_history("q", m.id))->attempts;
  BOOST_REQUIRE_EQUAL(history.size(), 1u);
  BOOST_TEST(to_string(history[0].outcome) == "succeeded");
  BOOST_TEST(*history[0].claimed_at == T);
  BOOST_TEST(history[0].finished_at == T + 5);
  BOOST_TEST(*history[0].worker == "w1");
}

// Each entry is written with the life it belongs to (a replayed entry opens the life its
// replay begins); message_edits pages through the edited replays, oldest first.
BOOST_AUTO_TEST_CASE(entries_carry_their_life_and_edits_page_oldest_first) {
  Message m = dead_message("lives", "one");
  auto replay_to = [&](std::optional<std::string> payload, TimeMs at) {
    store::UpdateParams u;
    u.queue = "lives";
    u.id = m.id;
    u.decide = [payload, at](const Message& current, const store::Related& r) {
      core::ReplayInput in;
      in.payload = payload;
      in.reason = "at " + std::to_string(at);
      return core::replay(current, r, in, at);
    };
    BOOST_REQUIRE(wait(store->message_update(u)).has_value());
  };
  auto die = [&](TimeMs at) {
    BOOST_REQUIRE_EQUAL(claim("lives", at).size(), 1u);
    store::UpdateParams fail;
    fail.queue = "lives";
    fail.id = m.id;
    fail.decide = [at](const Message& current, const store::Related&) {
      return core::fail(current, {}, QueuePolicy{}, at, [] { return 0.0; });
    };
    BOOST_REQUIRE(wait(store->message_update(fail)).has_value());
  };
  replay_to(std::string("two"), T + 10);
  die(T + 20);
  replay_to(std::nullopt, T + 30);  // not an edit
  die(T + 40);
  replay_to(std::string("three"), T + 50);

  std::vector<int> lives;
  auto history = wait(store->message_history("lives", m.id));
  BOOST_REQUIRE(history.has_value());
  for (const auto& a : history->attempts) lives.push_back(a.life);
  BOOST_TEST(lives == std::vector<int>({0, 1, 1, 2, 2, 3}), boost::test_tools::per_element());

  auto all = wait(store->message_edits("lives", m.id, 0, 10));
  BOOST_REQUIRE(all.has_value());
  BOOST_TEST(all->message.payload == "three");
  BOOST_REQUIRE_EQUAL(all->edits.size(), 2u);
  BOOST_TEST(all->edits[0].previous_payload == "one");
  BOOST_TEST(all->edits[0].at == T + 10);
  BOOST_TEST(*all->edits[0].reason == "at " + std::to_string(T + 10));
  BOOST_TEST(all->edits[1].previous_payload == "two");
  BOOST_TEST(all->edits[1].at == T + 50);
  auto second = wait(store->message_edits("lives", m.id, 1, 1));
  BOOST_REQUIRE_EQUAL(second->edits.size(), 1u);
  BOOST_TEST(second->edits[0].previous_payload == "two");
  BOOST_TEST(!wait(store->message_edits("elsewhere", m.id, 0, 10)).has_value());
}

BOOST_AUTO_TEST_CASE(replay_sees_the_other_holders_of_its_key) {
  store::NewMessage keyed;
  keyed.idempotency_key = "k";
  Message first = dead_message("q", "one", keyed);
  Message second = insert("q", "two", T, keyed);  // key free again: a new in-flight holder
  store::UpdateParams replay;
  replay.queue = "q";
  replay.id = first.id;
  replay.load_key_holders = true;
  replay.decide = [](const Message& m, const store::Related& r) {
    return core::replay(m, r, {}, T);
  };
  auto blocked = wait(store->message_update(replay));
  BOOST_TEST((blocked.error().code == Errc::idempotency_conflict));
  wait(store->messages_claim(claim_params("q", T)));
  wait(store->message_update(succeed_params("q", second.id, T)));
  auto after_success = wait(store->message_update(replay));
  BOOST_TEST((after_success.error().code == Errc::already_succeeded));
}

BOOST_AUTO_TEST_CASE(reap_applies_the_decision_to_expired_leases_only) {
  Message a = insert("q", "a", T);
  Message b = insert("q", "b", T);
  auto early = claim_params("q", T);
  early.lease_expires_at = T + 1000;
  wait(store->messages_claim(early));
  auto late = claim_params("q", T);
  late.lease_expires_at = T + 5000;
  wait(store->messages_claim(late));
  store::ReapParams p;
  p.now = T + 1000;
  p.decide = [](const Message& m) {
    return core::expire_lease(m, QueuePolicy{}, T + 1000, [] { return 0.0; });
  };
  auto reaped = wait(store->messages_reap_expired(p));
  BOOST_REQUIRE_EQUAL(reaped.size(), 1u);
  BOOST_TEST(reaped[0].id == a.id);
  BOOST_TEST(to_string(reaped[0].status) == "pending");
  BOOST_TEST(to_string(wait(store->message_find("q", b.id))->status) == "processing");
  auto history = wait(store->message_history("q", a.id))->attempts;
  BOOST_TEST(to_string(history.at(0).outcome) == "lease_expired");
}

// dead_letter_hours (GET /dlq/hourly): a death made by an update or by the reaper is counted in
// its hour, in the same transaction; a dry run counts nothing; other queues are apart.
BOOST_AUTO_TEST_CASE(deaths_are_counted_in_their_hour_by_updates_and_the_reaper) {
  const TimeMs hour = T / kMillisPerHour * kMillisPerHour;
  dead_message("hq", "by update");  // dies at T
  dead_message("other", "elsewhere");
  Message r = insert("hq", "by reaper", T);
  auto claim = claim_params("hq", T);
  claim.lease_expires_at = T + kMillisPerHour;
  wait(store->messages_claim(claim));
  store::ReapParams p;
  p.now = T + kMillisPerHour;
  p.decide = [](const Message& m) {
    QueuePolicy one_expiry;
    one_expiry.max_lease_expiries = 1;
    return core::expire_lease(m, one_expiry, T + kMillisPerHour, [] { return 0.0; });
  };
  auto reaped = wait(store->messages_reap_expired(p));
  BOOST_REQUIRE_EQUAL(reaped.size(), 1u);
  BOOST_TEST(reaped[0].id == r.id);
  BOOST_REQUIRE(to_string(reaped[0].status) == "dead");
  Message d = insert("hq", "dry", T);
  wait(store->messages_claim(claim_params("hq", T)));
  store::UpdateParams dry;
  dry.queue = "hq";
  dry.id = d.id;
  dry.dry_run = true;
  dry.decide = [](const Message& m, const store::Related&) {
    return core::fail(m, {}, QueuePolicy{}, T, [] { return 0.0; });
  };
  wait(store->message_update(dry));
  auto counts = wait(store->dead_hourly(std::string("hq"), hour - kMillisPerHour, 3));
  BOOST_TEST((counts == std::vector<long long>{0, 1, 1}));
  auto all = wait(store->dead_hourly(std::nullopt, hour, 1));
  BOOST_TEST((all == std::vector<long long>{2}));
}

BOOST_AUTO_TEST_CASE(two_nodes_reaping_at_once_reap_each_lease_once) {
  for (int i = 0; i < 200; ++i) insert("q", std::to_string(i), T);
  auto p = claim_params("q", T, 200);
  p.lease_expires_at = T + 1000;
  BOOST_REQUIRE_EQUAL(wait(store->messages_claim(p)).size(), 200u);
  // Two nodes of their own, declared after the contexts their store threads post into.
  std::array<asio::io_context, 2> contexts;
  auto one = open_another();
  auto other = open_another();
  std::atomic<int> reaped{0};
  std::vector<std::thread> reapers;
  for (int node = 0; node < 2; ++node) {
    reapers.emplace_back([&, node] {
      asio::io_context& local = contexts[static_cast<std::size_t>(node)];
      store::SqlStore& s = node == 0 ? *one : *other;
      for (;;) {
        store::ReapParams r;
        r.now = T + 1000;
        r.limit = 7;
        r.decide = [](const Message& m) {
          return core::expire_lease(m, QueuePolicy{}, T + 1000, [] { return 0.0; });
        };
        auto f = asio::co_spawn(local, s.messages_reap_expired(r), asio::use_future);
        local.restart();
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) local.run_one();
        auto got = f.get();
        if (got.empty()) return;
        reaped += static_cast<int>(got.size());
      }
    });
  }
  for (auto& t : reapers) t.join();
  BOOST_TEST(reaped.load() == 200);
  store::ListParams all;
  all.queue = "q";
  all.limit = 100;
  for (int offset : {0, 100}) {
    all.offset = offset;
    for (const auto& m : wait(store->messages_list(all))) {
      BOOST_TEST(m.lease_expiries == 1);  // never twice
      BOOST_TEST(to_string(m.status) == "pending");
    }
  }
  one->close();
  other->close();
}

BOOST_AUTO_TEST_CASE(schedule_reports_the_next_due_time_and_lease_expiry) {
  auto empty = wait(store->schedule_peek(T));
  BOOST_TEST(!empty.next_due.has_value());
  BOOST_TEST(!empty.next_lease_expiry.has_value());
  store::NewMessage later;
  later.run_at = T + 7000;
  insert("q", "later", T, later);
  insert("q", "now", T);
  wait(store->messages_claim(claim_params("q", T)));
  auto s = wait(store->schedule_peek(T));
  BOOST_TEST(*s.next_due == T + 7000);
  BOOST_TEST(*s.next_lease_expiry == T + 30000);
  BOOST_TEST(!wait(store->schedule_peek(T + 7000)).next_due.has_value());
}

BOOST_AUTO_TEST_CASE(concurrent_writes_share_commits_and_all_land) {
  constexpr int kWrites = 400;
  std::vector<std::future<Result<std::vector<store::Inserted>>>> futures;
  for (int i = 0; i < kWrites; ++i) {
    store::NewMessage n;
    n.payload = std::to_string(i);
    store::InsertParams p{"q", {n}, T};
    futures.push_back(asio::co_spawn(ioc, store->messages_insert(p), asio::use_future));
  }
  ioc.restart();
  for (auto& f : futures) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    BOOST_TEST(f.get().value().at(0).created);
  }
  store::ListParams all;
  all.queue = "q";
  all.limit = 100;
  all.offset = kWrites - 100;
  BOOST_TEST(wait(store->messages_list(all)).size() == 100u);
  BOOST_TEST(store->operations_per_commit() > 1.0);
}

// PostgreSQL stores a group's keyless enqueues, of any queues, in one statement at its commit
// (MessageSql::insert_later). Each request must still get its own messages, as stored, and a
// queue over limits.max_queues must refuse its own requests only.
BOOST_AUTO_TEST_CASE(concurrent_enqueues_to_several_queues_each_get_their_own_answer) {
  insert("a", "kept", T);
  constexpr int kRequests = 90;
  std::vector<store::InsertParams> sent;
  std::vector<std::future<Result<std::vector<store::Inserted>>>> futures;
  for (int i = 0; i < kRequests; ++i) {
    store::InsertParams p{std::string(1, static_cast<char>('a' + i % 3)), {}, T + i, 2};
    for (int k = 0; k <= i % 3; ++k) {
      store::NewMessage n;
      n.payload = std::to_string(i) + "/" + std::to_string(k);
      n.priority = i % 5;
      if (i % 4 == 0) n.job_type = "t" + std::to_string(i);
      if (i % 7 == 0) n.idempotency_key = n.payload;  // stored at once
      p.messages.push_back(n);
    }
    sent.push_back(p);
    futures.push_back(asio::co_spawn(ioc, store->messages_insert(p), asio::use_future));
  }
  ioc.restart();
  std::map<std::string, std::pair<int, int>> by_queue;  // queue -> (stored, refused)
  for (int i = 0; i < kRequests; ++i) {
    auto& f = futures[static_cast<std::size_t>(i)];
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    auto answer = f.get();
    const store::InsertParams& p = sent[static_cast<std::size_t>(i)];
    if (!answer) {
      BOOST_TEST(answer.error().fields.at(0).code == "limit");
      ++by_queue[p.queue].second;
      continue;
    }
    ++by_queue[p.queue].first;
    BOOST_REQUIRE_EQUAL(answer->size(), p.messages.size());
    for (std::size_t k = 0; k < answer->size(); ++k) {
      const Message& m = (*answer)[k].message;
      BOOST_TEST((*answer)[k].created);
      if (k > 0) BOOST_TEST(m.id > (*answer)[k - 1].message.id);
      BOOST_TEST(m.payload == p.messages[k].payload);
      BOOST_TEST(m.created_at == p.now);
      auto found = wait(store->message_find(p.queue, m.id));
      BOOST_REQUIRE(found.has_value());
      check_same_message(*found, m);
    }
  }
  // "a" was kept; of "b" and "c" the first admitted takes the second place, the other is
  // refused, every one of its requests.
  BOOST_TEST(by_queue["a"].first == kRequests / 3);
  BOOST_TEST(by_queue["b"].first + by_queue["c"].first == kRequests / 3);
  BOOST_TEST(by_queue["b"].second + by_queue["c"].second == kRequests / 3);
  BOOST_TEST((by_queue["b"].first == 0 || by_queue["c"].first == 0));
  BOOST_TEST(store->operations_per_commit() > 1.0);
}

// PostgreSQL makes a group's claims on one queue and job types in one statement at its commit
// (ClaimSql::claim_later): each claim must still get its own messages, none twice, in claim
// order, under its own lease, worker and payload budget, the earlier claims served first.
BOOST_AUTO_TEST_CASE(concurrent_claims_each_get_their_own_messages_under_their_own_lease) {
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) {
    store::NewMessage n;
    n.priority = i % 3;
    n.job_type = i % 4 == 0 ? "report" : "mail";
    insert("q", std::string(static_cast<std::size_t>(10 + i), 'x'), T + i, n);
  }
  constexpr int kClaims = 16;
  std::vector<store::ClaimParams> sent;
  std::vector<std::future<std::vector<Message>>> futures;
  for (int i = 0; i < kClaims; ++i) {
    store::ClaimParams p = claim_params("q", T + 100 + i, 2 + i % 4);
    p.lease_token = std::string(31, static_cast<char>('a' + i % 6)) + std::to_string(i % 10);
    p.lease_expires_at = T + 30000 + i;
    p.worker = "w" + std::to_string(i);
    if (i % 5 == 0) p.job_types = {"report"};
    if (i == 3) p.payload_budget = 1;  // only its first message's payload comes back
    sent.push_back(p);
    futures.push_back(asio::co_spawn(ioc, store->messages_claim(p), asio::use_future));
  }
  ioc.restart();
  std::set<MessageId> seen;
  int wanted = 0;
  std::size_t got = 0;
  for (int i = 0; i < kClaims; ++i) {
    auto& f = futures[static_cast<std::size_t>(i)];
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    auto claimed = f.get();
    const store::ClaimParams& p = sent[static_cast<std::size_t>(i)];
    wanted += p.max;
    got += claimed.size();
    BOOST_TEST(claimed.size() <= static_cast<std::size_t>(p.max));
    for (std::size_t k = 0; k < claimed.size(); ++k) {
      const Message& m = claimed[k];
      BOOST_TEST(seen.insert(m.id).second);
      if (k > 0) {
        const Message& before = claimed[k - 1];
        BOOST_TEST((before.priority > m.priority ||
                    (before.priority == m.priority && before.created_at < m.created_at)));
      }
      if (!p.job_types.empty()) BOOST_TEST(*m.job_type == "report");
      BOOST_TEST(to_string(m.status) == "processing");
      BOOST_TEST(*m.lease_id == p.lease_token + "-" + std::to_string(m.id));
      BOOST_TEST(*m.lease_expires_at == p.lease_expires_at);
      BOOST_TEST(*m.worker == *p.worker);
      BOOST_TEST(*m.last_attempt_at == p.now);
      BOOST_TEST(m.payload_withheld == (i == 3 && k > 0));
      auto found = wait(store->message_find("q", m.id));
      BOOST_REQUIRE(found.has_value());
      BOOST_TEST(found->payload.size() == static_cast<std::size_t>(10 + (found->created_at - T)));
      if (!m.payload_withheld) BOOST_TEST(m.payload == found->payload);
      found->payload = m.payload;
      found->payload_withheld = m.payload_withheld;
      check_same_message(*found, m);
    }
  }
  // Every message is taken (the claims asked for more than there are) and none is left pending.
  BOOST_TEST(wanted > kMessages);
  BOOST_TEST(got == static_cast<std::size_t>(kMessages));
  store::ListParams pending;
  pending.queue = "q";
  pending.status = Status::pending;
  BOOST_TEST(wait(store->messages_list(pending)).empty());
}

// PostgreSQL locks and reads the messages a group's acknowledgements name in one statement
// (MessageSql::lock_later) and writes their transitions together at its end (write_later): each
// job must still see the messages as the group's earlier jobs left them: an acknowledgement of the
// same message, an effect's record (it counts the effect in the row), a keyed enqueue (it answers
// the key's holder), a purge (it deletes rows). One writer thread that lingers for its group, so
// that the jobs share one, in the order sent.
BOOST_AUTO_TEST_CASE(concurrent_acknowledgements_see_their_messages_as_the_group_left_them) {
  store->close();
  store::SqlStoreOptions one_group;
  one_group.pool_size = 2;  // PostgreSQL: one writer, one reader
  one_group.group_commit_max_wait_us = 300000;
  store = open_another(one_group);
  for (int i = 0; i < 14; ++i) insert("q", std::to_string(i), T + i);
  store::NewMessage keyed;
  keyed.idempotency_key = "k";
  insert("q", "14", T + 14, keyed);
  auto m = wait(store->messages_claim(claim_params("q", T + 20, 15)));
  BOOST_REQUIRE_EQUAL(m.size(), 15u);
  auto send = [&](auto awaitable) { return asio::co_spawn(ioc, std::move(awaitable), asio::use_future); };
  auto drive = [&](auto& f) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    return f.get();
  };
  std::vector<store::UpdateParams> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(succeed_params("q", m[i].id, T + 30));
  auto batch_f = send(store->messages_update(batch));
  auto first_f = send(store->message_update(succeed_params("q", m[11].id, T + 31)));
  auto again_f = send(store->message_update(succeed_params("q", m[11].id, T + 32)));
  auto wrong_queue_f = send(store->message_update(succeed_params("other", m[10].id, T + 33)));
  store::EffectParams effect;
  effect.queue = "q";
  effect.id = m[12].id;
  effect.key = "mail";
  core::EffectInput in;
  in.lease_id = *m[12].lease_id;
  in.key = "mail";
  in.state = core::EffectCommand::done;
  in.result = "sent";
  effect.decide = [in](const Message& current, const std::optional<Effect>& existing) {
    return core::record_effect(current, existing, in, 100, T + 34);
  };
  auto effect_f = send(store->effect_record(effect));
  auto after_effect_f = send(store->message_update(succeed_params("q", m[12].id, T + 35)));
  auto keyed_done_f = send(store->message_update(succeed_params("q", m[14].id, T + 35)));
  keyed.payload = "again";
  auto keyed_again_f = send(store->messages_insert(store::InsertParams{"q", {keyed}, T + 35}));
  store::PurgeParams purge;  // what is still processing: 10 and 13
  purge.status = Status::processing;
  purge.before = T + 1000;
  purge.queue = "q";
  auto purge_f = send(store->messages_purge(purge));
  auto ack_claim_f = send(
      store->messages_ack_and_claim({succeed_params("q", m[13].id, T + 36)}, claim_params("q", T + 36, 1)));
  ioc.restart();

  for (const auto& r : drive(batch_f)) BOOST_TEST(r.has_value());
  BOOST_TEST(drive(first_f).has_value());
  auto again = drive(again_f);
  BOOST_REQUIRE(!again.has_value());
  BOOST_TEST((again.error().code == Errc::invalid_state));
  auto wrong_queue = drive(wrong_queue_f);
  BOOST_REQUIRE(!wrong_queue.has_value());
  BOOST_TEST((wrong_queue.error().code == Errc::message_not_found));
  BOOST_TEST(drive(effect_f).has_value());
  BOOST_TEST(drive(after_effect_f).has_value());
  BOOST_TEST(drive(keyed_done_f).has_value());
  auto keyed_again = drive(keyed_again_f);
  BOOST_REQUIRE(keyed_again.has_value());
  BOOST_REQUIRE_EQUAL(keyed_again->size(), 1u);
  BOOST_TEST(!keyed_again->front().created);
  BOOST_TEST(keyed_again->front().message.id == m[14].id);
  BOOST_TEST(to_string(keyed_again->front().message.status) == "succeeded");
  BOOST_TEST(drive(purge_f).total == 2);
  auto ack_claim = drive(ack_claim_f);
  BOOST_REQUIRE_EQUAL(ack_claim.acked.size(), 1u);
  BOOST_REQUIRE(!ack_claim.acked[0].has_value());
  BOOST_TEST((ack_claim.acked[0].error().code == Errc::message_not_found));
  BOOST_TEST(ack_claim.claimed.empty());

  for (int i = 0; i < 15; ++i) {
    auto found = wait(store->message_find("q", m[i].id));
    if (i == 10 || i == 13) {
      BOOST_TEST(!found.has_value());
      continue;
    }
    BOOST_REQUIRE(found.has_value());
    BOOST_TEST(to_string(found->status) == "succeeded");
    // The success after the effect's record kept its count.
    BOOST_TEST(found->effect_count == (i == 12 ? 1 : 0));
    BOOST_TEST(wait(store->message_history("q", m[i].id))->attempts.size() == 1u);
  }
}

BOOST_AUTO_TEST_CASE(a_failing_operation_does_not_fail_its_neighbours) {
  std::vector<Message> messages;
  for (int i = 0; i < 50; ++i) messages.push_back(insert("q", std::to_string(i), T));
  wait(store->messages_claim(claim_params("q", T, 50)));
  std::vector<std::future<Result<Message>>> futures;
  for (int i = 0; i < 50; ++i) {
    store::UpdateParams p = succeed_params("q", messages[i].id, T + 1);
    if (i % 10 == 3) {
      // A fault in the middle of a group (a bug, a constraint): it alone must fail.
      p.decide = [](const Message&, const store::Related&) -> Result<store::Change> {
        throw std::runtime_error("injected fault");
      };
    }
    futures.push_back(asio::co_spawn(ioc, store->message_update(p), asio::use_future));
  }
  ioc.restart();
  int ok = 0, faults = 0;
  for (auto& f : futures) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    try {
      if (f.get().has_value()) ++ok;
    } catch (const std::runtime_error&) {
      ++faults;
    }
  }
  BOOST_TEST(ok == 45);
  BOOST_TEST(faults == 5);
  store::ListParams done;
  done.queue = "q";
  done.status = Status::succeeded;
  done.limit = 100;
  BOOST_TEST(wait(store->messages_list(done)).size() == 45u);
}

boost::test_tools::assertion_result on_postgresql(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(test_backend() == Backend::postgresql);
  r.message() << "a failing COMMIT is provoked with a deferred constraint (PostgreSQL)";
  return r;
}

BOOST_AUTO_TEST_CASE(a_failing_commit_answers_every_waiting_operation_and_applies_nothing,
                     *boost::unit_test::precondition(on_postgresql)) {
  // Checked only at COMMIT: two messages with the same payload make the commit fail.
  pg_exec(url, "ALTER TABLE messages ADD CONSTRAINT test_unique_payload UNIQUE (payload) "
               "DEFERRABLE INITIALLY DEFERRED");
  constexpr int kWrites = 60;
  std::vector<std::future<Result<std::vector<store::Inserted>>>> futures;
  for (int i = 0; i < kWrites; ++i) {
    store::NewMessage n;
    n.payload = i % 10 == 0 ? "duplicate" : std::to_string(i);
    store::InsertParams p{"q", {n}, T};
    futures.push_back(asio::co_spawn(ioc, store->messages_insert(p), asio::use_future));
  }
  ioc.restart();
  int ok = 0, failed = 0;
  for (auto& f : futures) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    try {
      f.get();
      ++ok;
    } catch (const std::exception&) {
      ++failed;
    }
  }
  BOOST_TEST(ok + failed == kWrites);  // nobody left hanging
  BOOST_TEST(failed >= 5);             // at least every duplicate after the first
  store::ListParams all;
  all.queue = "q";
  all.limit = 100;
  // Nothing half-applied: exactly the answered successes are stored.
  BOOST_TEST(wait(store->messages_list(all)).size() == static_cast<std::size_t>(ok));
  // And the store goes on working.
  pg_exec(url, "ALTER TABLE messages DROP CONSTRAINT test_unique_payload");
  BOOST_TEST(insert("q", "after", T).id > 0);
}

BOOST_AUTO_TEST_CASE(reopening_applies_no_migration_twice) {
  insert("q", "kept", T);
  store->close();
  store = open_another();
  BOOST_TEST(wait(store->ping()));
  store::ListParams all;
  all.queue = "q";
  BOOST_TEST(wait(store->messages_list(all)).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

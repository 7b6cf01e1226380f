// Deleting finished messages (retention and POST /purge) on both databases: which ones go (by
// the time they entered their status), which queues are spared or chosen, that their history goes
// with them, and the one audit entry a batch that deleted something writes.
#include <boost/test/unit_test.hpp>

#include "core/transitions.hpp"
#include "core/trials.hpp"
#include "store/connection.hpp"
#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

// The rows of `message` in `table` (attempts, effects) the database still holds, read past the
// Store: once the message is gone, the Store cannot tell whether they went too.
long long rows_of(const std::string& url, const std::string& table, MessageId message) {
  store::ConnectionOptions o;
  o.target = parse_database_url(url);
  store::Connection c(o);
  long long n = -1, id = message;
  c.session() << "SELECT COUNT(*) FROM " + table + " WHERE message_id = :id", soci::into(n),
      soci::use(id, "id");
  return n;
}
long long history_rows(const std::string& url, MessageId message) {
  return rows_of(url, "attempts", message);
}
long long effect_rows(const std::string& url, MessageId message) {
  return rows_of(url, "effects", message);
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

// Recorded side effects (issue 36): effect_count follows the rows under the message's lock, a
// claim carries them, and a purge takes them with the message.
BOOST_AUTO_TEST_CASE(effects_follow_their_message_and_go_with_it) {
  Message m = insert("fx", "p", T);
  auto claimed = claim("fx", T);
  BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
  BOOST_TEST(claimed[0].effects.empty());
  auto record = [&](const std::string& key, core::EffectCommand state, TimeMs at) {
    store::EffectParams p;
    p.queue = "fx";
    p.id = m.id;
    p.key = key;
    core::EffectInput in;
    in.lease_id = *claimed[0].lease_id;
    in.key = key;
    in.state = state;
    in.result = state == core::EffectCommand::done ? std::optional<std::string>("r") : std::nullopt;
    p.decide = [in, at](const Message& current, const std::optional<Effect>& existing) {
      return core::record_effect(current, existing, in, 100, at);
    };
    return wait(store->effect_record(p));
  };
  BOOST_REQUIRE(record("a", core::EffectCommand::started, T + 1).has_value());
  BOOST_REQUIRE(record("b", core::EffectCommand::started, T + 2).has_value());
  BOOST_REQUIRE(record("b", core::EffectCommand::done, T + 3).has_value());
  BOOST_REQUIRE(record("c", core::EffectCommand::started, T + 4).has_value());
  BOOST_REQUIRE(record("c", core::EffectCommand::cleared, T + 5).has_value());
  BOOST_TEST(wait(store->message_find("fx", m.id))->effect_count == 2);
  auto effects = wait(store->effects_of(m.id));
  BOOST_REQUIRE_EQUAL(effects.size(), 2u);
  BOOST_TEST(effects[0].key == "a");
  BOOST_TEST((effects[0].state == EffectState::started));
  BOOST_TEST(effects[1].key == "b");
  BOOST_TEST((effects[1].state == EffectState::done));
  BOOST_TEST(*effects[1].result == "r");
  BOOST_TEST(effects[1].recorded_at == T + 3);
  auto missing = [&] {
    store::EffectParams p;
    p.queue = "other";
    p.id = m.id;
    p.key = "a";
    p.decide = [](const Message&, const std::optional<Effect>&) {
      return Result<store::EffectOutcome>(store::EffectOutcome{});
    };
    return wait(store->effect_record(p));
  }();
  BOOST_TEST(!missing.has_value());

  // Released and claimed again: the claim carries both.
  store::UpdateParams release;
  release.queue = "fx";
  release.id = m.id;
  release.decide = [lease = *claimed[0].lease_id](const Message& current, const store::Related& r) {
    return core::release(current, r, lease, std::nullopt, T + 6);
  };
  BOOST_REQUIRE(wait(store->message_update(release)).has_value());
  auto again = claim("fx", T + 7);
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST(again[0].effects.size() == 2u);

  store::UpdateParams done;
  done.queue = "fx";
  done.id = m.id;
  done.decide = [lease = *again[0].lease_id](const Message& current, const store::Related&) {
    return core::succeed(current, lease, T + 8);
  };
  BOOST_REQUIRE(wait(store->message_update(done)).has_value());
  BOOST_REQUIRE_EQUAL(effect_rows(url, m.id), 2);
  RecordingPurge r(T + 1000);
  BOOST_TEST(purge(r).total == 1);
  BOOST_TEST(effect_rows(url, m.id) == 0);
}

// Trial runs (issue 36): started under the message's lock (one open per message, decided before
// anything is written), claimed by a claim that asks, answered under the trial's lock with one
// history entry, expired by the sweep, and purged with their message.
BOOST_AUTO_TEST_CASE(trials_start_claim_answer_expire_and_go_with_their_message) {
  Message m = dead_message_at("tr", "dead for a trial", T + 100);
  Message alive = insert("tr", "pending", T);
  auto start = [&](std::vector<store::TrialStartItem> items) {
    store::TrialStartParams p;
    p.items = std::move(items);
    p.decide = [](std::size_t, const Message* msg, const std::optional<Trial>& open) -> Result<Trial> {
      if (!msg) return Error(Errc::message_not_found, "none");
      if (msg->status != Status::dead) return Error(Errc::invalid_state, "not dead");
      if (open) return *open;
      Trial t;
      t.message_id = msg->id;
      t.queue = msg->queue;
      t.job_type = "charge";
      t.created_at = T + 200;
      return t;
    };
    p.audit = [](const std::vector<store::TrialStarted>&) { return std::optional<AuditEntry>(); };
    return wait(store->trials_start(std::move(p)));
  };
  // One refusal starts nothing.
  auto refused = start({{std::string("tr"), m.id}, {std::string("tr"), alive.id}});
  BOOST_TEST(!refused.has_value());
  BOOST_TEST(wait(store->trial_find("tr", m.id, 1)).has_value() == false);
  auto started = start({{std::nullopt, m.id}});
  BOOST_REQUIRE(started.has_value());
  BOOST_REQUIRE(started->at(0).created);
  const long long id = started->at(0).trial.id;
  auto again = start({{std::string("tr"), m.id}});
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(!again->at(0).created);
  BOOST_TEST(again->at(0).trial.id == id);
  BOOST_TEST(!wait(store->trial_find("other", m.id, id)).has_value());

  // A plain claim never takes it; one that asks for trials of its type does.
  store::ClaimParams plain;
  plain.queue = "tr";
  plain.now = T + 300;
  plain.max = 5;
  plain.lease_expires_at = T + 30300;
  plain.lease_token = "tok";
  auto ordinary = wait(store->messages_claim(plain));
  BOOST_REQUIRE_EQUAL(ordinary.size(), 1u);
  BOOST_TEST(ordinary[0].id == alive.id);
  store::ClaimParams trials = plain;
  trials.trials = true;
  trials.job_types = {"charge"};
  trials.lease_token = "tt";
  auto taken = wait(store->messages_claim(trials));
  BOOST_REQUIRE_EQUAL(taken.size(), 1u);
  BOOST_TEST(taken[0].id == m.id);
  BOOST_TEST(*taken[0].trial_id == id);
  BOOST_TEST(*taken[0].lease_id == "tt-t" + std::to_string(id));
  BOOST_TEST((taken[0].status == Status::dead));

  store::TrialUpdateParams answer;
  answer.queue = "tr";
  answer.id = m.id;
  answer.trial_id = id;
  answer.decide = [](const Trial& t, const Message& msg) -> Result<store::TrialChange> {
    store::TrialChange c{t, std::nullopt};
    c.next.status = TrialStatus::succeeded;
    c.next.finished_at = T + 400;
    c.next.would_effects = {{"k", std::string("d")}};
    c.entry = core::trial_entry(c.next, msg);
    return c;
  };
  auto answered = wait(store->trial_update(answer));
  BOOST_REQUIRE(answered.has_value());
  BOOST_TEST(answered->would_effects.size() == 1u);
  auto history = wait(store->message_history("tr", m.id));
  BOOST_REQUIRE(history.has_value());
  BOOST_TEST((history->attempts.back().outcome == AttemptOutcome::trial));
  BOOST_TEST(history->attempts.back().trial->find("\"succeeded\"") != std::string::npos);
  answer.trial_id = id + 1000;
  BOOST_TEST(!wait(store->trial_update(answer)).has_value());

  // A second trial nobody claims: the sweep ends it.
  auto second = start({{std::string("tr"), m.id}});
  BOOST_REQUIRE(second.has_value() && second->at(0).created);
  store::TrialExpireParams sweep;
  sweep.now = T + 500;
  sweep.pending_before = T + 100;  // created at T + 200: not yet
  sweep.decide = [](const Trial& t, const Message* msg) { return core::expire_trial(t, msg, T + 500); };
  BOOST_TEST(wait(store->trials_expire(sweep)).empty());
  sweep.pending_before = T + 250;
  auto expired = wait(store->trials_expire(sweep));
  BOOST_REQUIRE_EQUAL(expired.size(), 1u);
  BOOST_TEST((expired[0].status == TrialStatus::expired));

  // Purged with its message.
  store::PurgeParams purge;
  purge.status = Status::dead;
  purge.before = T + 100000;
  purge.audit = [](const std::vector<std::pair<std::string, long long>>&) {
    AuditEntry e;
    e.at = T;
    e.action = "purge";
    return e;
  };
  BOOST_TEST(wait(store->messages_purge(purge)).total >= 1);
  BOOST_TEST(!wait(store->trial_find("tr", m.id, id)).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

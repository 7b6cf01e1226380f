// Replay runs on both databases: read back with the outcomes of their replayed messages as they
// are now, listed (newest first, the leader's active ones, by message), stepped within their
// fences (a stale next_seq, another node's step, a start ahead), changed as the core decides.
#include <boost/test/unit_test.hpp>

#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

using Ids = std::vector<MessageId>;

Ids ids_of(const std::vector<store::ReplayRun>& runs) {
  Ids out;
  for (const auto& r : runs) out.push_back(r.id);
  return out;
}

}  // namespace

struct RunsFixture : StoreFixture {
  // A run over the dead messages among `ids` (a confirmed batch replay), starting at `start_at`.
  store::ReplayRun create_run(const Ids& ids, TimeMs start_at = T + 1000) {
    const std::string token = "run-" + std::to_string(++runs_made);
    store::BatchPreview p;
    p.token_sha256 = token;
    p.kind = "replay";
    p.created_at = T;
    p.expires_at = T + 600000;
    BOOST_REQUIRE(wait(store->batch_preview_save(p)));
    store::ConfirmParams c;
    c.token_sha256 = token;
    c.kind = "replay";
    c.filter.ids = ids;
    c.decide = [start_at](const store::ConfirmFacts& facts) -> Result<store::ConfirmPlan> {
      if (!facts.preview) return Error(Errc::preview_stale, "no preview");
      store::ReplayRun run;
      run.created_at = T;
      run.start_at = start_at;
      run.rate_per_second = 100;
      run.paced_from = start_at;
      run.updated_at = T;
      return store::ConfirmPlan{run, std::nullopt};
    };
    auto confirmed = wait(store->batch_confirm(c));
    BOOST_REQUIRE(confirmed.has_value());
    BOOST_REQUIRE(confirmed->run.has_value());
    return *confirmed->run;
  }

  store::RunStep step(long long run_id, long long expected, long long max_replays,
                      long long max_items = 100, TimeMs now = T + 1000,
                      store::Store* on = nullptr) {
    store::RunStepParams p;
    p.run_id = run_id;
    p.expected_next_seq = expected;
    p.max_replays = max_replays;
    p.max_items = max_items;
    p.now = now;
    p.decide = [now](const Message& m, const store::Related& r) {
      return core::replay(m, r, {}, now);
    };
    return wait((on ? on : store.get())->replay_run_step(p));
  }

  Result<store::ReplayRun> change(long long run_id, const std::string& status, TimeMs now,
                                  const std::string& action) {
    store::RunChangeParams p;
    p.run_id = run_id;
    p.decide = [=](const store::ReplayRun& run)
        -> Result<std::pair<store::ReplayRun, AuditEntry>> {
      store::ReplayRun next = run;
      next.status = parse_run_status(status).value();
      next.updated_at = now;
      AuditEntry e;
      e.at = now;
      e.action = action;
      e.details = R"({"replay_id":)" + std::to_string(run.id) + "}";
      return std::pair{next, e};
    };
    return wait(store->replay_run_change(p));
  }

  void replay_alone(const Message& m, TimeMs now) {
    store::UpdateParams u;
    u.queue = m.queue;
    u.id = m.id;
    u.decide = [now](const Message& current, const store::Related& r) {
      return core::replay(current, r, {}, now);
    };
    BOOST_REQUIRE(wait(store->message_update(u)).has_value());
  }

  std::string status_of(const Message& m) {
    return std::string(to_string(wait(store->message_find(m.queue, m.id))->status));
  }

  int runs_made = 0;
};

BOOST_FIXTURE_TEST_SUITE(store_runs, RunsFixture)

BOOST_AUTO_TEST_CASE(a_run_is_read_with_the_outcomes_of_its_replayed_messages_as_they_are_now) {
  BOOST_TEST(!wait(store->replay_run_find(12345)).has_value());
  // A queue each, so that each claim below takes the message meant.
  std::vector<Message> m;
  for (const char* q : {"qa", "qb", "qc", "qd", "qe", "qf"}) m.push_back(dead_message_at(q, q, T));
  auto run = create_run({m[0].id, m[1].id, m[2].id, m[3].id, m[4].id, m[5].id});
  replay_alone(m[5], T + 500);  // no longer dead: skipped, and never counted as the run's
  BOOST_TEST(to_string(step(run.id, 0, 10).run.status) == "done");
  auto fresh = wait(store->replay_run_find(run.id));
  BOOST_REQUIRE(fresh.has_value());
  BOOST_TEST(fresh->replayed == 5);
  BOOST_TEST(fresh->skipped == 1);
  BOOST_TEST(fresh->pending == 5);
  BOOST_TEST(fresh->succeeded + fresh->dead_again == 0);

  auto fail_now = [this](const Message& msg) {
    BOOST_REQUIRE_EQUAL(claim(msg.queue, T + 2000).size(), 1u);
    store::UpdateParams u;
    u.queue = msg.queue;
    u.id = msg.id;
    u.decide = [](const Message& current, const store::Related&) {
      return core::fail(current, {}, QueuePolicy{}, T + 2000, [] { return 0.0; });
    };
    BOOST_REQUIRE(to_string(wait(store->message_update(u))->status) == "dead");  // max_retries 1
  };
  BOOST_REQUIRE_EQUAL(claim("qa", T + 2000).size(), 1u);
  store::UpdateParams succeed;
  succeed.queue = "qa";
  succeed.id = m[0].id;
  succeed.decide = [](const Message& current, const store::Related&) {
    return core::succeed(current, std::nullopt, T + 2100);
  };
  BOOST_REQUIRE(wait(store->message_update(succeed)).has_value());
  fail_now(m[1]);
  fail_now(m[2]);
  store::UpdateParams dismiss;
  dismiss.queue = "qc";
  dismiss.id = m[2].id;
  dismiss.decide = [](const Message& current, const store::Related&) {
    return core::dismiss(current, std::nullopt, std::nullopt, T + 2200);
  };
  BOOST_REQUIRE(wait(store->message_update(dismiss)).has_value());
  BOOST_REQUIRE_EQUAL(claim("qe", T + 2000).size(), 1u);  // processing: still under way

  auto now = wait(store->replay_run_find(run.id));
  BOOST_REQUIRE(now.has_value());
  BOOST_TEST(now->succeeded == 1);   // qa
  BOOST_TEST(now->dead_again == 2);  // qb dead, qc dismissed
  BOOST_TEST(now->pending == 2);     // qd pending, qe processing
  BOOST_TEST(now->matched == 6);
  BOOST_TEST(now->next_seq == 6);
  BOOST_TEST(to_string(now->status) == "done");
}

BOOST_AUTO_TEST_CASE(runs_list_newest_first_by_keyset_active_ones_oldest_first_and_by_message) {
  Message x = dead_message_at("qx", "x", T);
  Message y = dead_message_at("qy", "y", T);
  Message z = dead_message_at("qz", "z", T);
  Message w = dead_message_at("qw", "w", T);
  const long long r1 = create_run({x.id}).id;  // stays scheduled
  const long long r2 = create_run({y.id}).id;  // paused
  const long long r3 = create_run({x.id, y.id}).id;  // running: one step taken
  const long long r4 = create_run({z.id}).id;  // cancelled
  const long long r5 = create_run({w.id}).id;  // done
  BOOST_REQUIRE(change(r2, "paused", T + 500, "batch_replay_pause").has_value());
  BOOST_REQUIRE(change(r4, "cancelled", T + 500, "batch_replay_cancel").has_value());
  BOOST_REQUIRE(to_string(step(r3, 0, 1).run.status) == "running");
  BOOST_REQUIRE(to_string(step(r5, 0, 1).run.status) == "done");

  store::RunListParams p;
  auto all = wait(store->replay_runs_list(p));
  BOOST_TEST((ids_of(all) == Ids{r5, r4, r3, r2, r1}));
  // Outcome counts: of the items a run has replayed, not of every item it holds.
  BOOST_TEST(all[2].pending == 1);  // r3 replayed x
  BOOST_TEST(all[0].pending == 1);  // r5 replayed w
  BOOST_TEST(all[4].pending == 0);  // r1 holds x, which r3 replayed

  p.limit = 2;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(p))) == Ids{r5, r4}));
  p.before_id = r4;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(p))) == Ids{r3, r2}));
  p.before_id = r2;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(p))) == Ids{r1}));
  p.before_id = r1;
  BOOST_TEST(wait(store->replay_runs_list(p)).empty());

  store::RunListParams active;
  active.active_only = true;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(active))) == Ids{r1, r3}));
  active.limit = 1;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(active))) == Ids{r1}));

  store::RunListParams holding;
  holding.message_id = x.id;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(holding))) == Ids{r3, r1}));
  holding.message_id = y.id;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(holding))) == Ids{r3, r2}));
  holding.message_id = w.id;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(holding))) == Ids{r5}));
  holding.message_id = w.id + 1000;
  BOOST_TEST(wait(store->replay_runs_list(holding)).empty());
  holding.message_id = x.id;
  holding.limit = 1;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(holding))) == Ids{r3}));
  holding.before_id = r3;
  BOOST_TEST((ids_of(wait(store->replay_runs_list(holding))) == Ids{r1}));
}

BOOST_AUTO_TEST_CASE(steps_replay_up_to_their_allowance_and_skip_what_is_no_longer_dead) {
  Message a = dead_message_at("q", "a", T);
  Message b = dead_message_at("q", "b", T);
  Message c = dead_message_at("gone", "c", T);
  Message d = dead_message_at("q", "d", T);
  Message e = dead_message_at("q", "e", T);
  auto run = create_run({a.id, b.id, c.id, d.id, e.id});
  BOOST_REQUIRE_EQUAL(run.matched, 5);
  replay_alone(b, T + 500);  // not dead any more
  store::PurgeParams purge;  // c is gone
  purge.status = Status::dead;
  purge.before = T + 1;
  purge.queue = "gone";
  BOOST_REQUIRE_EQUAL(wait(store->messages_purge(purge)).total, 1);

  auto first = step(run.id, 0, 1);  // a, then the allowance is spent
  BOOST_TEST(!first.fenced);
  BOOST_REQUIRE_EQUAL(first.replayed.size(), 1u);
  BOOST_TEST(first.replayed[0].id == a.id);
  BOOST_TEST(to_string(first.replayed[0].status) == "pending");
  BOOST_TEST(first.run.next_seq == 1);
  BOOST_TEST(to_string(first.run.status) == "running");
  BOOST_TEST(first.run.paced_count == 1);

  auto second = step(run.id, 1, 5, 2);  // b and c are looked at and skipped: max_items is 2
  BOOST_TEST(second.replayed.empty());
  BOOST_TEST(second.run.next_seq == 3);
  BOOST_TEST(second.run.skipped == 2);
  BOOST_TEST(second.run.replayed == 1);
  BOOST_TEST(second.run.paced_count == 1);  // skips do not count against the pacing

  auto third = step(run.id, 3, 1);
  BOOST_REQUIRE_EQUAL(third.replayed.size(), 1u);
  BOOST_TEST(third.replayed[0].id == d.id);
  BOOST_TEST(third.run.next_seq == 4);
  BOOST_TEST(to_string(third.run.status) == "running");

  auto last = step(run.id, 4, 5, 100, T + 1500);
  BOOST_REQUIRE_EQUAL(last.replayed.size(), 1u);
  BOOST_TEST(last.replayed[0].id == e.id);
  BOOST_TEST(to_string(last.run.status) == "done");
  BOOST_TEST(last.run.next_seq == 5);

  auto stored = wait(store->replay_run_find(run.id));
  BOOST_TEST(to_string(stored->status) == "done");
  BOOST_TEST(stored->next_seq == 5);
  BOOST_TEST(stored->replayed == 3);
  BOOST_TEST(stored->skipped == 2);
  BOOST_TEST(stored->paced_count == 3);
  BOOST_TEST(stored->updated_at == T + 1500);
  BOOST_TEST(step(run.id, 5, 5).fenced);  // done: nothing left to drive

  for (const Message& replayed : {a, d, e}) {
    auto now = wait(store->message_find("q", replayed.id));
    BOOST_TEST(to_string(now->status) == "pending");
    BOOST_TEST(now->replay_count == 1);
  }
  // b was replayed once, by hand: the run did not replay it again.
  auto b_history = wait(store->message_history("q", b.id))->attempts;
  BOOST_TEST(b_history.back().finished_at == T + 500);
  BOOST_TEST(wait(store->message_find("q", b.id))->replay_count == 1);
}

BOOST_AUTO_TEST_CASE(a_step_that_expects_another_next_seq_is_fenced_and_changes_nothing) {
  Message a = dead_message_at("q", "a", T);
  Message b = dead_message_at("q", "b", T);
  auto run = create_run({a.id, b.id});
  auto fenced = step(run.id, 1, 5);
  BOOST_TEST(fenced.fenced);
  BOOST_TEST(fenced.replayed.empty());
  BOOST_TEST(fenced.run.next_seq == 0);
  BOOST_TEST(status_of(a) == "dead");
  auto stored = wait(store->replay_run_find(run.id));
  BOOST_TEST(to_string(stored->status) == "scheduled");
  BOOST_TEST(stored->next_seq == 0);
  BOOST_TEST(stored->updated_at == T);
}

BOOST_AUTO_TEST_CASE(a_step_after_another_node_moved_the_run_on_is_fenced) {
  Message a = dead_message_at("q", "a", T);
  Message b = dead_message_at("q", "b", T);
  Message c = dead_message_at("q", "c", T);
  auto run = create_run({a.id, b.id, c.id});
  auto other = open_another();
  auto theirs = step(run.id, 0, 1, 100, T + 1000, other.get());
  BOOST_REQUIRE(!theirs.fenced);
  BOOST_REQUIRE_EQUAL(theirs.replayed.size(), 1u);

  auto ours = step(run.id, 0, 1);  // read the run before the other node's step
  BOOST_TEST(ours.fenced);
  BOOST_TEST(ours.replayed.empty());
  BOOST_TEST(status_of(b) == "dead");
  auto stored = wait(store->replay_run_find(run.id));
  BOOST_TEST(stored->next_seq == 1);
  BOOST_TEST(stored->replayed == 1);
  // With the run as it is now, this node drives it on.
  auto next = step(run.id, 1, 1);
  BOOST_TEST(!next.fenced);
  BOOST_TEST(next.replayed.at(0).id == b.id);
  other->close();
}

BOOST_AUTO_TEST_CASE(a_run_is_not_stepped_before_its_start) {
  Message a = dead_message_at("q", "a", T);
  auto run = create_run({a.id}, T + 5000);
  BOOST_TEST(step(run.id, 0, 5, 100, T + 4999).fenced);
  BOOST_TEST(status_of(a) == "dead");
  auto started = step(run.id, 0, 5, 100, T + 5000);
  BOOST_TEST(!started.fenced);
  BOOST_TEST(started.replayed.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_change_is_decided_on_the_run_as_stored_and_audited) {
  long long asked = 0;
  store::RunChangeParams unknown;
  unknown.run_id = 12345;
  unknown.decide = [&asked](const store::ReplayRun&)
      -> Result<std::pair<store::ReplayRun, AuditEntry>> {
    ++asked;
    return Error(Errc::invalid_state, "never asked");
  };
  BOOST_TEST((wait(store->replay_run_change(unknown)).error().code == Errc::replay_not_found));
  BOOST_TEST(asked == 0);

  Message a = dead_message_at("q", "a", T);
  Message b = dead_message_at("q", "b", T);
  auto run = create_run({a.id, b.id});
  BOOST_REQUIRE(step(run.id, 0, 1).replayed.size() == 1u);  // running, paced_count 1

  // Refused: nothing written.
  store::RunChangeParams refused;
  refused.run_id = run.id;
  refused.decide = [](const store::ReplayRun&) -> Result<std::pair<store::ReplayRun, AuditEntry>> {
    return Error(Errc::invalid_state, "only paused runs can be resumed");
  };
  BOOST_TEST((wait(store->replay_run_change(refused)).error().code == Errc::invalid_state));
  auto same = wait(store->replay_run_find(run.id));
  BOOST_TEST(to_string(same->status) == "running");
  BOOST_TEST(same->updated_at == T + 1000);
  BOOST_TEST(wait(store->audit_list({})).empty());

  auto paused = change(run.id, "paused", T + 2000, "batch_replay_pause");
  BOOST_REQUIRE(paused.has_value());
  BOOST_TEST(to_string(paused->status) == "paused");
  BOOST_TEST(paused->pending == 1);  // the answer carries the outcome counts
  BOOST_TEST(to_string(wait(store->replay_run_find(run.id))->status) == "paused");
  BOOST_TEST(step(run.id, 1, 5, 100, T + 2500).fenced);  // a paused run is not driven
  BOOST_TEST(status_of(b) == "dead");

  // Resume with pacing afresh, as the core does: the stored run is what decide sees.
  std::optional<store::ReplayRun> seen;
  store::RunChangeParams resume;
  resume.run_id = run.id;
  resume.decide = [&seen](const store::ReplayRun& r)
      -> Result<std::pair<store::ReplayRun, AuditEntry>> {
    seen = r;
    store::ReplayRun next = r;
    next.status = RunStatus::running;
    next.paced_from = T + 3000;
    next.paced_count = 0;
    next.updated_at = T + 3000;
    AuditEntry e;
    e.at = T + 3000;
    e.action = "batch_replay_resume";
    return std::pair{next, e};
  };
  BOOST_REQUIRE(wait(store->replay_run_change(resume)).has_value());
  BOOST_REQUIRE(seen.has_value());
  BOOST_TEST(to_string(seen->status) == "paused");
  BOOST_TEST(seen->paced_count == 1);
  BOOST_TEST(seen->updated_at == T + 2000);
  auto resumed = wait(store->replay_run_find(run.id));
  BOOST_TEST(to_string(resumed->status) == "running");
  BOOST_TEST(resumed->paced_from == T + 3000);
  BOOST_TEST(resumed->paced_count == 0);
  BOOST_TEST(resumed->updated_at == T + 3000);
  BOOST_TEST(resumed->next_seq == 1);

  auto entries = wait(store->audit_list({}));
  BOOST_REQUIRE_EQUAL(entries.size(), 2u);
  BOOST_TEST(entries[0].action == "batch_replay_resume");  // newest first
  BOOST_TEST(entries[1].action == "batch_replay_pause");
  BOOST_TEST(*entries[1].details == R"({"replay_id":)" + std::to_string(run.id) + "}");
  BOOST_TEST(to_string(step(run.id, 1, 5, 100, T + 3000).run.status) == "done");
}

BOOST_AUTO_TEST_SUITE_END()

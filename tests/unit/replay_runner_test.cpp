// Replay runs without a database: the pacing (how many items a run may replay now, when the next
// is due), the status rules the store's step and the desk share, and what pause, resume and
// cancel make of a run.
#include <boost/test/unit_test.hpp>

#include "core/desk.hpp"
#include "core/replay_runner.hpp"

using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kT = 4102444800000;  // 2100-01-01

store::ReplayRun paced(double rate, long long paced_count = 0, TimeMs paced_from = kT) {
  store::ReplayRun run;
  run.id = 9;
  run.rate_per_second = rate;
  run.paced_from = paced_from;
  run.paced_count = paced_count;
  run.start_at = paced_from;
  run.matched = 1000;
  run.filter = R"({"queue":"q"})";
  return run;
}

RequestContext at(TimeMs now) {
  RequestContext ctx;
  ctx.now = now;
  ctx.actor = "ops";
  return ctx;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replay_runner)

BOOST_AUTO_TEST_CASE(the_first_item_goes_at_paced_from_then_one_every_one_over_rate_seconds) {
  auto run = paced(10);
  BOOST_TEST(replay_allowance(run, kT - 1) == 0);  // before its start: nothing
  BOOST_TEST(replay_allowance(run, kT) == 1);
  BOOST_TEST(replay_allowance(run, kT + 99) == 1);
  BOOST_TEST(replay_allowance(run, kT + 100) == 2);
  BOOST_TEST(replay_allowance(run, kT + 1000) == 11);
  // What was released already is not released again.
  BOOST_TEST(replay_allowance(paced(10, 5), kT + 1000) == 6);
  BOOST_TEST(replay_allowance(paced(10, 11), kT + 1000) == 0);
  BOOST_TEST(replay_allowance(paced(10, 20), kT + 1000) == 0);  // never negative
}

BOOST_AUTO_TEST_CASE(fractional_rates_release_an_item_every_few_seconds) {
  auto run = paced(0.5);  // one every two seconds
  BOOST_TEST(replay_allowance(run, kT) == 1);
  BOOST_TEST(replay_allowance(run, kT + 1999) == 1);
  BOOST_TEST(replay_allowance(run, kT + 2000) == 2);
  BOOST_TEST(replay_allowance(paced(0.5, 1), kT + 1999) == 0);
  BOOST_TEST(replay_allowance(paced(0.5, 1), kT + 2000) == 1);
  BOOST_TEST(replay_allowance(paced(2.5), kT + 1000) == 3);  // 0, 400, 800 ms
}

BOOST_AUTO_TEST_CASE(the_next_item_is_due_when_the_allowance_would_grow_again) {
  BOOST_TEST(replay_next_due(paced(10, 0)) == kT);
  BOOST_TEST(replay_next_due(paced(10, 1)) == kT + 100);
  BOOST_TEST(replay_next_due(paced(10, 7)) == kT + 700);
  BOOST_TEST(replay_next_due(paced(0.5, 1)) == kT + 2000);
  // A third of a second, rounded up to the millisecond at which the item is released.
  auto third = paced(3, 1);
  BOOST_TEST(replay_next_due(third) == kT + 334);
  BOOST_TEST(replay_allowance(third, kT + 333) == 0);
  BOOST_TEST(replay_allowance(third, replay_next_due(third)) == 1);
}

BOOST_AUTO_TEST_CASE(a_resumed_run_paces_afresh_from_the_resume) {
  store::ReplayRun run = paced(1, 3);  // three items released at 1/s, then paused
  run.status = RunStatus::paused;
  const TimeMs resume_at = kT + 100000;
  // Left as it was, the paused time would be a burst of a hundred items.
  BOOST_TEST(replay_allowance(run, resume_at) == 98);

  auto resumed = decide_run_change(run, RunAction::resume, at(resume_at));
  BOOST_REQUIRE(resumed.has_value());
  const store::ReplayRun& next = resumed->first;
  BOOST_TEST(to_string(next.status) == "running");
  BOOST_TEST(next.paced_from == resume_at);
  BOOST_TEST(next.paced_count == 0);
  BOOST_TEST(next.updated_at == resume_at);
  BOOST_TEST(replay_allowance(next, resume_at) == 1);
  BOOST_TEST(replay_next_due(next) == resume_at);
  BOOST_TEST(replay_allowance(next, resume_at + 1000) == 2);

  // A run paused before its start resumes scheduled, paced from its start.
  store::ReplayRun early = paced(1, 0, kT + 60000);
  early.status = RunStatus::paused;
  auto waiting = decide_run_change(early, RunAction::resume, at(kT));
  BOOST_REQUIRE(waiting.has_value());
  BOOST_TEST(to_string(waiting->first.status) == "scheduled");
  BOOST_TEST(waiting->first.paced_from == kT + 60000);
}

BOOST_AUTO_TEST_CASE(run_statuses_read_back_and_only_scheduled_and_running_runs_are_live) {
  for (RunStatus s : {RunStatus::scheduled, RunStatus::running, RunStatus::paused,
                      RunStatus::cancelled, RunStatus::done}) {
    BOOST_TEST((parse_run_status(to_string(s)) == std::optional<RunStatus>(s)));
  }
  BOOST_TEST(to_string(RunStatus::cancelled) == "cancelled");
  BOOST_TEST(!parse_run_status("Running").has_value());
  BOOST_TEST(!parse_run_status("").has_value());

  BOOST_TEST(run_live(RunStatus::scheduled));
  BOOST_TEST(run_live(RunStatus::running));
  BOOST_TEST(!run_live(RunStatus::paused));
  BOOST_TEST(!run_live(RunStatus::cancelled));
  BOOST_TEST(!run_live(RunStatus::done));
}

BOOST_AUTO_TEST_CASE(a_step_leaves_its_run_running_until_its_last_item_is_done) {
  BOOST_TEST(to_string(status_after_step(0, 3)) == "running");
  BOOST_TEST(to_string(status_after_step(2, 3)) == "running");
  BOOST_TEST(to_string(status_after_step(3, 3)) == "done");
  BOOST_TEST(to_string(status_after_step(0, 0)) == "done");  // a run over nothing
}

BOOST_AUTO_TEST_CASE(pause_and_cancel_follow_the_live_rule_and_write_their_audit_entry) {
  store::ReplayRun run = paced(10, 4);
  run.status = RunStatus::running;
  run.replayed = 4;
  auto paused = decide_run_change(run, RunAction::pause, at(kT + 500));
  BOOST_REQUIRE(paused.has_value());
  BOOST_TEST(to_string(paused->first.status) == "paused");
  BOOST_TEST(paused->first.paced_count == 4);  // pacing is reset by resume, not by pause
  const AuditEntry& e = paused->second;
  BOOST_TEST(e.action == "batch_replay_pause");
  BOOST_TEST(*e.actor == "ops");
  BOOST_TEST(*e.queue == "q");
  BOOST_TEST(*e.details ==
             R"({"replay_id":9,"status_before":"running","status":"paused","replayed":4,"skipped":0})");

  run.status = RunStatus::scheduled;
  BOOST_TEST(decide_run_change(run, RunAction::pause, at(kT)).has_value());
  BOOST_TEST(decide_run_change(run, RunAction::cancel, at(kT)).has_value());
  BOOST_TEST(!decide_run_change(run, RunAction::resume, at(kT)).has_value());

  run.status = RunStatus::paused;
  BOOST_TEST(!decide_run_change(run, RunAction::pause, at(kT)).has_value());
  auto cancelled = decide_run_change(run, RunAction::cancel, at(kT));
  BOOST_REQUIRE(cancelled.has_value());
  BOOST_TEST(to_string(cancelled->first.status) == "cancelled");

  for (RunStatus over : {RunStatus::done, RunStatus::cancelled}) {
    run.status = over;
    for (RunAction action : {RunAction::pause, RunAction::resume, RunAction::cancel}) {
      auto refused = decide_run_change(run, action, at(kT));
      BOOST_REQUIRE(!refused.has_value());
      BOOST_TEST((refused.error().code == Errc::invalid_state));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

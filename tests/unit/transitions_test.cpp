#include <boost/test/unit_test.hpp>

#include "core/incident_backfill.hpp"
#include "core/transitions.hpp"
#include "core/trials.hpp"
#include "core/versions.hpp"
#include "model/fingerprint.hpp"

using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kNow = 4102444800000;  // 2100-01-01
const UnitRandom kNoJitter = [] { return 0.0; };

Message processing(int retry_count = 0, int max_retries = 3) {
  Message m;
  m.id = 7;
  m.queue = "q";
  m.payload = "p";
  m.status = Status::processing;
  m.retry_count = retry_count;
  m.max_retries = max_retries;
  m.attempts = retry_count + 1;
  m.last_attempt_at = kNow - 1000;
  m.lease_id = "lease-7";
  m.lease_expires_at = kNow + 30000;
  m.worker = "w1";
  m.created_at = m.updated_at = m.life_started_at = kNow - 60000;
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transitions)

BOOST_AUTO_TEST_CASE(succeed_from_processing_records_the_attempt) {
  auto r = succeed(processing(), std::nullopt, kNow);
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(to_string(r->next.status) == "succeeded");
  BOOST_TEST(r->next.updated_at == kNow);
  // The lease is over, but its id stays on the message (never shown) for a resent ack.
  BOOST_TEST(*r->next.lease_id == "lease-7");
  BOOST_TEST(!r->next.lease_expires_at.has_value());
  BOOST_TEST(!r->next.worker.has_value());
  BOOST_REQUIRE_EQUAL(r->history.size(), 1u);
  BOOST_TEST(to_string(r->history[0].outcome) == "succeeded");
  BOOST_TEST(*r->history[0].claimed_at == kNow - 1000);
  BOOST_TEST(*r->history[0].worker == "w1");
}

BOOST_AUTO_TEST_CASE(succeed_refuses_other_states_and_stale_leases) {
  Message m = processing();
  m.status = Status::pending;
  m.lease_id.reset();
  auto r = succeed(m, std::nullopt, kNow);
  BOOST_TEST(!r.has_value());
  BOOST_TEST((r.error().code == Errc::invalid_state));
  BOOST_TEST(r.error().message == "only processing messages can succeed");
  auto stale = succeed(processing(), std::string("someone-else"), kNow);
  BOOST_TEST((stale.error().code == Errc::lease_lost));
  // A lease_id on a message that holds none is lost too, whatever the status.
  auto none = succeed(m, std::string("lease-7"), kNow);
  BOOST_TEST((none.error().code == Errc::lease_lost));
  BOOST_TEST(succeed(processing(), std::string("lease-7"), kNow).has_value());
}

BOOST_AUTO_TEST_CASE(an_ack_resent_under_the_lease_it_succeeded_with_changes_nothing) {
  auto done = succeed(processing(), std::string("lease-7"), kNow, true);
  BOOST_REQUIRE(done.has_value());
  auto again = succeed(done->next, std::string("lease-7"), kNow + 5, true);
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(again->unchanged);
  BOOST_TEST(again->history.empty());
  BOOST_TEST(again->next.updated_at == kNow);
  // Any other lease, or none, is refused as before; the old lease moves nothing else.
  BOOST_TEST((succeed(done->next, std::string("lease-8"), kNow, true).error().code == Errc::lease_lost));
  BOOST_TEST((succeed(done->next, std::nullopt, kNow, true).error().code == Errc::invalid_state));
  // The single succeed route is no ack: that lease is over (Part A).
  BOOST_TEST((succeed(done->next, std::string("lease-7"), kNow).error().code == Errc::lease_lost));
  FailInput in;
  in.lease_id = "lease-7";
  BOOST_TEST((fail(done->next, in, QueuePolicy{}, kNow, kNoJitter).error().code == Errc::lease_lost));
  BOOST_TEST((extend(done->next, "lease-7", kNow, std::nullopt, kNow).error().code == Errc::lease_lost));
}

BOOST_AUTO_TEST_CASE(fail_backs_off_then_goes_dead_when_retries_run_out) {
  QueuePolicy policy;
  FailInput in;
  in.error = "boom";
  auto first = fail(processing(0, 3), in, policy, kNow, kNoJitter);
  BOOST_TEST(to_string(first->next.status) == "pending");
  BOOST_TEST(first->next.retry_count == 1);
  BOOST_TEST(*first->next.retry_after == kNow + 2000);
  BOOST_TEST(*first->next.last_error == "boom");
  BOOST_TEST(to_string(*first->next.error_class) == "unknown");
  auto second = fail(processing(1, 3), in, policy, kNow, kNoJitter);
  BOOST_TEST(*second->next.retry_after == kNow + 4000);
  auto third = fail(processing(2, 3), in, policy, kNow, kNoJitter);
  BOOST_TEST(to_string(third->next.status) == "dead");
  BOOST_TEST(third->next.retry_count == 3);
  BOOST_TEST(!third->next.retry_after.has_value());
  BOOST_TEST(to_string(*third->next.dead_reason) == "retries_exhausted");
  BOOST_TEST(*third->next.dead_at == kNow);
  BOOST_TEST(to_string(third->history.at(0).outcome) == "failed");
  BOOST_TEST(*third->history.at(0).error == "boom");
}

BOOST_AUTO_TEST_CASE(non_retryable_classes_go_dead_at_once) {
  QueuePolicy policy;
  for (auto cls : {ErrorClass::invalid_input, ErrorClass::not_found, ErrorClass::auth,
                   ErrorClass::uncertain_effect}) {
    FailInput in;
    in.error_class = cls;
    auto r = fail(processing(0, 5), in, policy, kNow, kNoJitter);
    BOOST_TEST(to_string(r->next.status) == "dead");
    BOOST_TEST(to_string(*r->next.dead_reason) == "non_retryable");
    BOOST_TEST(r->next.retry_count == 1);
  }
  for (auto cls : {ErrorClass::transient, ErrorClass::throttled, ErrorClass::timeout,
                   ErrorClass::unknown}) {
    FailInput in;
    in.error_class = cls;
    BOOST_TEST(to_string(fail(processing(0, 5), in, policy, kNow, kNoJitter)->next.status) == "pending");
  }
}

BOOST_AUTO_TEST_CASE(an_explicit_retryable_wins_over_the_class) {
  QueuePolicy policy;
  FailInput in;
  in.error_class = ErrorClass::auth;
  in.retryable = true;
  BOOST_TEST(to_string(fail(processing(0, 5), in, policy, kNow, kNoJitter)->next.status) == "pending");
  FailInput transient;
  transient.error_class = ErrorClass::transient;
  transient.retryable = false;
  auto r = fail(processing(0, 5), transient, policy, kNow, kNoJitter);
  BOOST_TEST(to_string(*r->next.dead_reason) == "non_retryable");
}

BOOST_AUTO_TEST_CASE(a_queue_list_of_non_retryable_classes_replaces_the_default) {
  QueuePolicy policy;
  policy.non_retryable = {ErrorClass::throttled};
  FailInput auth;
  auth.error_class = ErrorClass::auth;
  BOOST_TEST(to_string(fail(processing(0, 5), auth, policy, kNow, kNoJitter)->next.status) == "pending");
  FailInput throttled;
  throttled.error_class = ErrorClass::throttled;
  BOOST_TEST(to_string(fail(processing(0, 5), throttled, policy, kNow, kNoJitter)->next.status) == "dead");
}

BOOST_AUTO_TEST_CASE(retry_in_replaces_the_computed_backoff) {
  QueuePolicy policy;
  FailInput in;
  in.retry_in_seconds = 60;
  auto r = fail(processing(2, 5), in, policy, kNow, kNoJitter);
  BOOST_TEST(*r->next.retry_after == kNow + 60000);
}

BOOST_AUTO_TEST_CASE(retry_window_sends_late_retries_to_dead) {
  QueuePolicy policy;
  policy.retry_window_seconds = 65;  // life started 60 s before kNow: the window ends at +5 s
  FailInput in;
  auto first = fail(processing(0, 5), in, policy, kNow, kNoJitter);  // due at +2 s
  BOOST_TEST(to_string(first->next.status) == "pending");
  auto second = fail(processing(1, 5), in, policy, kNow, kNoJitter);  // due at +4 s
  BOOST_TEST(to_string(second->next.status) == "pending");
  auto late = fail(processing(2, 5), in, policy, kNow, kNoJitter);  // due at +8 s: too late
  BOOST_TEST(to_string(late->next.status) == "dead");
  BOOST_TEST(to_string(*late->next.dead_reason) == "retry_window_exceeded");
}

BOOST_AUTO_TEST_CASE(checkpoint_survives_failure) {
  QueuePolicy policy;
  FailInput in;
  in.checkpoint = "email_sent";
  auto r = fail(processing(), in, policy, kNow, kNoJitter);
  BOOST_TEST(*r->next.checkpoint == "email_sent");
  FailInput without;
  Message m = r->next;
  m.status = Status::processing;
  m.lease_id = "x";
  BOOST_TEST(*fail(m, without, policy, kNow, kNoJitter)->next.checkpoint == "email_sent");
}

BOOST_AUTO_TEST_CASE(replay_starts_a_new_life) {
  QueuePolicy policy;
  FailInput in;
  in.error_class = ErrorClass::invalid_input;
  in.checkpoint = "half";
  Message dead = fail(processing(1, 3), in, policy, kNow, kNoJitter)->next;
  dead.lease_expiries = 2;
  ReplayInput replay_in;
  replay_in.reason = "fixed the data";
  auto r = replay(dead, {}, replay_in, kNow + 5000);
  BOOST_REQUIRE(r.has_value());
  const Message& n = r->next;
  BOOST_TEST(to_string(n.status) == "pending");
  BOOST_TEST(n.retry_count == 0);
  BOOST_TEST(n.lease_expiries == 0);
  BOOST_TEST(!n.last_error.has_value());
  BOOST_TEST(!n.retry_after.has_value());
  BOOST_TEST(!n.error_class.has_value());
  BOOST_TEST(!n.dead_reason.has_value());
  BOOST_TEST(!n.dead_at.has_value());
  BOOST_TEST(!n.fingerprint.has_value());
  BOOST_TEST(!n.title.has_value());
  BOOST_TEST(!r->history.at(0).fingerprint.has_value());
  BOOST_TEST(n.replay_count == 1);
  BOOST_TEST(n.life_started_at == kNow + 5000);
  BOOST_TEST(*n.checkpoint == "half");
  BOOST_TEST(n.max_retries == 3);
  BOOST_TEST(to_string(r->history.at(0).outcome) == "replayed");
  BOOST_TEST(*r->history.at(0).reason == "fixed the data");
}

BOOST_AUTO_TEST_CASE(a_failure_carries_its_title_and_fingerprint_on_message_and_entry) {
  Redactor redactor({"password"});
  FailInput in;
  in.error = "login failed: password=hunter2 after 3 tries";
  in.error_class = ErrorClass::auth;
  in.stack = "Traceback (most recent call last):\n  File \"/app/x.py\", line 9, in run\n";
  describe_failure(redactor, in);
  BOOST_TEST(in.title == "login failed: password=*** after <n> tries");
  BOOST_TEST(in.frame == "File \"/app/x.py\", line <n>, in run");
  Message m = processing();
  m.job_type = "mail";
  auto r = fail(m, in, QueuePolicy{}, kNow, kNoJitter);
  BOOST_REQUIRE(r.has_value());
  std::string expected = computed_fingerprint(m.job_type, ErrorClass::auth, in.title, in.frame);
  BOOST_TEST(*r->next.title == in.title);
  BOOST_TEST(*r->next.fingerprint == expected);
  BOOST_TEST(*r->history.at(0).title == in.title);
  BOOST_TEST(*r->history.at(0).fingerprint == expected);
  // The worker's own value replaces the computed one; the title stays the error's.
  in.fingerprint = "login-refused";
  auto own = fail(m, in, QueuePolicy{}, kNow, kNoJitter);
  BOOST_TEST(*own->next.fingerprint == worker_fingerprint(m.job_type, "login-refused"));
  BOOST_TEST(*own->history.at(0).fingerprint == *own->next.fingerprint);
  BOOST_TEST(*own->next.title == in.title);
}

BOOST_AUTO_TEST_CASE(a_lease_expiry_is_its_own_cause_and_keeps_the_class) {
  Message m = processing();
  m.job_type = "mail";
  m.error_class = ErrorClass::timeout;
  m.title = "slow relay";
  m.fingerprint = "0123456789abcdef";
  store::Change c = expire_lease(m, QueuePolicy{}, kNow, kNoJitter);
  BOOST_TEST(*c.next.title == "lease expired");
  BOOST_TEST(*c.next.fingerprint == lease_expiry_fingerprint(m.job_type));
  BOOST_TEST(*c.history.at(0).title == "lease expired");
  BOOST_TEST(*c.history.at(0).fingerprint == *c.next.fingerprint);
  BOOST_TEST(to_string(*c.next.error_class) == "timeout");
}

// The backfill gives a message that died before fingerprints what its death gives one now.
BOOST_AUTO_TEST_CASE(the_backfill_prints_an_old_death_as_its_failure_would) {
  Redactor redactor({"password"});
  FailInput in;
  in.error = "login failed: password=hunter2 after 3 tries";
  in.error_class = ErrorClass::auth;
  in.retryable = false;
  in.stack = "Traceback (most recent call last):\n  File \"/app/x.py\", line 9, in run\n";
  describe_failure(redactor, in);
  Message m = processing();
  m.job_type = "mail";
  auto died = fail(m, in, QueuePolicy{}, kNow, kNoJitter);
  BOOST_REQUIRE(died.has_value());
  BOOST_REQUIRE(to_string(died->next.status) == "dead");
  store::UnprintedDead old;
  old.id = m.id;
  old.queue = m.queue;
  old.job_type = m.job_type;
  old.error_class = died->next.error_class;
  old.last_error = died->next.last_error;
  old.dead_reason = died->next.dead_reason;
  old.dead_at = *died->next.dead_at;
  old.stack = in.stack;
  store::PrintedDead p = print_dead(old, redactor);
  BOOST_TEST(p.fingerprint == *died->next.fingerprint);
  BOOST_TEST(p.title == *died->next.title);
  BOOST_TEST(to_string(*p.incident_error_class) == "auth");
  // A lease expiry's death: its own cause, with no class for the incident.
  Message expiring = processing();
  expiring.job_type = "mail";
  expiring.lease_expiries = 2;  // the third expiry of QueuePolicy's 3 kills it
  store::Change expired = expire_lease(expiring, QueuePolicy{}, kNow, kNoJitter);
  old.error_class.reset();
  old.last_error = expired.next.last_error;
  old.dead_reason = expired.next.dead_reason;
  BOOST_REQUIRE(old.dead_reason == DeadReason::lease_expired);
  p = print_dead(old, redactor);
  BOOST_TEST(p.fingerprint == *expired.next.fingerprint);
  BOOST_TEST(p.title == *expired.next.title);
  BOOST_TEST(!p.incident_error_class.has_value());
}

BOOST_AUTO_TEST_CASE(replay_guards) {
  Message pending = processing();
  pending.status = Status::pending;
  BOOST_TEST(replay(pending, {}, {}, kNow).error().message == "only dead messages can be replayed");
  Message dismissed = processing();
  dismissed.status = Status::dismissed;
  BOOST_TEST((replay(dismissed, {}, {}, kNow).error().code == Errc::invalid_state));
  ReplayInput force;
  force.force = true;
  BOOST_TEST(replay(dismissed, {}, force, kNow).has_value());

  Message dead = processing();
  dead.status = Status::dead;
  store::Related in_flight{{Status::pending}, std::nullopt};
  BOOST_TEST((replay(dead, in_flight, force, kNow).error().code == Errc::idempotency_conflict));
  store::Related done{{Status::succeeded, Status::dead}, std::nullopt};
  BOOST_TEST((replay(dead, done, {}, kNow).error().code == Errc::already_succeeded));
  BOOST_TEST(replay(dead, done, force, kNow).has_value());
}

// At max_replays a replay is refused unless forced; a state that cannot be replayed says so
// first. A run's id rides on the `replayed` entry.
BOOST_AUTO_TEST_CASE(replay_at_max_replays_needs_force_and_names_its_run) {
  Message dead = processing();
  dead.status = Status::dead;
  dead.replay_count = 2;
  ReplayInput limited;
  limited.max_replays = 2;
  BOOST_TEST((replay(dead, {}, limited, kNow).error().code == Errc::replay_limit));
  Message pending = dead;
  pending.status = Status::pending;
  BOOST_TEST((replay(pending, {}, limited, kNow).error().code == Errc::invalid_state));
  limited.max_replays = 3;
  BOOST_TEST(replay(dead, {}, limited, kNow).has_value());
  limited.max_replays = 2;
  limited.force = true;
  limited.replay_id = 41;
  auto forced = replay(dead, {}, limited, kNow);
  BOOST_REQUIRE(forced.has_value());
  BOOST_TEST(forced->next.replay_count == 3);
  BOOST_TEST(forced->history.at(0).replay_id.value_or(0) == 41);
  ReplayInput unlimited;  // 0: no limit
  dead.replay_count = 1000;
  BOOST_TEST(replay(dead, {}, unlimited, kNow).has_value());
  BOOST_TEST(!replay(dead, {}, unlimited, kNow)->history.at(0).replay_id.has_value());
}

BOOST_AUTO_TEST_CASE(replay_with_an_edited_payload_keeps_the_previous_one_in_history) {
  Message dead = processing();
  dead.status = Status::dead;
  ReplayInput in;
  in.payload = "fixed";
  auto r = replay(dead, {}, in, kNow);
  BOOST_TEST(r->next.payload == "fixed");
  BOOST_TEST(*r->history.at(0).previous_payload == "p");
}

BOOST_AUTO_TEST_CASE(extend_and_release_need_the_current_lease) {
  auto e = extend(processing(), "lease-7", kNow + 90000, std::string("step2"), kNow);
  BOOST_TEST(*e->next.lease_expires_at == kNow + 90000);
  BOOST_TEST(*e->next.checkpoint == "step2");
  BOOST_TEST((extend(processing(), "old", kNow, std::nullopt, kNow).error().code == Errc::lease_lost));

  auto r = release(processing(2, 5), {}, "lease-7", kNow + 10000, kNow);
  BOOST_TEST(to_string(r->next.status) == "pending");
  BOOST_TEST(r->next.retry_count == 2);
  BOOST_TEST(*r->next.retry_after == kNow + 10000);
  BOOST_TEST(!r->next.lease_id.has_value());
  BOOST_TEST(to_string(r->history.at(0).outcome) == "released");
  BOOST_TEST(!r->fold);
  BOOST_TEST(r->history.at(0).count == 1);
  BOOST_TEST((release(processing(), {}, "old", std::nullopt, kNow).error().code == Errc::lease_lost));
}

// Issue 31, item 5: a release right after a release joins its entry; after anything else it
// starts one.
BOOST_AUTO_TEST_CASE(a_release_after_a_release_folds_into_its_entry) {
  Message m = processing(0, 5);
  m.attempts = 4;
  m.last_attempt_at = kNow - 100;
  m.worker = "w-4";
  store::Related related;
  AttemptRecord before;
  before.outcome = AttemptOutcome::released;
  before.attempt = 3;
  before.count = 2;
  before.claimed_at = kNow - 5000;
  before.finished_at = kNow - 200;
  before.worker = "w-3";
  related.last_entry = before;
  auto r = release(m, related, "lease-7", std::nullopt, kNow);
  BOOST_TEST(r->fold);
  BOOST_REQUIRE_EQUAL(r->history.size(), 1u);
  const auto& e = r->history[0];
  BOOST_TEST(e.count == 3);
  BOOST_TEST(e.attempt == 4);
  BOOST_TEST(*e.claimed_at == kNow - 5000);
  BOOST_TEST(e.finished_at == kNow);
  BOOST_TEST(*e.worker == "w-4");
  BOOST_TEST(r->next.retry_count == 0);

  related.last_entry->outcome = AttemptOutcome::failed;
  auto after_failure = release(m, related, "lease-7", std::nullopt, kNow);
  BOOST_TEST(!after_failure->fold);
  BOOST_TEST(after_failure->history.at(0).count == 1);
  BOOST_TEST(*after_failure->history.at(0).claimed_at == kNow - 100);
}

BOOST_AUTO_TEST_CASE(lease_expiry_backs_off_and_poison_goes_dead) {
  QueuePolicy policy;  // max_lease_expiries 3
  Message m = processing(1, 5);
  auto first = expire_lease(m, policy, kNow, kNoJitter);
  BOOST_TEST(to_string(first.next.status) == "pending");
  BOOST_TEST(first.next.lease_expiries == 1);
  BOOST_TEST(first.next.retry_count == 1);
  BOOST_TEST(*first.next.retry_after == kNow + 30000 + 2000);  // expiry + backoff(1)
  BOOST_TEST(*first.next.last_error == "lease expired");
  BOOST_TEST(to_string(first.history.at(0).outcome) == "lease_expired");
  m.lease_expiries = 2;
  auto third = expire_lease(m, policy, kNow, kNoJitter);
  BOOST_TEST(to_string(third.next.status) == "dead");
  BOOST_TEST(to_string(*third.next.dead_reason) == "lease_expired");
}

// Issue 39: on an SQS queue with a RedrivePolicy, a message received maxReceiveCount times dies
// when it would become visible again (expiry, release), named after the policy's target, and its
// incident is its own: job type and the title, no error class; the backfill prints it the same.
BOOST_AUTO_TEST_CASE(a_redrive_policy_ends_a_message_at_max_receive_count) {
  SqsQueueInfo sqs;
  sqs.redrive = SqsRedrive{"orders-dlq", 3};
  Message m = processing();
  m.job_type = "mail";
  m.error_class = ErrorClass::timeout;
  m.attempts = 4;
  m.life_attempts = 2;  // two receives in this life: visible again
  auto again = expire_lease(m, QueuePolicy{}, kNow, kNoJitter, &sqs);
  BOOST_TEST(to_string(again.next.status) == "pending");
  BOOST_TEST(!again.next.dead_letter_queue.has_value());
  m.life_attempts = 1;  // the third receive of this life
  auto died = expire_lease(m, QueuePolicy{}, kNow, kNoJitter, &sqs);
  BOOST_TEST(to_string(died.next.status) == "dead");
  BOOST_TEST(to_string(*died.next.dead_reason) == "max_receive_count");
  BOOST_TEST(*died.next.last_error == "received 3 times without being deleted");
  BOOST_TEST(*died.next.title == "received 3 times without being deleted");
  BOOST_TEST(*died.next.fingerprint == titled_fingerprint(m.job_type, *died.next.title));
  BOOST_TEST(*died.history.at(0).fingerprint == *died.next.fingerprint);
  BOOST_TEST(to_string(died.history.at(0).outcome) == "lease_expired");
  BOOST_TEST(*died.next.dead_letter_queue == "orders-dlq");
  BOOST_TEST(!died.next.lease_id.has_value());

  // A release (ChangeMessageVisibility 0) at the count: its own entry, not folded.
  store::Related related;
  AttemptRecord before;
  before.outcome = AttemptOutcome::released;
  related.last_entry = before;
  auto released = release(m, related, "lease-7", std::nullopt, kNow, &sqs);
  BOOST_REQUIRE(released.has_value());
  BOOST_TEST(!released->fold);
  BOOST_TEST(to_string(released->next.status) == "dead");
  BOOST_TEST(to_string(released->history.at(0).outcome) == "released");
  BOOST_TEST(released->history.at(0).count == 1);
  // Below the count, or on a queue without a policy, a release is a release.
  sqs.redrive->max_receive_count = 4;
  BOOST_TEST(to_string(release(m, related, "lease-7", std::nullopt, kNow, &sqs)->next.status) ==
             "pending");
  BOOST_TEST(to_string(release(m, related, "lease-7", std::nullopt, kNow)->next.status) ==
             "pending");

  // dlq's own fail keeps its retry policy, and a death by it is stamped with the target.
  FailInput in;
  in.error = "boom";
  in.retryable = false;
  auto failed = fail(m, in, QueuePolicy{}, kNow, kNoJitter);
  BOOST_REQUIRE(failed.has_value());
  stamp_dead_letter_queue(*failed, &sqs);
  BOOST_TEST(*failed->next.dead_letter_queue == "orders-dlq");
  BOOST_TEST(to_string(*failed->next.dead_reason) == "non_retryable");

  // The backfill's print of such a death matches what the death stored.
  store::UnprintedDead old;
  old.id = m.id;
  old.queue = m.queue;
  old.job_type = m.job_type;
  old.error_class = m.error_class;
  old.last_error = died.next.last_error;
  old.dead_reason = died.next.dead_reason;
  old.dead_at = *died.next.dead_at;
  store::PrintedDead p = print_dead(old, Redactor({}));
  BOOST_TEST(p.fingerprint == *died.next.fingerprint);
  BOOST_TEST(p.title == *died.next.title);
  BOOST_TEST(!p.incident_error_class.has_value());

  // A replay clears the stamp and the DLQ receive's hiding.
  Message dead = died.next;
  dead.sqs_hidden_until = kNow + 30000;
  dead.sqs_receipt = "r";
  ReplayInput replay_in;
  auto replayed = replay(dead, store::Related{}, replay_in, kNow + 1);
  BOOST_REQUIRE(replayed.has_value());
  BOOST_TEST(!replayed->next.dead_letter_queue.has_value());
  BOOST_TEST(!replayed->next.sqs_hidden_until.has_value());
  BOOST_TEST(!replayed->next.sqs_receipt.has_value());
  BOOST_TEST(replayed->next.life_attempts == dead.attempts);
}

// The registry's stored attributes as the queue service reads them.
BOOST_AUTO_TEST_CASE(the_sqs_queue_set_reads_visibility_and_redrive) {
  auto info = SqsQueueSet::parse(
      R"({"VisibilityTimeout":"40","RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq-1\",\"maxReceiveCount\":5}"})");
  BOOST_TEST(*info.visibility_ms == 40000);
  BOOST_REQUIRE(info.redrive.has_value());
  BOOST_TEST(info.redrive->target == "dlq-1");
  BOOST_TEST(info.redrive->max_receive_count == 5);
  BOOST_TEST(!SqsQueueSet::parse("{}").redrive.has_value());
  SqsQueueSet set;
  store::SqsQueueRow src;
  src.name = "src";
  src.attributes = R"({"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:r:a:dlq-1\",\"maxReceiveCount\":\"2\"}"})";
  set.put(src);
  store::SqsQueueRow plain;
  plain.name = "plain";
  set.put(plain);
  BOOST_TEST(set.row("src")->attributes == src.attributes);
  BOOST_TEST(!set.row("nope").has_value());
  BOOST_TEST(set.names_as_target("dlq-1"));
  BOOST_TEST(!set.names_as_target("src"));
  BOOST_TEST(set.find("src")->redrive->max_receive_count == 2);
  set.erase("src");
  BOOST_TEST(!set.names_as_target("dlq-1"));
}

BOOST_AUTO_TEST_CASE(dismiss_only_dead) {
  Message dead = processing();
  dead.status = Status::dead;
  auto r = dismiss(dead, std::string("won't fix"), std::nullopt, kNow);
  BOOST_TEST(to_string(r->next.status) == "dismissed");
  BOOST_TEST(dismiss(processing(), std::nullopt, std::nullopt, kNow).error().message ==
             "only dead messages can be dismissed");
}

// Versions from edits: each page asks for the edits it needs (one more to tell that another
// page follows) and builds versions from them and the current payload.
BOOST_AUTO_TEST_CASE(payload_versions_page_through_the_edits) {
  store::MessageEdits all;
  all.message.payload = "v3";
  all.message.created_at = kNow;
  all.edits = {{"v1", kNow + 10, std::string("ann"), std::string("one")},
               {"v2", kNow + 20, std::nullopt, std::string("two")}};
  auto page = [&](long long after, long long limit) {
    VersionsPage p{after, limit};
    EditsWindow w = edits_window(p);
    store::MessageEdits read{all.message, {}};
    for (long long i = w.from; i < w.from + w.count && i < 2; ++i) {
      read.edits.push_back(all.edits[static_cast<std::size_t>(i)]);
    }
    return versions_page(read, p);
  };
  auto whole = page(0, 20);
  BOOST_REQUIRE_EQUAL(whole.versions.size(), 3u);
  BOOST_TEST(whole.versions[0].payload == "v1");
  BOOST_TEST(whole.versions[0].at == kNow);
  BOOST_TEST(!whole.versions[0].actor.has_value());
  BOOST_TEST(whole.versions[1].payload == "v2");
  BOOST_TEST(whole.versions[1].at == kNow + 10);
  BOOST_TEST(*whole.versions[1].actor == "ann");
  BOOST_TEST(whole.versions[2].payload == "v3");
  BOOST_TEST(*whole.versions[2].reason == "two");
  BOOST_TEST(!whole.next_after.has_value());
  for (long long after = 0; after < 3; ++after) {
    auto one = page(after, 1);
    BOOST_REQUIRE_EQUAL(one.versions.size(), 1u);
    BOOST_TEST(one.versions[0].version == after + 1);
    BOOST_TEST(one.next_after.has_value() == (after < 2));
  }
  BOOST_TEST(page(3, 5).versions.empty());
  BOOST_TEST(page(1, 2).versions.back().payload == "v3");
  store::MessageEdits never{all.message, {}};
  auto single = versions_page(never, {0, 20});
  BOOST_REQUIRE_EQUAL(single.versions.size(), 1u);
  BOOST_TEST(single.versions[0].payload == "v3");
}

// Recorded side effects (issue 36): what each state does to a new, started or done key.
BOOST_AUTO_TEST_CASE(record_effect_rules) {
  Message m = processing(1);  // attempt 2
  auto input = [](const char* key, EffectCommand state, std::optional<std::string> result = {}) {
    EffectInput in;
    in.lease_id = "lease-7";
    in.key = key;
    in.state = state;
    in.result = std::move(result);
    return in;
  };
  auto started = record_effect(m, std::nullopt, input("k", EffectCommand::started), 100, kNow);
  BOOST_REQUIRE(started.has_value());
  BOOST_TEST((started->op == store::EffectOutcome::Op::put));
  BOOST_TEST((started->effect.state == EffectState::started));
  BOOST_TEST(started->effect.attempt == 2);
  BOOST_TEST(started->effect.recorded_at == kNow);

  Effect held{"k", EffectState::started, std::string("charge"), std::nullopt, 1, kNow - 5, {}};
  auto done = record_effect(m, held, input("k", EffectCommand::done, "42"), 100, kNow);
  BOOST_REQUIRE(done.has_value());
  BOOST_TEST((done->effect.state == EffectState::done));
  BOOST_TEST(*done->effect.description == "charge");  // kept from started
  BOOST_TEST(*done->effect.result == "42");

  Effect finished{"k", EffectState::done, std::nullopt, std::string("42"), 1, kNow - 5, {}};
  auto resent = record_effect(m, finished, input("k", EffectCommand::done, "42"), 100, kNow);
  BOOST_REQUIRE(resent.has_value());
  BOOST_TEST((resent->op == store::EffectOutcome::Op::keep));
  BOOST_TEST(resent->effect.recorded_at == kNow - 5);
  for (auto state : {EffectCommand::started, EffectCommand::cleared}) {
    auto refused = record_effect(m, finished, input("k", state), 100, kNow);
    BOOST_REQUIRE(!refused.has_value());
    BOOST_TEST((refused.error().code == Errc::invalid_state));
  }
  auto other = record_effect(m, finished, input("k", EffectCommand::done, "43"), 100, kNow);
  BOOST_TEST(!other.has_value());

  auto cleared = record_effect(m, held, input("k", EffectCommand::cleared), 100, kNow);
  BOOST_REQUIRE(cleared.has_value());
  BOOST_TEST((cleared->op == store::EffectOutcome::Op::remove));
  BOOST_TEST(cleared->cleared);
  auto absent = record_effect(m, std::nullopt, input("k", EffectCommand::cleared), 100, kNow);
  BOOST_REQUIRE(absent.has_value());
  BOOST_TEST((absent->op == store::EffectOutcome::Op::keep));

  m.effect_count = 2;
  auto full = record_effect(m, std::nullopt, input("new", EffectCommand::started), 2, kNow);
  BOOST_REQUIRE(!full.has_value());
  BOOST_TEST((full.error().code == Errc::validation_failed));
  BOOST_TEST(full.error().fields.at(0).code == "limit");
  BOOST_TEST(record_effect(m, held, input("k", EffectCommand::done), 2, kNow).has_value());

  auto stale = input("k", EffectCommand::started);
  stale.lease_id = "someone-else";
  auto lost = record_effect(m, std::nullopt, stale, 100, kNow);
  BOOST_REQUIRE(!lost.has_value());
  BOOST_TEST((lost.error().code == Errc::lease_lost));
}

// A replay resolves started effects: done (by the actor) or forget (deleted, effect_count down);
// a key that is not a started effect is a validation error before the state's checks.
BOOST_AUTO_TEST_CASE(replay_resolves_started_effects) {
  Message m = processing();
  m.status = Status::dead;
  m.lease_id.reset();
  m.effect_count = 2;
  store::Related related;
  related.effects = {{"a", EffectState::started, {}, {}, 1, kNow, {}},
                     {"b", EffectState::done, {}, std::string("1"), 1, kNow, {}}};
  ReplayInput in;
  in.actor = "ann";
  in.resolve_effects = {{"a", false}};
  auto forget = replay(m, related, in, kNow);
  BOOST_REQUIRE(forget.has_value());
  BOOST_REQUIRE_EQUAL(forget->resolutions.size(), 1u);
  BOOST_TEST(!forget->resolutions[0].done);
  BOOST_TEST(*forget->resolutions[0].actor == "ann");
  BOOST_TEST(forget->next.effect_count == 1);
  in.resolve_effects = {{"a", true}};
  auto done = replay(m, related, in, kNow);
  BOOST_REQUIRE(done.has_value());
  BOOST_TEST(done->resolutions[0].done);
  BOOST_TEST(done->next.effect_count == 2);

  in.resolve_effects = {{"b", true}, {"zz", false}};
  m.status = Status::pending;  // the 422 comes before the state's 409
  auto refused = replay(m, related, in, kNow);
  BOOST_REQUIRE(!refused.has_value());
  BOOST_TEST((refused.error().code == Errc::validation_failed));
  BOOST_REQUIRE_EQUAL(refused.error().fields.size(), 2u);
  BOOST_TEST(refused.error().fields[0].field == "resolve_effects.b");
  BOOST_TEST(refused.error().fields[1].field == "resolve_effects.zz");
}

// Trial runs (issue 36): only a dead message with a job type; an open trial is answered again;
// answers need the running trial's lease; the end makes one `trial` entry and nothing else.
BOOST_AUTO_TEST_CASE(trial_rules) {
  Message m = processing();
  m.status = Status::dead;
  m.lease_id.reset();
  m.attempts = 3;
  TrialStartInput in;
  in.reason = "why";
  auto no_type = decide_trial_start(m, std::nullopt, in, std::nullopt, std::string("ann"), kNow);
  BOOST_REQUIRE(!no_type.has_value());
  BOOST_TEST((no_type.error().code == Errc::invalid_state));
  m.job_type = "charge";
  auto t = decide_trial_start(m, std::nullopt, in, std::string("edited"), std::string("ann"), kNow);
  BOOST_REQUIRE(t.has_value());
  BOOST_TEST((t->status == TrialStatus::pending));
  BOOST_TEST(t->job_type == "charge");
  BOOST_TEST(*t->payload == "edited");
  Trial open = *t;
  open.id = 9;
  auto again = decide_trial_start(m, open, in, std::nullopt, std::nullopt, kNow + 1);
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(again->id == 9);

  open.status = TrialStatus::running;
  open.lease_id = "L-t9";
  open.claimed_at = kNow + 5;
  open.worker = "w";
  TrialAnswer a;
  a.kind = TrialAnswer::Kind::succeed;
  a.lease_id = "other";
  auto lost = answer_trial(open, m, a, kNow + 10);
  BOOST_REQUIRE(!lost.has_value());
  BOOST_TEST((lost.error().code == Errc::lease_lost));
  a.lease_id = "L-t9";
  a.would_effects = {{"charge:1", std::string("10 EUR")}};
  auto done = answer_trial(open, m, a, kNow + 10);
  BOOST_REQUIRE(done.has_value());
  BOOST_TEST((done->next.status == TrialStatus::succeeded));
  BOOST_REQUIRE(done->entry.has_value());
  BOOST_TEST((done->entry->outcome == AttemptOutcome::trial));
  BOOST_TEST(done->entry->attempt == 3);
  BOOST_TEST(*done->entry->actor == "ann");
  BOOST_TEST(*done->entry->trial ==
             R"({"trial_id":9,"status":"succeeded","would_effects":[{"key":"charge:1","description":"10 EUR"}]})");
  a.kind = TrialAnswer::Kind::extend;
  a.lease_until = kNow + 99;
  auto extended = answer_trial(open, m, a, kNow + 10);
  BOOST_REQUIRE(extended.has_value());
  BOOST_TEST(!extended->entry.has_value());
  BOOST_TEST(*extended->next.lease_expires_at == kNow + 99);
  auto ended = done->next;
  BOOST_TEST(!answer_trial(ended, m, a, kNow + 11).has_value());  // no longer running
  a.kind = TrialAnswer::Kind::succeed;  // the same end resent: the trial as it is
  auto resent = answer_trial(ended, m, a, kNow + 12);
  BOOST_REQUIRE(resent.has_value());
  BOOST_TEST(!resent->entry.has_value());
  BOOST_TEST(*resent->next.finished_at == kNow + 10);
  a.kind = TrialAnswer::Kind::fail;
  BOOST_TEST(!answer_trial(ended, m, a, kNow + 12).has_value());

  auto expired = expire_trial(open, &m, kNow + 20);
  BOOST_TEST((expired.next.status == TrialStatus::expired));
  BOOST_TEST(expired.next.error->find("lease ran out") != std::string::npos);
  Trial pending = *t;
  auto unclaimed = expire_trial(pending, nullptr, kNow + 20);
  BOOST_TEST(unclaimed.next.error->find("no worker claimed it") != std::string::npos);
  BOOST_TEST(!unclaimed.entry.has_value());  // its message is gone: no entry to write
}

BOOST_AUTO_TEST_SUITE_END()

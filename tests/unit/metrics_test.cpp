// /metrics from a scripted sequence of events, without a server: what each event counts, under
// which labels, and the queues past metrics.max_queue_labels summed under queue="_other".
#include <boost/test/unit_test.hpp>

#include "ops/metrics.hpp"

using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kT = 4102444800000;  // 2100-01-01

Event counted(EventKind kind, std::string_view queue, std::int64_t count) {
  Event e;
  e.kind = kind;
  e.queue = queue;
  e.at = kT;
  e.count = count;
  return e;
}

Event about(EventKind kind, const Message& m) {
  Event e;
  e.kind = kind;
  e.queue = m.queue;
  e.at = kT;
  e.message = &m;
  return e;
}

Message message(const std::string& queue, int replay_count = 0) {
  Message m;
  m.id = 1;
  m.queue = queue;
  m.replay_count = replay_count;
  return m;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics)

BOOST_AUTO_TEST_CASE(a_scripted_sequence_of_events_is_counted_per_queue_and_label) {
  ops::Metrics metrics(2);  // "a" and "b" keep their names; later queues are "_other"

  metrics.record(counted(EventKind::enqueued, "a", 3));
  metrics.record(counted(EventKind::claimed, "a", 2));
  Message transient = message("a");
  transient.error_class = ErrorClass::transient;
  metrics.record(about(EventKind::failed, transient));
  Message unclassified = message("a");
  metrics.record(about(EventKind::failed, unclassified));
  Message dead_again = message("b", 1);
  dead_again.dead_reason = DeadReason::retries_exhausted;
  metrics.record(about(EventKind::dead_lettered, dead_again));
  Message replayed = message("b");
  Event batch = about(EventKind::replayed, replayed);
  batch.mode = ReplayMode::batch;
  metrics.record(batch);
  Message replay_succeeded = message("a", 2);
  metrics.record(about(EventKind::succeeded, replay_succeeded));
  Message plain = message("a");
  metrics.record(about(EventKind::succeeded, plain));
  Message expired = message("c");  // the third queue seen
  metrics.record(about(EventKind::lease_expired, expired));
  metrics.record(counted(EventKind::enqueued, "d", 4));
  metrics.record(counted(EventKind::enqueued, "c", 1));
  Event swept = counted(EventKind::purged, "a", 7);
  swept.status = Status::dead;
  swept.by_retention = true;
  metrics.record(swept);
  Event purged = counted(EventKind::purged, "a", 9);  // an operator's purge: not retention
  purged.status = Status::succeeded;
  metrics.record(purged);
  Message dismissed = message("a");
  metrics.record(about(EventKind::dismissed, dismissed));  // counted nowhere
  metrics.http_request("/queues/{queue}/messages", "POST", 201, std::chrono::milliseconds(2));
  metrics.http_request("/queues/{queue}/messages", "POST", 201, std::chrono::milliseconds(3));
  metrics.alert_sent();
  metrics.alert_sent();
  metrics.alert_failed();

  ops::ScrapeInputs in;
  in.now = kT;
  store::QueueStats a;
  a.queue = "a";
  a.ready = 4;
  a.oldest_ready_since = kT - 2500;
  store::QueueStats e;  // a queue no event named: past the cap too
  e.queue = "e";
  e.dead = 3;
  in.queues = {a, e};
  in.waiters = {{"a", 2}};
  in.leader = true;
  in.tasks = {{"retention", TaskScope::leader_only, 5, 1}};
  in.incidents.open = 3;
  in.incidents.top = {{"00000000000000aa", 7}, {"00000000000000bb", 2}};
  in.incidents.other_dead = 1;
  const std::string text = metrics.exposition(in);

  for (const char* line : {
           R"(dlq_enqueued_total{queue="a"} 3)",
           R"(dlq_enqueued_total{queue="_other"} 5)",
           R"(dlq_claimed_total{queue="a"} 2)",
           R"(dlq_failed_total{queue="a",error_class="transient"} 1)",
           R"(dlq_failed_total{queue="a",error_class="unknown"} 1)",
           R"(dlq_dead_lettered_total{queue="b",reason="retries_exhausted"} 1)",
           R"(dlq_replayed_total{queue="b",mode="batch"} 1)",
           R"(dlq_replay_outcomes_total{queue="a",outcome="succeeded"} 1)",
           R"(dlq_replay_outcomes_total{queue="b",outcome="dead_again"} 1)",
           R"(dlq_succeeded_total{queue="a"} 2)",
           R"(dlq_lease_expiries_total{queue="_other"} 1)",
           R"(dlq_retention_purged_total{queue="a",status="dead"} 7)",
           R"(dlq_messages{queue="a",status="ready"} 4)",
           R"(dlq_messages{queue="_other",status="dead"} 3)",
           R"(dlq_oldest_ready_age_seconds{queue="a"} 2.5)",
           R"(dlq_long_poll_waiters{queue="a"} 2)",
           R"(dlq_http_requests_total{route="/queues/{queue}/messages",method="POST",status="201"} 2)",
           R"(dlq_http_request_duration_seconds_count{route="/queues/{queue}/messages"} 2)",
           R"(dlq_http_request_duration_seconds_sum{route="/queues/{queue}/messages"} 0.005)",
           R"(dlq_alerts_sent_total 2)",
           R"(dlq_alerts_failed_total 1)",
           R"(dlq_leader 1)",
           R"(dlq_incidents_open 3)",
           R"(dlq_incident_dead{fingerprint="00000000000000aa"} 7)",
           R"(dlq_incident_dead{fingerprint="00000000000000bb"} 2)",
           R"(dlq_incident_dead{fingerprint="_other"} 1)",
           R"(dlq_task_runs_total{task="retention"} 5)",
           R"(dlq_task_failures_total{task="retention"} 1)",
       }) {
    BOOST_TEST(has_line(text, line), line);
  }
  // Past the cap no queue has a label of its own; an operator's purge is not retention.
  for (const char* absent : {R"(queue="c")", R"(queue="d")", R"(queue="e")",
                             R"(status="succeeded"} 9)"}) {
    BOOST_TEST(text.find(absent) == std::string::npos, absent);
  }
  BOOST_TEST(!has_line(text, R"(dlq_retention_purged_total{queue="a",status="succeeded"} 9)"));
}

BOOST_AUTO_TEST_CASE(the_first_queues_seen_keep_their_label_for_good) {
  ops::QueueLabels labels(2);
  BOOST_TEST(labels.label("x") == "x");
  BOOST_TEST(labels.label("y") == "y");
  BOOST_TEST(labels.label("z") == "_other");
  BOOST_TEST(labels.label("x") == "x");  // still its own, however many came after
  BOOST_TEST(labels.label("z") == "_other");
}

BOOST_AUTO_TEST_SUITE_END()

// Dead-letter alerts' aggregation without a webhook: a queue's first dead letters are alerted at
// once, later ones wait out alerts.min_interval_seconds and come as one alert, per queue.
#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "ops/alerts.hpp"

namespace json = boost::json;
using namespace dlq;

namespace {

const TimeMs kT = 4102444800000;  // 2100-01-01T00:00:00.000Z
const TimeMs kInterval = 60000;

Message dead(MessageId id, const std::string& queue) {
  Message m;
  m.id = id;
  m.queue = queue;
  m.job_type = "send";
  m.attempts = 3;
  m.error_class = ErrorClass::transient;
  m.dead_reason = DeadReason::retries_exhausted;
  return m;
}

json::object body(const std::string& text) { return json::parse(text).as_object(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(alerts)

BOOST_AUTO_TEST_CASE(a_queues_first_dead_letter_is_alerted_at_once_with_what_it_knows) {
  ops::DeadLetterDigest digest(kInterval, "node-1");
  BOOST_TEST(digest.take_due(kT).empty());  // nothing dead yet
  digest.record("q", dead(7, "q"), kT);
  auto due = digest.take_due(kT);
  BOOST_REQUIRE_EQUAL(due.size(), 1u);
  BOOST_TEST(due[0] ==
             R"({"event":"dead_lettered","queue":"q","count":1,"messages":[{"id":7,"job_type":"send",)"
             R"("attempts":3,"error_class":"transient","dead_reason":"retries_exhausted",)"
             R"("dead_at":"2100-01-01T00:00:00.000Z"}],"threshold":null,"value":null,)"
             R"("first_at":"2100-01-01T00:00:00.000Z","last_at":"2100-01-01T00:00:00.000Z",)"
             R"("node":"node-1"})");
  BOOST_TEST(digest.take_due(kT).empty());  // sent once
}

BOOST_AUTO_TEST_CASE(later_dead_letters_wait_out_the_interval_and_come_as_one_alert) {
  ops::DeadLetterDigest digest(kInterval, "n");
  digest.record("q", dead(1, "q"), kT);
  BOOST_REQUIRE_EQUAL(digest.take_due(kT).size(), 1u);

  digest.record("q", dead(2, "q"), kT + 1000);
  digest.record("q", dead(3, "q"), kT + 5000);
  BOOST_TEST(digest.take_due(kT + 1000).empty());
  BOOST_TEST(digest.take_due(kT + kInterval - 1).empty());
  auto due = digest.take_due(kT + kInterval);
  BOOST_REQUIRE_EQUAL(due.size(), 1u);
  auto b = body(due[0]);
  BOOST_TEST(b.at("count").as_int64() == 2);
  BOOST_TEST(b.at("messages").as_array().size() == 2u);
  BOOST_TEST(b.at("first_at").as_string() == "2100-01-01T00:00:01.000Z");
  BOOST_TEST(b.at("last_at").as_string() == "2100-01-01T00:00:05.000Z");

  // The interval counts from the last alert: a dead letter a minute after the first alert
  // but right after the second waits again.
  digest.record("q", dead(4, "q"), kT + kInterval + 1);
  BOOST_TEST(digest.take_due(kT + 2 * kInterval - 1).empty());
  BOOST_TEST(digest.take_due(kT + 2 * kInterval).size() == 1u);
}

BOOST_AUTO_TEST_CASE(each_queue_has_its_own_interval) {
  ops::DeadLetterDigest digest(kInterval, "n");
  digest.record("a", dead(1, "a"), kT);
  BOOST_REQUIRE_EQUAL(digest.take_due(kT).size(), 1u);
  digest.record("a", dead(2, "a"), kT + 10);
  digest.record("b", dead(3, "b"), kT + 10);
  auto due = digest.take_due(kT + 10);  // "b" was never alerted: at once; "a" waits
  BOOST_REQUIRE_EQUAL(due.size(), 1u);
  BOOST_TEST(body(due[0]).at("queue").as_string() == "b");
}

BOOST_AUTO_TEST_CASE(an_alert_counts_every_dead_letter_but_lists_the_first_ten) {
  ops::DeadLetterDigest digest(0, "n");  // min_interval_seconds 0: every flush sends
  for (MessageId id = 1; id <= 12; ++id) digest.record("q", dead(id, "q"), kT + id);
  auto due = digest.take_due(kT + 100);
  BOOST_REQUIRE_EQUAL(due.size(), 1u);
  auto b = body(due[0]);
  BOOST_TEST(b.at("count").as_int64() == 12);
  const auto& listed = b.at("messages").as_array();
  BOOST_REQUIRE_EQUAL(listed.size(), 10u);
  BOOST_TEST(listed.front().at("id").as_int64() == 1);
  BOOST_TEST(listed.back().at("id").as_int64() == 10);
  digest.record("q", dead(13, "q"), kT + 101);
  BOOST_TEST(digest.take_due(kT + 101).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

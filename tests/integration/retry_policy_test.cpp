// B2: failures with context, classification-driven policy, per-queue overrides, enqueue extras
// (priority, delays, job types) and the dead-letter record.
#include <boost/test/unit_test.hpp>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::int64_t claimed_and_failed(HttpClient& c, const std::string& q, const json::object& failure,
                                json::value& result, double at = 0) {
  auto m = claim_one(c, q, now_header(at_s(at)));
  auto id = m.at("id").as_int64();
  auto res = c.post(message_path(q, id, "fail"), failure, now_header(at_s(at)));
  BOOST_REQUIRE_MESSAGE(res.status == 200, res.body);
  result = res.json();
  return id;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(retry_policy)

BOOST_AUTO_TEST_CASE(message_objects_carry_the_part_b_keys_in_order) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto m = enqueue(c, q, "x", {{"job_type", "email"}, {"priority", 3}, {"idempotency_key", "k-1"}});
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.emplace_back(k);
  std::vector<std::string> b(keys.begin() + 10, keys.end());
  BOOST_TEST(b == (std::vector<std::string>{"priority", "job_type", "idempotency_key", "error_class",
                                            "dead_reason", "checkpoint", "lease_expiries", "attempts",
                                            "first_attempt_at", "last_attempt_at", "dead_at",
                                            "replay_count", "lease_expires_at", "fingerprint",
                                            "title"}),
             boost::test_tools::per_element());
  BOOST_TEST(m.at("priority").as_int64() == 3);
  BOOST_TEST(str(m, "job_type") == "email");
  BOOST_TEST(str(m, "idempotency_key") == "k-1");
}

BOOST_AUTO_TEST_CASE(non_retryable_classes_go_dead_at_once) {
  HttpClient c(shared_dlqd().port());
  for (const char* cls : {"invalid_input", "not_found", "auth", "uncertain_effect"}) {
    std::string q = fresh_queue();
    enqueue(c, q, "x", {{"max_retries", 5}});
    json::value r;
    claimed_and_failed(c, q, {{"error", "bad customer id"}, {"error_class", cls}}, r);
    BOOST_TEST(str(r, "status") == "dead", cls);
    BOOST_TEST(str(r, "dead_reason") == "non_retryable", cls);
    BOOST_TEST(str(r, "error_class") == cls);
    BOOST_TEST(str(r, "dead_at") == at_s(0));
    BOOST_TEST(r.at("retry_count").as_int64() == 1);
    // The dead-letter list filters by each class, the one a library sends for an uncertain
    // side effect (issue 36) too.
    auto listed = c.get("/dlq?queue=" + q + "&error_class=" + cls);
    BOOST_REQUIRE_EQUAL(listed.status, 200);
    auto page = listed.json();
    BOOST_TEST(page.at("count").as_int64() == 1, cls);
  }
  // A class outside the closed list is refused, and the refusal lists uncertain_effect.
  std::string q = fresh_queue();
  enqueue(c, q, "x");
  auto m = claim_one(c, q);
  auto refused = c.post(message_path(q, m.at("id").as_int64(), "fail"),
                        json::object{{"error", "x"}, {"error_class", "uncertain"}});
  BOOST_TEST(refused.status == 422);
  BOOST_TEST(refused.body.find("auth, unknown, uncertain_effect") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(retryable_classes_back_off_and_retryable_wins) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x", {{"max_retries", 5}});
  json::value r;
  claimed_and_failed(c, q, {{"error_class", "timeout"}}, r);
  BOOST_TEST(str(r, "status") == "pending");
  BOOST_TEST(str(r, "error_class") == "timeout");
  claimed_and_failed(c, q, {{"error_class", "auth"}, {"retryable", true}}, r, 10);
  BOOST_TEST(str(r, "status") == "pending");
  claimed_and_failed(c, q, {{"error_class", "transient"}, {"retryable", false}}, r, 100);
  BOOST_TEST(str(r, "dead_reason") == "non_retryable");
}

BOOST_AUTO_TEST_CASE(retry_in_replaces_the_backoff) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x", {{"max_retries", 5}});
  json::value r;
  claimed_and_failed(c, q, {{"error_class", "throttled"}, {"retry_in", 60}}, r);
  BOOST_TEST(str(r, "retry_after") == at_s(60));
}

BOOST_AUTO_TEST_CASE(exhausted_retries_are_dead_with_retries_exhausted) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x", {{"max_retries", 1}});
  json::value r;
  claimed_and_failed(c, q, {{"error", "nope"}}, r);
  BOOST_TEST(str(r, "dead_reason") == "retries_exhausted");
}

BOOST_AUTO_TEST_CASE(failure_context_is_kept_in_the_history) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x", {{"max_retries", 5}});
  json::value r;
  auto id = claimed_and_failed(c, q,
                               {{"error", "provider timeout"},
                                {"error_class", "timeout"},
                                {"stack", "at send_email (mailer.py:42)"},
                                {"cause", "missing API key"},
                                {"checkpoint", "template_rendered"}},
                               r);
  BOOST_TEST(str(r, "checkpoint") == "template_rendered");
  auto history = c.get(message_path(q, id, "attempts")).json();
  auto a = history.at("attempts").at(0);
  BOOST_TEST(str(a, "outcome") == "failed");
  BOOST_TEST(str(a, "error") == "provider timeout");
  BOOST_TEST(str(a, "error_class") == "timeout");
  BOOST_TEST(str(a, "stack") == "at send_email (mailer.py:42)");
  BOOST_TEST(str(a, "cause") == "missing API key");
  BOOST_TEST(a.at("attempt").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(bad_failure_fields_are_422_naming_the_field) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  claim_one(c, q);
  auto res = c.post(message_path(q, id, "fail"),
                    json::object{{"error_class", "cosmic_ray"}, {"retryable", 1}, {"retry_in", "5"},
                                 {"stack", std::string(16 * 1024 + 1, 's')}});
  BOOST_TEST(res.status == 422);
  std::vector<std::string> fields;
  auto body = res.json();
  for (const auto& e : body.at("errors").as_array()) fields.push_back(str(e, "field"));
  BOOST_TEST(fields == (std::vector<std::string>{"error_class", "retryable", "retry_in", "stack"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(c.get(message_path(q, id)).json(), "status") == "processing");
}

BOOST_AUTO_TEST_CASE(priority_nine_is_claimed_before_an_older_priority_zero) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto old_low = enqueue(c, q, "old", {}, now_header(at_s(0)));
  auto new_high = enqueue(c, q, "urgent", {{"priority", 9}}, now_header(at_s(5)));
  auto mid = enqueue(c, q, "mid", {{"priority", 5}}, now_header(at_s(6)));
  BOOST_TEST(claim_one(c, q, now_header(at_s(10))).at("id") == new_high.at("id"));
  BOOST_TEST(claim_one(c, q, now_header(at_s(10))).at("id") == mid.at("id"));
  BOOST_TEST(claim_one(c, q, now_header(at_s(10))).at("id") == old_low.at("id"));
  BOOST_TEST(c.post("/queues/" + q + "/messages", json::object{{"payload", "x"}, {"priority", 10}}).status == 422);
}

BOOST_AUTO_TEST_CASE(a_delayed_message_is_invisible_until_due) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto delayed = enqueue(c, q, "later", {{"delay_seconds", 30}}, now_header(at_s(0)));
  BOOST_TEST(str(delayed, "retry_after") == at_s(30));
  auto scheduled = enqueue(c, q, "at", {{"run_at", at_s(60)}}, now_header(at_s(0)));
  BOOST_TEST(str(scheduled, "retry_after") == at_s(60));
  BOOST_TEST(claim(c, q, {}, now_header(at_s(29))).json().at("claimed").as_bool() == false);
  BOOST_TEST(claim_one(c, q, now_header(at_s(30))).at("id") == delayed.at("id"));
  BOOST_TEST(claim(c, q, {}, now_header(at_s(59))).json().at("claimed").as_bool() == false);
  BOOST_TEST(claim_one(c, q, now_header(at_s(60))).at("id") == scheduled.at("id"));
  auto past = enqueue(c, q, "past", {{"run_at", "2000-01-01T00:00:00Z"}}, now_header(at_s(0)));
  BOOST_TEST(past.at("retry_after").is_null());
  auto both = c.post("/queues/" + q + "/messages",
                     json::object{{"payload", "x"}, {"delay_seconds", 1}, {"run_at", at_s(1)}});
  BOOST_TEST(both.status == 422);
  BOOST_TEST(str(both.json().at("errors").at(0), "field") == "run_at");
}

BOOST_AUTO_TEST_CASE(per_queue_policies_come_from_config) {
  DlqdProcess server(DlqdOptions(R"({
    "testing": {"allow_clock_override": true},
    "defaults": {"max_retries": 4},
    "queues": {
      "fast": {"backoff": {"initial_seconds": 0.5, "multiplier": 3, "max_seconds": 10}},
      "strict": {"non_retryable": ["timeout"], "max_retries": 6},
      "windowed": {"retry_window_seconds": 5}
    }})"));
  HttpClient c(server.port());
  BOOST_TEST(enqueue(c, "other", "x").at("max_retries").as_int64() == 4);
  BOOST_TEST(enqueue(c, "strict", "x").at("max_retries").as_int64() == 6);

  enqueue(c, "fast", "x", {{"max_retries", 10}}, now_header(at_s(0)));
  json::value r;
  claimed_and_failed(c, "fast", {}, r, 0);
  BOOST_TEST(str(r, "retry_after") == at_s(0.5));
  claimed_and_failed(c, "fast", {}, r, 1);
  BOOST_TEST(str(r, "retry_after") == at_s(2.5));
  claimed_and_failed(c, "fast", {}, r, 3);
  BOOST_TEST(str(r, "retry_after") == at_s(7.5));
  claimed_and_failed(c, "fast", {}, r, 8);
  BOOST_TEST(str(r, "retry_after") == at_s(18));  // capped at 10 s

  enqueue(c, "strict", "y");
  claimed_and_failed(c, "strict", {{"error_class", "timeout"}}, r, 0);
  BOOST_TEST(str(r, "dead_reason") == "non_retryable");
  enqueue(c, "strict", "z");
  claimed_and_failed(c, "strict", {{"error_class", "auth"}}, r, 0);
  BOOST_TEST(str(r, "status") == "pending");  // the queue's list replaced the default one

  enqueue(c, "windowed", "w", {{"max_retries", 10}}, now_header(at_s(0)));
  claimed_and_failed(c, "windowed", {}, r, 0);  // due at 2 s: inside the 5 s window
  BOOST_TEST(str(r, "status") == "pending");
  claimed_and_failed(c, "windowed", {}, r, 2);  // due at 6 s: outside
  BOOST_TEST(str(r, "dead_reason") == "retry_window_exceeded");
}

BOOST_AUTO_TEST_SUITE_END()

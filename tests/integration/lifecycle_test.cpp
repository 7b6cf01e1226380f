// Part A: claim, succeed, fail (backoff, dead), replay — the worker loop of the seed document.
#include <boost/test/unit_test.hpp>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_AUTO_TEST_CASE(claim_takes_the_oldest_due_message_and_answers_false_when_none) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto empty = claim(c, q);
  BOOST_TEST(empty.status == 200);
  BOOST_TEST(empty.body == R"({"claimed":false,"message":null})");

  auto later = enqueue(c, q, "later", {}, now_header(at_s(5)));
  auto first = enqueue(c, q, "first", {}, now_header(at_s(1)));
  auto m = claim_one(c, q, now_header(at_s(10)));
  BOOST_TEST(m.at("id") == first.at("id"));
  BOOST_TEST(str(m, "status") == "processing");
  BOOST_TEST(str(m, "updated_at") == at_s(10));
  auto m2 = claim_one(c, q, now_header(at_s(10)));
  BOOST_TEST(m2.at("id") == later.at("id"));
  BOOST_TEST(claim(c, q).json().at("claimed").as_bool() == false);
}

BOOST_AUTO_TEST_CASE(succeed_only_from_processing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto m = enqueue(c, q, "job");
  auto id = m.at("id").as_int64();
  auto early = c.post(message_path(q, id, "succeed"));
  BOOST_TEST(early.status == 409);
  BOOST_TEST(str(early.json(), "error") == "only processing messages can succeed");
  BOOST_TEST(str(early.json(), "type") == "https://dlq.dev/problems/invalid-state");

  claim_one(c, q);
  auto ok = c.post(message_path(q, id, "succeed"), json::object{}, now_header(at_s(7)));
  BOOST_TEST(ok.status == 200);
  BOOST_TEST(str(ok.json(), "status") == "succeeded");
  BOOST_TEST(str(ok.json(), "updated_at") == at_s(7));

  auto again = c.post(message_path(q, id, "succeed"));
  BOOST_TEST(again.status == 409);
  auto missing = c.post(message_path(q, 999999999, "succeed"));
  BOOST_TEST(missing.status == 404);
  BOOST_TEST(str(missing.json(), "error") == "message not found");
}

BOOST_AUTO_TEST_CASE(fail_schedules_the_retry_with_exponential_backoff) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "job", {{"max_retries", 5}}, now_header(at_s(0))).at("id").as_int64();
  double t = 0;
  for (int n = 1; n <= 4; ++n) {
    auto m = claim_one(c, q, now_header(at_s(t)));
    BOOST_TEST(m.at("id").as_int64() == id);
    auto res = c.post(message_path(q, id, "fail"), json::object{{"error", "boom " + std::to_string(n)}},
                      now_header(at_s(t)));
    BOOST_TEST(res.status == 200);
    auto failed = res.json();
    BOOST_TEST(str(failed, "status") == "pending");
    BOOST_TEST(failed.at("retry_count").as_int64() == n);
    BOOST_TEST(str(failed, "last_error") == "boom " + std::to_string(n));
    double backoff = 1 << n;  // 2, 4, 8, 16 s
    BOOST_TEST(str(failed, "retry_after") == at_s(t + backoff));
    // Not claimable a moment before retry_after, claimable at it.
    BOOST_TEST(claim(c, q, {}, now_header(at_s(t + backoff - 0.001))).json().at("claimed").as_bool() == false);
    t += backoff;
  }
  claim_one(c, q, now_header(at_s(t)));
  auto dead = c.post(message_path(q, id, "fail"), json::object{{"error", "final"}}, now_header(at_s(t)));
  BOOST_TEST(str(dead.json(), "status") == "dead");
  BOOST_TEST(dead.json().at("retry_count").as_int64() == 5);
  BOOST_TEST(dead.json().at("retry_after").is_null());
}

BOOST_AUTO_TEST_CASE(backoff_schedule_with_x_now_t_plus_1_nothing_t_plus_3_claimed) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "job", {}, now_header(at_s(0))).at("id").as_int64();
  claim_one(c, q, now_header(at_s(0)));
  auto failed = c.post(message_path(q, id, "fail"), json::object{{"error", "x"}}, now_header(at_s(0)));
  BOOST_TEST(str(failed.json(), "retry_after") == at_s(2));
  BOOST_TEST(claim(c, q, {}, now_header(at_s(1))).json().at("claimed").as_bool() == false);
  auto m = claim_one(c, q, now_header(at_s(3)));
  BOOST_TEST(m.at("id").as_int64() == id);
  BOOST_TEST(m.at("retry_count").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(backoff_is_capped_at_an_hour) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "job", {{"max_retries", 10}}, now_header(at_s(0))).at("id").as_int64();
  double t = 0;
  std::string last;
  for (int n = 1; n <= 9; ++n) {
    claim_one(c, q, now_header(at_s(t)));
    auto failed = c.post(message_path(q, id, "fail"), json::object{}, now_header(at_s(t))).json();
    double expected = std::min(double(1 << n), 3600.0);
    BOOST_TEST(str(failed, "retry_after") == at_s(t + expected));
    t += expected;
  }
}

BOOST_AUTO_TEST_CASE(fail_error_text_rules) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "job", {{"max_retries", 10}}).at("id").as_int64();
  auto fail_with = [&](const json::object& body) {
    claim_one(c, q, now_header(at_s(100000)));
    auto res = c.post(message_path(q, id, "fail"), body);
    BOOST_REQUIRE_EQUAL(res.status, 200);
    return res.json().at("last_error");
  };
  BOOST_TEST(fail_with({}).as_string() == "unspecified error");
  BOOST_TEST(fail_with({{"error", 42}}).as_string() == "unspecified error");
  BOOST_TEST(fail_with({{"error", nullptr}}).as_string() == "unspecified error");
  BOOST_TEST(fail_with({{"error", ""}}).as_string() == "");
  // 999 ASCII bytes then a 2-byte character straddling the 1000-byte cut: the character goes.
  std::string long_text = std::string(999, 'a') + "\u00e9" + "tail";
  BOOST_TEST(fail_with({{"error", long_text}}).as_string() == std::string(999, 'a'));
  std::string exact = std::string(1000, 'b') + "more";
  BOOST_TEST(fail_with({{"error", exact}}).as_string() == std::string(1000, 'b'));
}

BOOST_AUTO_TEST_CASE(fail_only_from_processing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "job").at("id").as_int64();
  auto res = c.post(message_path(q, id, "fail"), json::object{{"error", "x"}});
  BOOST_TEST(res.status == 409);
  BOOST_TEST(str(res.json(), "error") == "only processing messages can fail");
  BOOST_TEST(c.post(message_path(q, 987654321, "fail")).status == 404);
}

BOOST_AUTO_TEST_CASE(seed_worker_loop_fail_twice_dead_replay_claim_succeed) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("emails");
  auto m = enqueue(c, q, "{\"to\":\"alice@example.com\"}", {{"max_retries", 2}}, now_header(at_s(0)));
  auto id = m.at("id").as_int64();

  claim_one(c, q, now_header(at_s(0)));
  auto first = c.post(message_path(q, id, "fail"), json::object{{"error", "smtp timeout"}},
                      now_header(at_s(0))).json();
  BOOST_TEST(str(first, "status") == "pending");
  BOOST_TEST(first.at("retry_count").as_int64() == 1);

  claim_one(c, q, now_header(at_s(2)));
  auto second = c.post(message_path(q, id, "fail"), json::object{{"error", "smtp timeout"}},
                       now_header(at_s(2))).json();
  BOOST_TEST(str(second, "status") == "dead");
  BOOST_TEST(second.at("retry_count").as_int64() == 2);
  BOOST_TEST(str(second, "last_error") == "smtp timeout");

  BOOST_TEST(claim(c, q, {}, now_header(at_s(100))).json().at("claimed").as_bool() == false);

  auto replayed = c.post(message_path(q, id, "replay"), json::object{}, now_header(at_s(50)));
  BOOST_TEST(replayed.status == 200);
  auto r = replayed.json();
  BOOST_TEST(str(r, "status") == "pending");
  BOOST_TEST(r.at("retry_count").as_int64() == 0);
  BOOST_TEST(r.at("last_error").is_null());
  BOOST_TEST(r.at("retry_after").is_null());
  BOOST_TEST(r.at("max_retries").as_int64() == 2);
  BOOST_TEST(r.at("id").as_int64() == id);
  BOOST_TEST(str(r, "updated_at") == at_s(50));

  auto again = claim_one(c, q, now_header(at_s(51)));
  BOOST_TEST(again.at("id").as_int64() == id);
  auto done = c.post(message_path(q, id, "succeed"), json::object{}, now_header(at_s(52)));
  BOOST_TEST(done.status == 200);
  BOOST_TEST(str(done.json(), "status") == "succeeded");
}

BOOST_AUTO_TEST_CASE(replay_only_from_dead) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "job").at("id").as_int64();
  auto res = c.post(message_path(q, id, "replay"));
  BOOST_TEST(res.status == 409);
  BOOST_TEST(str(res.json(), "error") == "only dead messages can be replayed");
  BOOST_TEST(c.post(message_path(q, 876543210, "replay")).status == 404);
}

BOOST_AUTO_TEST_SUITE_END()

// Issue 32 section 1: every failure and lease expiry carries a title and a fingerprint, on the
// message and on its history entry; a worker may name its own cause; replay clears both.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "integration/server_fixture.hpp"
#include "model/fingerprint.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace fingerprint_fail_test {

// Claims the next message of `q` and fails it with `failure`; returns the 200 answer's message.
json::object claim_and_fail(HttpClient& c, const std::string& q, const json::object& failure,
                            double at = 0) {
  auto m = claim_one(c, q, now_header(at_s(at)));
  auto res = c.post(message_path(q, m.at("id").as_int64(), "fail"), failure, now_header(at_s(at)));
  BOOST_REQUIRE_MESSAGE(res.status == 200, res.body);
  return res.json().as_object();
}

json::array history(HttpClient& c, const std::string& q, std::int64_t id) {
  return c.get(message_path(q, id, "attempts")).json().at("attempts").as_array();
}

json::object wait_for_expiries(HttpClient& c, const std::string& path, std::int64_t expiries) {
  for (int i = 0; i < 200; ++i) {
    auto m = c.get(path).json().as_object();
    if (m.at("lease_expiries").as_int64() == expiries) return m;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  BOOST_FAIL("the lease never expired");
  return {};
}

}  // namespace fingerprint_fail_test

using namespace fingerprint_fail_test;

BOOST_AUTO_TEST_SUITE(fingerprint_fail)

BOOST_AUTO_TEST_CASE(a_bad_worker_fingerprint_is_422_and_changes_nothing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x", {{"job_type", "mail"}, {"max_retries", 5}}).at("id").as_int64();
  claim_one(c, q, now_header(at_s(0)));
  struct Bad {
    json::value value;
    const char* code;
  };
  for (const auto& bad : {Bad{json::value(std::string(129, 'a')), "too_long"}, Bad{5, "invalid"},
                          Bad{"a b", "invalid"}, Bad{"", "invalid"}, Bad{nullptr, "invalid"}}) {
    auto res = c.post(message_path(q, id, "fail"),
                      json::object{{"error", "boom"}, {"fingerprint", bad.value}},
                      now_header(at_s(1)));
    BOOST_TEST_CONTEXT(json::serialize(bad.value).substr(0, 20)) {
      BOOST_TEST(res.status == 422);
      BOOST_TEST(error_fields(res) == std::vector<std::string>{"fingerprint"},
                 boost::test_tools::per_element());
      BOOST_TEST(str(res.json().at("errors").at(0), "code") == bad.code);
    }
  }
  // Listed after checkpoint, like the field order.
  auto both = c.post(message_path(q, id, "fail"),
                     json::object{{"fingerprint", "a b"}, {"checkpoint", 7}}, now_header(at_s(1)));
  BOOST_TEST(error_fields(both) == (std::vector<std::string>{"checkpoint", "fingerprint"}),
             boost::test_tools::per_element());
  auto m = c.get(message_path(q, id)).json();
  BOOST_TEST(str(m, "status") == "processing");
  BOOST_TEST(m.at("fingerprint").is_null());
  BOOST_TEST(history(c, q, id).size() == 1u);  // the attempt under way, nothing finished

  std::string longest(128, 'z');
  longest.replace(0, 6, "A.b:-_");
  auto ok = c.post(message_path(q, id, "fail"),
                   json::object{{"error", "boom"}, {"fingerprint", longest}}, now_header(at_s(1)));
  BOOST_REQUIRE_MESSAGE(ok.status == 200, ok.body);
  BOOST_TEST(str(ok.json(), "fingerprint") == dlq::worker_fingerprint(std::string("mail"), longest));
  BOOST_TEST(str(ok.json(), "title") == "boom");
}

BOOST_AUTO_TEST_CASE(the_masked_title_is_on_the_message_and_its_attempt) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x", {{"job_type", "mail"}, {"max_retries", 5}}).at("id").as_int64();
  enqueue(c, q, "y", {{"job_type", "mail"}, {"max_retries", 5}});
  const std::string stack = "Traceback (most recent call last):\n"
                            "  File \"/app/mail.py\", line 42, in send\n";
  auto first = claim_and_fail(c, q,
                              {{"error", "login as bob@example.com password=hunter2 failed after 3 "
                                         "tries on 10.0.0.7"},
                               {"error_class", "auth"},
                               {"retryable", true},
                               {"stack", stack}});
  const std::string title = "login as <email> password=*** failed after <n> tries on <ip>";
  BOOST_TEST(str(first, "title") == title);
  const std::string fp = str(first, "fingerprint");
  BOOST_TEST(fp == dlq::computed_fingerprint(std::string("mail"), dlq::ErrorClass::auth, title,
                                             "File \"/app/mail.py\", line <n>, in send"));
  // The message as read, and its history entry, carry the same pair.
  auto shown = c.get(message_path(q, id)).json();
  BOOST_TEST(str(shown, "title") == title);
  BOOST_TEST(str(shown, "fingerprint") == fp);
  auto entry = history(c, q, id).at(0).as_object();
  BOOST_TEST(str(entry, "title") == title);
  BOOST_TEST(str(entry, "fingerprint") == fp);
  std::vector<std::string> keys;
  for (const auto& [k, v] : entry) keys.emplace_back(k);
  BOOST_TEST((std::vector<std::string>(keys.end() - 7, keys.end()) ==
              std::vector<std::string>{"count", "fingerprint", "title", "life", "replay_id",
                                       "worker_version", "trial"}),
             boost::test_tools::per_element());
  // The same cause with other values is the same fingerprint.
  auto second = claim_and_fail(c, q,
                               {{"error", "login as eve@example.org password=letmein failed after "
                                          "12 tries on 10.0.0.9"},
                                {"error_class", "auth"},
                                {"retryable", true},
                                {"stack", "Traceback (most recent call last):\n"
                                          "  File \"/app/mail.py\", line 57, in send\n"}},
                               1);
  BOOST_TEST(second.at("id").as_int64() != id);
  BOOST_TEST(str(second, "fingerprint") == fp);
}

BOOST_AUTO_TEST_CASE(one_worker_value_in_two_job_types_is_two_fingerprints) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x", {{"job_type", "mail"}});
  enqueue(c, q, "y", {{"job_type", "sms"}});
  json::object failure{{"error", "relay down"}, {"fingerprint", "relay-down"}};
  auto mail = claim_and_fail(c, q, failure);
  auto sms = claim_and_fail(c, q, failure, 1);
  BOOST_TEST(str(mail, "job_type") == "mail");
  BOOST_TEST(str(mail, "fingerprint") != str(sms, "fingerprint"));
  BOOST_TEST(str(mail, "fingerprint") == dlq::worker_fingerprint(std::string("mail"), "relay-down"));
  BOOST_TEST(str(sms, "fingerprint") == dlq::worker_fingerprint(std::string("sms"), "relay-down"));
  // The computed fingerprint of the same failure is another one again.
  BOOST_TEST(str(mail, "fingerprint") != dlq::computed_fingerprint(std::string("mail"),
                                                                   dlq::ErrorClass::unknown,
                                                                   "relay down", ""));
  BOOST_TEST(str(mail, "title") == "relay down");
}

BOOST_AUTO_TEST_CASE(a_lease_expiry_is_titled_lease_expired_and_keeps_the_class) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x", {{"job_type", "mail"}, {"max_retries", 5}}).at("id").as_int64();
  // On the real clock: the reaper runs on it.
  auto lease = str(claim_one(c, q), "lease_id");
  auto failed = c.post(message_path(q, id, "fail"),
                       json::object{{"lease_id", lease}, {"error", "slow relay"},
                                    {"error_class", "timeout"}, {"retry_in", 0}});
  BOOST_TEST(str(failed.json(), "title") == "slow relay");
  // A one-second lease, reaped within a second of its end.
  BOOST_REQUIRE(claim(c, q, {{"visibility_timeout", 1}}).json().at("claimed").as_bool());
  auto m = wait_for_expiries(c, message_path(q, id), 1);
  BOOST_TEST(str(m, "title") == "lease expired");
  BOOST_TEST(str(m, "fingerprint") == dlq::lease_expiry_fingerprint(std::string("mail")));
  BOOST_TEST(str(m, "error_class") == "timeout");  // the earlier failure's (B1)
  auto entries = history(c, q, id);
  auto expiry = entries.at(1).as_object();
  BOOST_TEST(str(expiry, "outcome") == "lease_expired");
  BOOST_TEST(str(expiry, "title") == "lease expired");
  BOOST_TEST(str(expiry, "fingerprint") == str(m, "fingerprint"));
  BOOST_TEST(str(entries.at(0), "title") == "slow relay");
}

BOOST_AUTO_TEST_CASE(replay_clears_the_title_and_fingerprint_and_the_history_keeps_them) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x", {{"max_retries", 1}}).at("id").as_int64();
  auto dead = claim_and_fail(c, q, {{"error", "no such user 42"}, {"error_class", "not_found"}});
  BOOST_TEST(str(dead, "status") == "dead");
  BOOST_TEST(str(dead, "title") == "no such user <n>");
  auto res = c.post(message_path(q, id, "replay"), json::object{}, now_header(at_s(5)));
  BOOST_REQUIRE_MESSAGE(res.status == 200, res.body);
  auto replayed = c.get(message_path(q, id)).json();
  BOOST_TEST(str(replayed, "status") == "pending");
  BOOST_TEST(replayed.at("fingerprint").is_null());
  BOOST_TEST(replayed.at("title").is_null());
  BOOST_TEST(replayed.at("error_class").is_null());
  auto entries = history(c, q, id);
  BOOST_TEST(str(entries.at(0), "fingerprint") == str(dead, "fingerprint"));
  BOOST_TEST(str(entries.at(1), "outcome") == "replayed");
  BOOST_TEST(entries.at(1).at("fingerprint").is_null());
  BOOST_TEST(entries.at(1).at("title").is_null());
}

BOOST_AUTO_TEST_SUITE_END()

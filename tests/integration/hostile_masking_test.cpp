// Issue 16, masking: payloads that defeat the JSON parser are withheld from people instead of
// shown unmasked (defect 4), the text masking survives the largest texts each field allows
// (defect 5), and `error` is cut after NULs are replaced (defect 7).
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

const std::string kWithheld = "***withheld***";

std::string shown_payload(HttpClient& c, const std::string& q, std::int64_t id) {
  auto res = c.get(message_path(q, id));
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return str(res.json(), "payload");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile)

BOOST_AUTO_TEST_CASE(payloads_that_defeat_the_parser_are_withheld_not_shown) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("mask");
  // Deeper than Boost.JSON's default 32 levels: masked, not shown as stored.
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += R"({"a":)";
  deep += R"({"password":"hunter2"})" + std::string(100, '}');
  auto deep_id = enqueue(c, q, deep).at("id").as_int64();
  std::string shown = shown_payload(c, q, deep_id);
  BOOST_TEST(shown.find("hunter2") == std::string::npos);
  BOOST_TEST(shown.find(R"({"password":"***"})") != std::string::npos);
  // A lone surrogate escape, and nesting deeper than the redactor reads: withheld.
  std::string lone = R"({"password":"hunter2","note":"\ud800"})";
  auto lone_m = enqueue(c, q, lone);
  BOOST_TEST(str(lone_m, "payload") == lone);  // the producer gets what it stored
  auto lone_id = lone_m.at("id").as_int64();
  BOOST_TEST(shown_payload(c, q, lone_id) == kWithheld);
  std::string deepest = std::string(5000, '[') + R"({"token":"t0ken"})" + std::string(5000, ']');
  auto deepest_id = enqueue(c, q, deepest).at("id").as_int64();
  BOOST_TEST(shown_payload(c, q, deepest_id) == kWithheld);
  auto list = c.get("/queues/" + q + "/messages").json();
  BOOST_TEST(str(list.at("messages").at(1), "payload") == kWithheld);
  BOOST_TEST(str(list.at("messages").at(2), "payload") == kWithheld);
  // The worker still gets the payload as stored.
  auto claimed = claim_one(c, q);
  BOOST_TEST(str(claimed, "payload") == deep);
  // Payloads that are not JSON stay byte-exact.
  std::string text = "password=hunter2 [\\ud800";
  auto text_id = enqueue(c, q, text).at("id").as_int64();
  BOOST_TEST(shown_payload(c, q, text_id) == text);
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_CASE(the_largest_texts_each_field_allows_are_masked_without_crashing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("mask");
  struct Failure {
    std::string error, stack, cause;
  };
  // At each field's limit (error 1000 bytes, stack 16 KiB, cause 4 KiB); the second one's NULs
  // become three-byte U+FFFD, so its stack is stored as 48 KiB.
  std::vector<Failure> failures = {
      {"password=" + std::string(991, 'e'), "password=" + std::string(16 * 1024 - 9, 's'),
       "token: " + std::string(4096 - 7, 'c')},
      {"secret=" + std::string(993, '\0'), "api_key=" + std::string(16 * 1024 - 8, '\0'),
       "Bearer " + std::string(4096 - 7, 'b')},
  };
  for (const auto& f : failures) {
    enqueue(c, q, "x", {{"max_retries", 5}});
    auto m = claim_one(c, q, now_header(at_s(0)));
    auto id = m.at("id").as_int64();
    auto res = c.post(message_path(q, id, "fail"),
                      json::object{{"error", f.error}, {"stack", f.stack}, {"cause", f.cause}},
                      now_header(at_s(0)));
    BOOST_REQUIRE_MESSAGE(res.status == 200, res.body.substr(0, 300));
    auto history = c.get(message_path(q, id, "attempts"));
    BOOST_REQUIRE_EQUAL(history.status, 200);
    auto attempt = history.json().at("attempts").at(0);
    std::string key = f.error.substr(0, f.error.find('='));
    BOOST_TEST(str(attempt, "error") == key + "=***");
    BOOST_TEST(str(attempt, "stack") == f.stack.substr(0, f.stack.find('=') + 1) + "***");
    BOOST_TEST(str(attempt, "cause") == f.cause.substr(0, 7) + "***");
    BOOST_TEST(str(c.get(message_path(q, id)).json(), "last_error") == key + "=***");
  }
  BOOST_TEST(healthy(shared_dlqd().port()));
}

BOOST_AUTO_TEST_CASE(fail_error_is_cut_to_1000_bytes_after_nuls_are_replaced) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("mask");
  enqueue(c, q, "x", {{"max_retries", 5}});
  auto id = claim_one(c, q).at("id").as_int64();
  auto res = c.post(message_path(q, id, "fail"), json::object{{"error", std::string(1000, '\0')}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  std::string stored = str(res.json(), "last_error");
  std::string replacement = "\xEF\xBF\xBD";
  BOOST_TEST(stored.size() == 999u);  // 333 whole U+FFFD, not 1000 of them (3000 bytes)
  BOOST_TEST(stored.substr(0, 3) == replacement);
  BOOST_TEST(stored.substr(996) == replacement);
}

BOOST_AUTO_TEST_SUITE_END()

#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "core/desk_requests.hpp"
#include "core/requests.hpp"

namespace json = boost::json;
using namespace dlq;
using namespace dlq::core;

namespace {

std::vector<std::string> fields(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.field);
  return out;
}

json::object obj(const char* text) { return json::parse(text).as_object(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(requests)

BOOST_AUTO_TEST_CASE(queue_names_and_ids) {
  BOOST_TEST(valid_queue_name("emails"));
  BOOST_TEST(valid_queue_name("A-z_0-9"));
  BOOST_TEST(valid_queue_name(std::string(64, 'x')));
  BOOST_TEST(!valid_queue_name(std::string(65, 'x')));
  BOOST_TEST(!valid_queue_name(""));
  BOOST_TEST(!valid_queue_name("a.b"));
  BOOST_TEST(!valid_queue_name("a/b"));
  BOOST_TEST(*parse_message_id("42") == 42);
  BOOST_TEST(*parse_message_id("000042") == 42);
  BOOST_TEST(*parse_message_id("999999999999999999") == 999999999999999999LL);
  BOOST_TEST(!parse_message_id("1000000000000000000").has_value());
  BOOST_TEST(!parse_message_id("0").has_value());
  BOOST_TEST(!parse_message_id("-1").has_value());
  BOOST_TEST(!parse_message_id("1e3").has_value());
  BOOST_TEST(!parse_message_id("").has_value());
}

BOOST_AUTO_TEST_CASE(utf8_truncation_never_splits_a_character) {
  BOOST_TEST(truncate_utf8("abc", 10) == "abc");
  BOOST_TEST(truncate_utf8("abcdef", 3) == "abc");
  std::string s = "ab\u20ac";  // the euro sign takes 3 bytes
  BOOST_TEST(truncate_utf8(s, 4) == "ab");
  BOOST_TEST(truncate_utf8(s, 5) == "ab\u20ac");
  BOOST_TEST(truncate_utf8("\U0001F600x", 3) == "");
}

BOOST_AUTO_TEST_CASE(enqueue_defaults_and_extras) {
  Config config;
  EnqueueRequest r;
  auto errors = decode_enqueue(obj(R"({"payload":"x"})"), config, config.defaults, r);
  BOOST_TEST(errors.empty());
  BOOST_TEST(r.message.payload == "x");
  BOOST_TEST(r.message.max_retries == 3);
  BOOST_TEST(r.message.priority == 0);

  EnqueueRequest full;
  errors = decode_enqueue(obj(R"({"payload":"x","max_retries":7,"job_type":"charge","priority":9,
                                  "delay_seconds":30,"idempotency_key":"k1","unknown":1})"),
                          config, config.defaults, full);
  BOOST_TEST(errors.empty());
  BOOST_TEST(*full.message.job_type == "charge");
  BOOST_TEST(full.message.priority == 9);
  BOOST_TEST(*full.delay_ms == 30000);
  BOOST_TEST(*full.message.idempotency_key == "k1");

  QueuePolicy emails = config.defaults;
  emails.max_retries = 5;
  EnqueueRequest per_queue;
  decode_enqueue(obj(R"({"payload":"x"})"), config, emails, per_queue);
  BOOST_TEST(per_queue.message.max_retries == 5);
}

BOOST_AUTO_TEST_CASE(enqueue_reports_every_field_in_documented_order) {
  Config config;
  EnqueueRequest r;
  auto errors = decode_enqueue(obj(R"({"idempotency_key":"","run_at":"soon","priority":10,
                                       "job_type":7,"max_retries":0,"payload":""})"),
                               config, config.defaults, r);
  BOOST_TEST(fields(errors) == (std::vector<std::string>{"payload", "max_retries", "job_type",
                                                         "priority", "run_at", "idempotency_key"}),
             boost::test_tools::per_element());
  EnqueueRequest both;
  errors = decode_enqueue(obj(R"({"payload":"x","delay_seconds":1,"run_at":"2099-01-01T00:00:00Z"})"),
                          config, config.defaults, both);
  BOOST_TEST(fields(errors) == std::vector<std::string>{"run_at"});
  EnqueueRequest prefixed;
  errors = decode_enqueue(obj(R"({})"), config, config.defaults, prefixed, "messages[3].");
  BOOST_TEST(fields(errors) == std::vector<std::string>{"messages[3].payload"});
  EnqueueRequest nul;
  errors = decode_enqueue(json::object{{"payload", std::string("a\0b", 3)}}, config, config.defaults, nul);
  BOOST_TEST(fields(errors) == std::vector<std::string>{"payload"});
}

BOOST_AUTO_TEST_CASE(list_query) {
  store::ListParams p;
  BOOST_TEST(decode_list({}, p).empty());
  BOOST_TEST(p.limit == 20);
  BOOST_TEST(p.offset == 0);
  store::ListParams q;
  BOOST_TEST(decode_list({{"status", "dead"}, {"limit", "05"}, {"offset", "7"}}, q).empty());
  BOOST_TEST(to_string(*q.status) == "dead");
  BOOST_TEST(q.limit == 5);
  BOOST_TEST(q.offset == 7);
  store::ListParams bad;
  BOOST_TEST(fields(decode_list({{"offset", "1.5"}, {"limit", " 1"}, {"status", "DEAD"}}, bad)) ==
             (std::vector<std::string>{"status", "limit", "offset"}));
}

BOOST_AUTO_TEST_CASE(attempts_query) {
  store::HistoryPage p;
  BOOST_TEST(decode_attempts({}, p).empty());
  BOOST_TEST(p.limit == 1000);
  BOOST_TEST(p.after == 0);
  store::HistoryPage q;
  BOOST_TEST(decode_attempts({{"limit", "1000"}, {"after", "0012"}}, q).empty());
  BOOST_TEST(q.limit == 1000);
  BOOST_TEST(q.after == 12);
  store::HistoryPage bad;
  BOOST_TEST(fields(decode_attempts({{"after", "-1"}, {"limit", "1001"}}, bad)) ==
             (std::vector<std::string>{"limit", "after"}));
  BOOST_TEST(fields(decode_attempts({{"limit", "0"}}, bad)) == (std::vector<std::string>{"limit"}));
}

BOOST_AUTO_TEST_CASE(claim_body_and_wait_query) {
  ClaimRequest r;
  BOOST_TEST(decode_claim(obj("{}"), {{"wait", "15"}}, r).empty());
  BOOST_TEST(r.command.wait_ms == 15000);
  BOOST_TEST(!r.batch);
  ClaimRequest body_wins;
  BOOST_TEST(decode_claim(obj(R"({"wait_seconds":2})"), {{"wait", "15"}}, body_wins).empty());
  BOOST_TEST(body_wins.command.wait_ms == 2000);
  ClaimRequest batch;
  BOOST_TEST(decode_claim(obj(R"({"max":1,"visibility_timeout":5,"worker":"w","job_types":["a","b"]})"),
                          {}, batch).empty());
  BOOST_TEST(batch.batch);
  BOOST_TEST(batch.command.max == 1);
  BOOST_TEST(*batch.command.visibility_ms == 5000);
  BOOST_TEST(batch.command.job_types.size() == 2u);
  ClaimRequest bad;
  auto errors = decode_claim(obj(R"({"max":0,"job_types":"a","worker":1,"visibility_timeout":0})"),
                             {{"wait", "61"}}, bad);
  BOOST_TEST(fields(errors) == (std::vector<std::string>{"wait_seconds", "visibility_timeout", "worker",
                                                         "job_types", "max"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fail_body) {
  FailInput in;
  BOOST_TEST(decode_fail(obj(R"({"error":["x"]})"), in).empty());
  BOOST_TEST(in.error == "unspecified error");
  FailInput full;
  BOOST_TEST(decode_fail(obj(R"({"error":"e","error_class":"throttled","retryable":true,"retry_in":30,
                                 "stack":"s","cause":"c","checkpoint":"cp","lease_id":"l"})"),
                         full).empty());
  BOOST_TEST((*full.error_class == ErrorClass::throttled));
  BOOST_TEST(*full.retryable);
  BOOST_TEST(*full.retry_in_seconds == 30);
  BOOST_TEST(*full.lease_id == "l");
  FailInput bad;
  auto errors = decode_fail(json::object{{"error_class", "weird"}, {"retryable", "yes"}, {"retry_in", 1.5},
                                         {"stack", std::string(16385, 's')}, {"cause", 5},
                                         {"checkpoint", std::string(4097, 'c')}, {"lease_id", 1}},
                            bad);
  BOOST_TEST(fields(errors) == (std::vector<std::string>{"lease_id", "error_class", "retryable",
                                                         "retry_in", "stack", "cause", "checkpoint"}),
             boost::test_tools::per_element());
  FailInput nul;
  decode_fail(json::object{{"error", std::string("a\0b", 3)}}, nul);
  BOOST_TEST(nul.error == "a\xEF\xBF\xBD" "b");
}

BOOST_AUTO_TEST_CASE(extend_release_need_a_lease) {
  ExtendRequest e;
  BOOST_TEST(fields(decode_extend(obj("{}"), e)) == std::vector<std::string>{"lease_id"});
  ReleaseRequest r;
  BOOST_TEST(fields(decode_release(obj(R"({"delay_seconds":-1})"), r)) ==
             (std::vector<std::string>{"lease_id", "delay_seconds"}));
  ExtendRequest ok;
  BOOST_TEST(decode_extend(obj(R"({"lease_id":"x","seconds":60,"checkpoint":"c"})"), ok).empty());
  BOOST_TEST(*ok.duration_ms == 60000);
}

// Boost.JSON 1.81 reads 0e400 as NaN, which a "below min or above max" check let through (found
// from the redact fuzzer's 0e362, issue 37): the batch replay's rate would have been NaN.
BOOST_AUTO_TEST_CASE(a_number_read_as_nan_is_out_of_range) {
  Config config;
  BatchReplayRequest out;
  auto preview = [&](const char* rate) {
    std::string body = R"({"filter": {}, "dry_run": true, "rate_per_second": )";
    body += rate;
    body += "}";
    return decode_batch_replay(json::parse(body).as_object(), config, out);
  };
  BOOST_TEST(fields(preview("0e400")) == std::vector<std::string>({"rate_per_second"}));
  BOOST_TEST(preview("2.5").empty());
  BOOST_TEST(*out.confirmation.rate_per_second == 2.5);
}

BOOST_AUTO_TEST_SUITE_END()

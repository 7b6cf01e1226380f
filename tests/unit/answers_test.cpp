// Answers the API builds as values: an acknowledgement item's status is the one its problem
// would have (one map, status_for), and a batch action's preview keeps its members, their order
// and its bytes.
#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "http/api_dlq.hpp"
#include "http/json_codec.hpp"
#include "http/problem.hpp"

namespace json = boost::json;
using namespace dlq;
using namespace dlq::http;

namespace {

// A message with every member set, and text that must be escaped, masked or passed through.
Message dead_message(MessageId id) {
  Message m;
  m.id = id;
  m.queue = "billing";
  m.payload = "{\"password\":\"p\",\"note\":\"tab\\t \\u0001 caf\\u00e9\",\"n\":1}";
  m.status = Status::dead;
  m.retry_count = 3;
  m.max_retries = 3;
  m.retry_after = 4102444800000;
  m.last_error = std::string("Bearer abc \"quoted\"\n\x01 \xE4\xB8\xAD");
  m.created_at = 4102444800000;
  m.updated_at = 4102444800001;
  m.priority = 4;
  m.job_type = "charge";
  m.idempotency_key = "key/1";
  m.error_class = ErrorClass::auth;
  m.dead_reason = DeadReason::retries_exhausted;
  m.checkpoint = "step \\ 2";
  m.lease_expiries = 1;
  m.attempts = 3;
  m.first_attempt_at = 4102444800000;
  m.last_attempt_at = 4102444800001;
  m.dead_at = 4102444800001;
  m.replay_count = 2;
  return m;
}

// The preview's text as it was written before it was built as values: the first five members
// (and the uncertain effects) serialized, and the sample's members spliced in from the message list's text.
std::string spliced_preview(const core::BatchPreviewView& p, const core::Redactor& redactor) {
  json::object by_type;
  for (const auto& [job_type, count] : p.by_job_type) by_type[job_type.value_or("(none)")] = count;
  json::array needs;
  for (const auto& t : p.needs_acknowledgement) needs.emplace_back(t);
  std::string sample = message_list_text("sample", p.sample, {Audience::people, false}, redactor);
  json::object o;
  o["matched"] = p.matched;
  o["by_job_type"] = std::move(by_type);
  o["needs_acknowledgement"] = std::move(needs);
  json::array uncertain;
  for (auto id : p.uncertain_ids) uncertain.emplace_back(id);
  o["uncertain_effects"] = json::object{{"count", p.uncertain_count}, {"ids", std::move(uncertain)}};
  o["confirm_token"] = p.confirm_token;
  o["expires_at"] = format_rfc3339(p.expires_at);
  std::string head = json::serialize(o);
  head.pop_back();
  return head + "," + sample.substr(1, sample.rfind(",\"count\"") - 1) + "}";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(answers)

BOOST_AUTO_TEST_CASE(an_error_has_one_status_for_problems_and_ack_items) {
  const std::string base = "https://dlq.example/problems";
  const std::string path = "/queues/q/ack";
  ProblemContext pc{base, path};
  for (Errc code : {Errc::unknown_queue, Errc::message_not_found, Errc::invalid_state,
                    Errc::lease_lost, Errc::already_succeeded, Errc::idempotency_conflict,
                    Errc::preview_stale, Errc::validation_failed, Errc::replay_not_found,
                    Errc::replay_limit}) {
    BOOST_TEST(status_for(code) == problem_from_error(pc, Error(code, "e")).status);
  }
  BOOST_TEST(status_for(Errc::lease_lost) == 409);
  BOOST_TEST(status_for(Errc::message_not_found) == 404);
  BOOST_TEST(status_for(Errc::validation_failed) == 422);
}

BOOST_AUTO_TEST_CASE(a_message_value_is_the_message_text_read_back) {
  core::Redactor redactor({"password"});
  Message m = dead_message(42);
  m.lease_id = "lease";
  m.payload += "\xFF";  // no longer JSON, and not UTF-8: written as U+FFFD by both
  for (MessageView view : {MessageView{Audience::owner, true}, MessageView{Audience::people, false}}) {
    const std::string text = message_text(m, view, redactor);
    BOOST_TEST(text.find('\xFF') == std::string::npos);
    BOOST_TEST(json::serialize(message_value(m, view, redactor)) ==
               json::serialize(json::parse(text)));
  }
  Message bare;
  bare.id = 1;
  bare.queue = "q";
  bare.payload = "x";
  BOOST_TEST(json::serialize(message_value(bare, {}, redactor)) == message_text(bare, {}, redactor));
}

BOOST_AUTO_TEST_CASE(a_preview_keeps_its_members_their_order_and_its_bytes) {
  core::Redactor redactor({"password"});
  core::BatchPreviewView p;
  p.matched = 3;
  p.by_job_type = {{std::string("charge"), 2}, {std::nullopt, 1}};
  p.sample = {dead_message(7), dead_message(8)};
  p.sample[1].job_type.reset();
  p.needs_acknowledgement = {"charge"};
  p.confirm_token = "0123456789abcdef0123456789abcdef";
  p.expires_at = 4102444800000;

  json::object o = preview_json(p, redactor);
  std::vector<std::string> keys;
  for (const auto& [k, v] : o) keys.emplace_back(k);
  BOOST_TEST(keys == (std::vector<std::string>{"matched", "by_job_type", "needs_acknowledgement",
                                               "uncertain_effects", "confirm_token", "expires_at",
                                               "sample"}),
             boost::test_tools::per_element());
  BOOST_TEST(json::serialize(o) == spliced_preview(p, redactor));
  // Redacted as people see it.
  const auto& first = o.at("sample").as_array().at(0).as_object();
  BOOST_TEST(json::parse(first.at("payload").as_string()).at("password").as_string() == "***");
  BOOST_TEST(first.at("last_error").as_string().starts_with("Bearer ***"));
  BOOST_TEST(!first.contains("lease_id"));

  core::BatchPreviewView empty;
  empty.confirm_token = "t";
  BOOST_TEST(json::serialize(preview_json(empty, redactor)) == spliced_preview(empty, redactor));
  BOOST_TEST(json::serialize(preview_json(empty, redactor)) ==
             R"({"matched":0,"by_job_type":{},"needs_acknowledgement":[],)"
             R"("uncertain_effects":{"count":0,"ids":[]},"confirm_token":"t",)"
             R"("expires_at":"1970-01-01T00:00:00.000Z","sample":[]})");
}

BOOST_AUTO_TEST_SUITE_END()

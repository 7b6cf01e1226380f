#include <boost/test/unit_test.hpp>

#include <random>

#include <boost/json.hpp>

#include "http/json_codec.hpp"

namespace json = boost::json;
using namespace dlq;
using namespace dlq::http;

BOOST_AUTO_TEST_SUITE(json_codec)

BOOST_AUTO_TEST_CASE(strings_round_trip_through_a_json_parser) {
  std::vector<std::string> samples = {"", "plain", "quote \" backslash \\ slash /",
                                      "\b\f\n\r\t", std::string("nul \0 byte", 10),
                                      "\x01\x1f\x7f", "caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80"};
  std::mt19937 rng(42);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    for (int j = 0; j < 40; ++j) s += static_cast<char>(rng() % 128);  // ASCII incl. controls
    samples.push_back(s);
  }
  for (const auto& s : samples) {
    std::string out;
    append_json_string(out, s);
    BOOST_TEST(json::parse(out).as_string() == s);
  }
}

// Bytes that are not UTF-8 (a damaged database page, issue 37) become U+FFFD: the answer stays
// JSON. Well-formed sequences pass unchanged; overlong forms, surrogates, stray continuation
// bytes and sequences cut short do not.
BOOST_AUTO_TEST_CASE(bytes_that_are_not_utf8_become_replacement_characters) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"caf\xC3\xA9", "caf\xC3\xA9"},
      {"a\xFF" "b", "a" + fffd + "b"},
      {"\xC0\xAF", fffd + fffd},                  // overlong '/'
      {"\xED\xA0\x80", fffd + fffd + fffd},      // a surrogate
      {"\x80" "x", fffd + "x"},                   // a continuation byte alone
      {"\xE4\xB8", fffd + fffd},                  // cut short
      {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},  // past U+10FFFF
      {"\xF0\x9F\x98\x80!", "\xF0\x9F\x98\x80!"}};
  for (const auto& [in, shown] : cases) {
    std::string out;
    append_json_string(out, in);
    BOOST_TEST(std::string(json::parse(out).as_string()) == shown);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string s;
    for (int j = 0; j < 40; ++j) s += static_cast<char>(rng() % 256);
    std::string out;
    append_json_string(out, s);
    std::error_code ec;
    json::parse(out, ec);
    BOOST_TEST(!ec, "not JSON: " << out);
  }
}

BOOST_AUTO_TEST_CASE(message_text_has_the_contract_keys_in_order) {
  Message m;
  m.id = 123456789012345LL;
  m.queue = "q";
  m.payload = "{\"password\":\"p\",\"n\":\"\\u0001\"}";
  m.status = Status::dead;
  m.retry_count = 2;
  m.max_retries = 2;
  m.last_error = "Bearer abc";
  m.created_at = 4102444800000;
  m.updated_at = 4102444800001;
  m.error_class = ErrorClass::auth;
  m.dead_reason = DeadReason::non_retryable;
  m.dead_at = 4102444800001;
  m.lease_id = "secret-lease";
  core::Redactor redactor({"password"});

  auto owner = json::parse(message_text(m, {Audience::owner, true}, redactor)).as_object();
  std::vector<std::string> keys;
  for (const auto& [k, v] : owner) keys.emplace_back(k);
  BOOST_TEST(keys == (std::vector<std::string>{
                         "id", "queue", "payload", "status", "retry_count", "max_retries",
                         "retry_after", "last_error", "created_at", "updated_at", "priority",
                         "job_type", "idempotency_key", "error_class", "dead_reason", "checkpoint",
                         "lease_expiries", "attempts", "first_attempt_at", "last_attempt_at",
                         "dead_at", "replay_count", "lease_expires_at", "fingerprint", "title",
                         "lease_id", "effects"}),
             boost::test_tools::per_element());
  BOOST_TEST(owner.at("id").as_int64() == 123456789012345LL);
  BOOST_TEST(owner.at("payload").as_string() == m.payload);
  BOOST_TEST(owner.at("last_error").as_string() == "Bearer abc");
  BOOST_TEST(owner.at("created_at").as_string() == "2100-01-01T00:00:00.000Z");
  BOOST_TEST(owner.at("retry_after").is_null());
  BOOST_TEST(owner.at("error_class").as_string() == "auth");

  auto people = json::parse(message_text(m, {Audience::people, false}, redactor)).as_object();
  BOOST_TEST(!people.contains("lease_id"));
  BOOST_TEST(json::parse(people.at("payload").as_string()).at("password").as_string() == "***");
  BOOST_TEST(people.at("last_error").as_string() == "Bearer ***");

  auto list = json::parse(message_list_text("messages", {m, m}, {Audience::owner, false}, redactor));
  BOOST_TEST(list.at("count").as_int64() == 2);
  BOOST_TEST(list.at("messages").as_array().size() == 2u);
  auto empty = message_list_text("messages", {}, {Audience::owner, false}, redactor);
  BOOST_TEST(empty == R"({"messages":[],"count":0})");
}

// Answers write fractions as plain decimals, everything else as Boost.JSON does.
BOOST_AUTO_TEST_CASE(json_text_writes_plain_numbers) {
  auto v = boost::json::parse(R"({"a":0.5,"b":10.0,"c":1e300,"d":"x\"\u0001y","e":[1,-2,true,null,18446744073709551615],"f":{}})");
  BOOST_TEST(dlq::json_text(v) ==
             R"({"a":0.5,"b":10,"c":1e+300,"d":"x\"\u0001y","e":[1,-2,true,null,18446744073709551615],"f":{}})");
  BOOST_TEST(dlq::json_text(boost::json::value(0.1 + 0.2)) == "0.30000000000000004");
}

BOOST_AUTO_TEST_SUITE_END()

#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "core/redaction.hpp"

using dlq::core::Redactor;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(redaction)

const std::vector<std::string> kDefault = {"password", "token", "secret", "authorization",
                                           "card_number", "api_key"};

BOOST_AUTO_TEST_CASE(masks_matching_keys_at_any_depth_and_case) {
  Redactor r(kDefault);
  std::string payload = R"({"user":"a","Password":"p","nested":{"list":[{"API_KEY":"k"},{"ok":1}]}})";
  auto masked = json::parse(r.payload(payload));
  BOOST_TEST(masked.at("user").as_string() == "a");
  BOOST_TEST(masked.at("Password").as_string() == "***");
  BOOST_TEST(masked.at("nested").at("list").at(0).at("API_KEY").as_string() == "***");
  BOOST_TEST(masked.at("nested").at("list").at(1).at("ok").as_int64() == 1);
  // Whole sub-objects under a secret key are masked too.
  BOOST_TEST(json::parse(r.payload(R"({"secret":{"a":1}})")).at("secret").as_string() == "***");
}

BOOST_AUTO_TEST_CASE(payloads_without_matches_are_returned_byte_for_byte) {
  Redactor r(kDefault);
  for (std::string p : {std::string(R"({ "a" : 1,   "b":[1, 2] })"), std::string("plain text password=x"),
                        std::string("[1,2]"), std::string("{broken"), std::string("")}) {
    BOOST_TEST(r.payload(p) == p);
  }
}

BOOST_AUTO_TEST_CASE(an_empty_list_turns_redaction_off) {
  Redactor off({});
  std::string p = R"({"password":"p"})";
  BOOST_TEST(off.payload(p) == p);
  BOOST_TEST(off.text("Bearer abc") == "Bearer abc");
}

BOOST_AUTO_TEST_CASE(masks_credentials_in_error_texts) {
  Redactor r(kDefault);
  BOOST_TEST(r.text("call failed: Authorization: Bearer eyJhbGci.abc-def") ==
             "call failed: Authorization: Bearer ***");
  BOOST_TEST(r.text("login with password=hunter2&user=bob") == "login with password=***&user=bob");
  BOOST_TEST(r.text(R"(body {"api_key": "k-123", "n": 1})") == R"(body {"api_key": "***", "n": 1})");
  BOOST_TEST(r.text("timeout after 30s") == "timeout after 30s");
}

BOOST_AUTO_TEST_CASE(masks_left_in_an_edited_payload_keep_the_original_values) {
  Redactor r(kDefault);
  std::string original = R"({"to":"alx@@example.com","password":"p1","card":{"card_number":"4111"}})";
  std::string edited = R"({"to":"alex@example.com","password":"***","card":{"card_number":"***"}})";
  auto merged = json::parse(r.merge_masks(original, edited));
  BOOST_TEST(merged.at("to").as_string() == "alex@example.com");
  BOOST_TEST(merged.at("password").as_string() == "p1");
  BOOST_TEST(merged.at("card").at("card_number").as_string() == "4111");
  // A new value replaces the secret; an edit without masks is taken as is.
  auto replaced = json::parse(r.merge_masks(original, R"({"password":"new"})"));
  BOOST_TEST(replaced.at("password").as_string() == "new");
  BOOST_TEST(r.merge_masks(original, "not json ***") == "not json ***");
}

BOOST_AUTO_TEST_SUITE_END()

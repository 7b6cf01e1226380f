// SigV4 verification against AWS's published signatures (its SigV4 test suite and the IAM
// example of the signing documentation), then each verdict a request can earn.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include "core/sigv4.hpp"

using namespace dlq::core::sigv4;
using namespace std::chrono;

namespace sigv4_test {

constexpr std::string_view kKey = "AKIDEXAMPLE";
constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const system_clock::time_point kSuiteTime = sys_days{2015y / August / 30} + 12h + 36min;

std::optional<std::string> lookup(std::string_view key) {
  if (key == kKey) return std::string(kSecret);
  return std::nullopt;
}

std::string authorization(std::string_view service, std::string_view signed_headers,
                          std::string_view signature) {
  return "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/" + std::string(service) +
         "/aws4_request, SignedHeaders=" + std::string(signed_headers) +
         ", Signature=" + std::string(signature);
}

// A GET of `query` on example.amazonaws.com as the test suite signs it, with `extra` headers.
Verdict suite_case(std::string_view query, Headers extra, std::string_view signed_headers,
                   std::string_view signature) {
  Headers headers{{"host", "example.amazonaws.com"}, {"x-amz-date", "20150830T123600Z"}};
  headers.insert(headers.end(), extra.begin(), extra.end());
  headers.emplace_back("authorization", authorization("service", signed_headers, signature));
  Request r{"GET", "/", query, &headers, ""};
  return verify(r, "us-east-1", "service", kSuiteTime, lookup).verdict;
}

// A JSON 1.0 SendMessage as an SDK sends it, signed at `t`; `headers` receives what sign() adds.
struct Signed {
  Headers headers{{"host", "sqs.us-east-1.amazonaws.com"},
                  {"content-type", "application/x-amz-json-1.0"},
                  {"x-amz-target", "AmazonSQS.SendMessage"}};
  std::string body = R"({"QueueUrl":"http://localhost/000000000000/jobs","MessageBody":"hi"})";
  Request request() const { return {"POST", "/", "", &headers, body}; }

  explicit Signed(system_clock::time_point t = kSuiteTime) {
    auto added = sign(request(), kKey, kSecret, "us-east-1", "sqs", t);
    headers.insert(headers.end(), added.begin(), added.end());
  }
  Result verify_at(system_clock::time_point now, std::string_view region = "us-east-1") const {
    return verify(request(), region, "sqs", now, lookup);
  }
};

}  // namespace sigv4_test

using namespace sigv4_test;

BOOST_AUTO_TEST_SUITE(sigv4)

BOOST_AUTO_TEST_CASE(verifies_the_aws_test_suite) {
  const std::string_view kBasic = "host;x-amz-date";
  BOOST_TEST((suite_case("", {}, kBasic,
                         "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31") ==
              Verdict::ok));  // get-vanilla
  BOOST_TEST((suite_case("Param2=value2&Param1=value1", {}, kBasic,
                         "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500") ==
              Verdict::ok));  // get-vanilla-query-order-key-case
  const std::string unreserved =
      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  BOOST_TEST((suite_case(unreserved + "=" + unreserved, {}, kBasic,
                         "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197") ==
              Verdict::ok));  // get-vanilla-query-unreserved
  BOOST_TEST((suite_case("%E1%88%B4=bar", {}, kBasic,
                         "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04") ==
              Verdict::ok));  // get-vanilla-utf8-query
}

BOOST_AUTO_TEST_CASE(verifies_the_aws_test_suite_header_rules) {
  BOOST_TEST((suite_case("", {{"my-header1", " value1"}, {"my-header2", R"( "a   b   c")"}},
                         "host;my-header1;my-header2;x-amz-date",
                         "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736") ==
              Verdict::ok));  // get-header-value-trim
  BOOST_TEST((suite_case("",
                         {{"my-header1", "value4"},
                          {"my-header1", "value1"},
                          {"my-header1", "value3"},
                          {"my-header1", "value2"}},
                         "host;my-header1;x-amz-date",
                         "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01") ==
              Verdict::ok));  // get-header-value-order
  BOOST_TEST((
      suite_case("", {{"my-header1", "value2"}, {"my-header1", "value2"}, {"my-header1", "value1"}},
                 "host;my-header1;x-amz-date",
                 "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea") ==
      Verdict::ok));  // get-header-key-duplicate
}

// "Create a canonical request" / "Calculate the signature" in the IAM user guide.
BOOST_AUTO_TEST_CASE(verifies_the_iam_documentation_example) {
  Headers headers{
      {"host", "iam.amazonaws.com"},
      {"content-type", "application/x-www-form-urlencoded; charset=utf-8"},
      {"x-amz-date", "20150830T123600Z"},
      {"authorization",
       authorization("iam", "content-type;host;x-amz-date",
                     "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")}};
  Request r{"GET", "/", "Action=ListUsers&Version=2010-05-08", &headers, ""};
  auto result = verify(r, "us-east-1", "iam", kSuiteTime, lookup);
  BOOST_TEST((result.verdict == Verdict::ok));
  BOOST_TEST(result.access_key_id == kKey);
}

BOOST_AUTO_TEST_CASE(sign_produces_what_the_test_suite_expects) {
  Headers headers{{"host", "example.amazonaws.com"}};
  auto added =
      sign({"GET", "/", "", &headers, ""}, kKey, kSecret, "us-east-1", "service", kSuiteTime);
  BOOST_REQUIRE_EQUAL(added.size(), 2u);
  BOOST_TEST(added[0].first == "x-amz-date");
  BOOST_TEST(added[0].second == "20150830T123600Z");
  BOOST_TEST(added[1].first == "authorization");
  BOOST_TEST(added[1].second ==
             authorization("service", "host;x-amz-date",
                           "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

BOOST_AUTO_TEST_CASE(a_signed_json_post_verifies) {
  Signed s;
  auto result = s.verify_at(kSuiteTime);
  BOOST_TEST((result.verdict == Verdict::ok));
  BOOST_TEST(result.access_key_id == kKey);
}

BOOST_AUTO_TEST_CASE(a_tampered_body_or_header_is_a_bad_signature) {
  Signed s;
  s.body[s.body.size() - 3] = 'o';
  BOOST_TEST((s.verify_at(kSuiteTime).verdict == Verdict::bad_signature));

  Signed t;
  t.headers[2].second = "AmazonSQS.DeleteQueue";
  BOOST_TEST((t.verify_at(kSuiteTime).verdict == Verdict::bad_signature));
}

// The payload hash comes from the body received, never from the client's claim.
BOOST_AUTO_TEST_CASE(a_false_content_sha256_claim_is_a_bad_signature) {
  Signed s;
  s.headers.emplace_back("x-amz-content-sha256", std::string(64, '0'));
  BOOST_TEST((s.verify_at(kSuiteTime).verdict == Verdict::bad_signature));
}

BOOST_AUTO_TEST_CASE(an_unknown_key_is_refused) {
  Signed s;
  auto result = verify(s.request(), "us-east-1", "sqs", kSuiteTime,
                       [](std::string_view) { return std::optional<std::string>(); });
  BOOST_TEST((result.verdict == Verdict::unknown_key));
  BOOST_TEST(result.access_key_id == kKey);
}

BOOST_AUTO_TEST_CASE(another_region_service_or_date_is_a_bad_scope) {
  Signed s;
  BOOST_TEST((s.verify_at(kSuiteTime, "eu-west-1").verdict == Verdict::bad_scope));
  BOOST_TEST(
      (verify(s.request(), "us-east-1", "sns", kSuiteTime, lookup).verdict == Verdict::bad_scope));
  for (auto& [name, value] : s.headers) {
    if (name == "authorization") value.replace(value.find("20150830"), 8, "20150831");
  }
  BOOST_TEST((s.verify_at(kSuiteTime).verdict == Verdict::bad_scope));
}

BOOST_AUTO_TEST_CASE(more_than_five_minutes_either_way_is_skewed) {
  Signed s;
  BOOST_TEST((s.verify_at(kSuiteTime + 20min).verdict == Verdict::skewed));
  BOOST_TEST((s.verify_at(kSuiteTime - 20min).verdict == Verdict::skewed));
  BOOST_TEST((s.verify_at(kSuiteTime + 5min + 1s).verdict == Verdict::skewed));
  BOOST_TEST((s.verify_at(kSuiteTime - 2min).verdict == Verdict::ok));
  BOOST_TEST((s.verify_at(kSuiteTime + 5min).verdict == Verdict::ok));
}

BOOST_AUTO_TEST_CASE(presigned_urls_and_session_tokens_are_refused) {
  Headers headers{{"host", "example.amazonaws.com"}};
  Request presigned{"GET", "/", "Action=ListQueues&X-Amz-Credential=AKIDEXAMPLE%2F20150830",
                    &headers, ""};
  BOOST_TEST(
      (verify(presigned, "us-east-1", "sqs", kSuiteTime, lookup).verdict == Verdict::presigned));
  presigned.query = "X-Amz-Signature=abc";
  BOOST_TEST(
      (verify(presigned, "us-east-1", "sqs", kSuiteTime, lookup).verdict == Verdict::presigned));

  Signed s;
  s.headers.emplace_back("x-amz-security-token", "FQoGZXIvYXdzE...");
  BOOST_TEST((s.verify_at(kSuiteTime).verdict == Verdict::security_token));
}

BOOST_AUTO_TEST_CASE(no_aws4_authorization_is_missing) {
  Headers headers{{"host", "example.amazonaws.com"}, {"x-amz-date", "20150830T123600Z"}};
  Request r{"POST", "/", "", &headers, "{}"};
  BOOST_TEST((verify(r, "us-east-1", "sqs", kSuiteTime, lookup).verdict == Verdict::missing));
  headers.emplace_back("authorization", "Bearer abc");
  BOOST_TEST((verify(r, "us-east-1", "sqs", kSuiteTime, lookup).verdict == Verdict::missing));
  BOOST_TEST(
      (verify({"POST", "/", "", nullptr, ""}, "us-east-1", "sqs", kSuiteTime, lookup).verdict ==
       Verdict::missing));
}

BOOST_AUTO_TEST_CASE(unparsable_or_unsigned_host_is_malformed) {
  auto verdict_for = [](Headers headers) {
    return verify({"GET", "/", "", &headers, ""}, "us-east-1", "service", kSuiteTime, lookup)
        .verdict;
  };
  const std::string sig(64, 'a');
  Headers base{{"host", "example.amazonaws.com"}, {"x-amz-date", "20150830T123600Z"}};
  auto with = [&base](std::string auth) {
    Headers h = base;
    h.emplace_back("authorization", std::move(auth));
    return h;
  };
  BOOST_TEST((verdict_for(with(authorization("service", "x-amz-date", sig))) ==
              Verdict::malformed));  // host not signed
  BOOST_TEST((verdict_for(with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
                               "service/aws4_request, SignedHeaders=host;x-amz-date")) ==
              Verdict::malformed));  // no Signature
  BOOST_TEST((verdict_for(with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
                               "service, SignedHeaders=host;x-amz-date, Signature=" +
                               sig)) == Verdict::malformed));  // scope without aws4_request
  BOOST_TEST((verdict_for(with("AWS4-HMAC-SHA256")) == Verdict::malformed));
  BOOST_TEST((verdict_for(with(authorization("service", "host;x-amz-date;x-missing", sig))) ==
              Verdict::malformed));  // a signed header the request lacks

  base.pop_back();  // no x-amz-date
  BOOST_TEST((verdict_for(with(authorization("service", "host", sig))) == Verdict::malformed));
  base.emplace_back("x-amz-date", "2015-08-30T12:36:00Z");
  BOOST_TEST(
      (verdict_for(with(authorization("service", "host;x-amz-date", sig))) == Verdict::malformed));
}

BOOST_AUTO_TEST_CASE(no_detail_reveals_the_secret_or_the_expected_signature) {
  Signed good;
  std::string expected = good.headers.back().second.substr(good.headers.back().second.size() - 64);
  Signed s;
  s.headers.back().second.replace(s.headers.back().second.size() - 64, 64, std::string(64, 'f'));
  std::vector<Result> results{
      s.verify_at(kSuiteTime), s.verify_at(kSuiteTime + 1h), s.verify_at(kSuiteTime, "eu-west-1"),
      verify(s.request(), "us-east-1", "sqs", kSuiteTime,
             [](std::string_view) { return std::optional<std::string>(); })};
  s.body += "x";
  results.push_back(s.verify_at(kSuiteTime));
  BOOST_TEST((results[0].verdict == Verdict::bad_signature));
  for (const auto& r : results) {
    BOOST_TEST(!r.detail.empty());
    BOOST_TEST(r.detail.find(kSecret) == std::string::npos);
    BOOST_TEST(r.detail.find(expected) == std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

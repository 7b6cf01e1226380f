// docs/openapi.json against the route table: the document dlqd serves (the embedded bytes) must
// describe exactly the routes the server binds, each with the access it needs. A route added to
// api.cpp without its operation, or an operation left behind by a removed route, fails here.
#include <set>
#include <string>
#include <tuple>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "http/api.hpp"
#include "http/openapi.hpp"

namespace json = boost::json;
using dlq::core::Access;

namespace {

// The names the document's x-dlq-access uses.
std::string access_name(Access a) {
  switch (a) {
    case Access::open: return "open";
    case Access::producer: return "producer";
    case Access::worker: return "worker";
    case Access::reader: return "reader";
    case Access::admin: return "admin";
    case Access::reader_unless_public_metrics: return "reader_unless_public_metrics";
    case Access::any_token: return "any_token";
    case Access::sqs: return "sqs";
  }
  return "unknown";
}

const json::object& document() {
  static const json::value doc = json::parse(dlq::http::openapi_document());
  return doc.as_object();
}

const std::set<std::string> kMethods = {"get", "put", "post", "delete", "patch", "head", "options",
                                        "trace"};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(c - 'a' + 'A');
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openapi)

BOOST_AUTO_TEST_CASE(is_openapi_3_1_with_a_bearer_scheme) {
  const auto& doc = document();
  BOOST_TEST(doc.at("openapi").as_string() == "3.1.0");
  const auto& scheme = doc.at("components").at("securitySchemes").at("bearerAuth").as_object();
  BOOST_TEST(scheme.at("type").as_string() == "http");
  BOOST_TEST(scheme.at("scheme").as_string() == "bearer");
}

// Both ways: every route of the table is an operation of the document with the same access,
// and every operation of the document is a route.
BOOST_AUTO_TEST_CASE(describes_exactly_the_routes_of_the_table) {
  using Key = std::tuple<std::string, std::string, std::string>;  // method, pattern, access
  std::set<Key> table;
  for (const auto& r : dlq::http::Api::routes()) table.insert({r.method, r.pattern, access_name(r.access)});
  BOOST_TEST_REQUIRE(table.size() == dlq::http::Api::routes().size());  // no duplicate rows

  std::set<Key> described;
  for (const auto& [path, item] : document().at("paths").as_object()) {
    for (const auto& [method, op] : item.as_object()) {
      if (!kMethods.contains(std::string(method))) continue;  // parameters, summary, ...
      const json::value* access = op.as_object().if_contains("x-dlq-access");
      std::string what = upper(std::string(method)) + " " + std::string(path);
      BOOST_TEST_REQUIRE(access != nullptr, what << " has no x-dlq-access");
      described.insert({upper(std::string(method)), std::string(path),
                        std::string(access->as_string())});
    }
  }
  for (const auto& [method, pattern, access] : table) {
    BOOST_TEST(described.contains({method, pattern, access}),
               "route " << method << " " << pattern << " (" << access
                        << ") is not in docs/openapi.json with that x-dlq-access");
  }
  for (const auto& [method, pattern, access] : described) {
    BOOST_TEST(table.contains({method, pattern, access}),
               "docs/openapi.json describes " << method << " " << pattern << " (" << access
                                              << "), which is not in the route table");
  }
}

// What the access means for a client: open routes need no token; every other route takes the
// bearer token and documents the 401 and 403 it may answer.
BOOST_AUTO_TEST_CASE(security_and_problem_answers_follow_the_access) {
  for (const auto& r : dlq::http::Api::routes()) {
    std::string method = r.method;
    for (auto& c : method) c = static_cast<char>(c - 'A' + 'a');
    const auto* item = document().at("paths").as_object().if_contains(r.pattern);
    BOOST_TEST_REQUIRE(item != nullptr, r.pattern);
    const auto* op = item->as_object().if_contains(method);
    BOOST_TEST_REQUIRE(op != nullptr, r.method << " " << r.pattern);
    const auto& responses = op->at("responses").as_object();
    const auto& security = op->at("security").as_array();
    std::string what = r.method + " " + r.pattern;
    if (r.access == Access::open) {
      BOOST_TEST(security.empty(), what << ": an open route needs no token");
    } else if (r.access == Access::any_token) {
      // Any valid token, or none without tokens ({}): a 401, never a 403.
      BOOST_TEST(security.size() == 2u, what);
      BOOST_TEST(security.at(0).as_object().contains("bearerAuth"), what);
      BOOST_TEST(security.at(1).as_object().empty(), what);
      BOOST_TEST(responses.contains("401"), what << " does not document 401");
      BOOST_TEST(!responses.contains("403"), what << " documents a 403 it never answers");
    } else if (r.access == Access::sqs) {
      // The SQS front: a SigV4 key, or none when it is anonymous ({}); SQS-shaped refusals are
      // 403, never 401 (docs/sqs.md).
      BOOST_TEST(security.size() == 2u, what);
      BOOST_TEST(security.at(0).as_object().contains("sigv4"), what);
      BOOST_TEST(security.at(1).as_object().empty(), what);
      for (const char* status : {"400", "403", "404", "500", "503"}) {
        BOOST_TEST(responses.contains(status), what << " does not document " << status);
      }
      BOOST_TEST(!responses.contains("401"), what << " documents a 401 it never answers");
    } else {
      // reader_unless_public_metrics: a token, or none with auth.public_metrics ({}).
      BOOST_TEST(!security.empty(), what);
      BOOST_TEST(security.at(0).as_object().contains("bearerAuth"), what);
      BOOST_TEST(responses.contains("401"), what << " does not document 401");
      BOOST_TEST(responses.contains("403"), what << " does not document 403");
    }
    BOOST_TEST(responses.contains("default"), what << " does not document its other problems");
  }
}

BOOST_AUTO_TEST_SUITE_END()

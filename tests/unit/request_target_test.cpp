// A request target as handlers see it: split_target's path and decoded query, decode_segment's
// path segments, and what validation then names. These cases hold today's answers (http-api A)
// to whatever parses and decodes the target.
#include <boost/test/unit_test.hpp>

#include "config/config.hpp"
#include "core/desk_requests.hpp"
#include "core/requests.hpp"
#include "http/api_support.hpp"
#include "http/problem.hpp"
#include "http/request.hpp"

using namespace dlq;
using Params = core::QueryParams;

namespace {

struct Split {
  std::string path;
  Params query;
};

Split split(std::string_view target) {
  Split s;
  http::split_target(target, s.path, s.query);
  return s;
}

std::vector<std::string> fields(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.field);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(request_target)

BOOST_AUTO_TEST_CASE(path_stays_encoded_and_query_is_decoded) {
  auto s = split("/queues/a%20b/messages?limit=5&job_type=send%20email");
  BOOST_TEST(s.path == "/queues/a%20b/messages");
  BOOST_TEST((s.query == Params{{"limit", "5"}, {"job_type", "send email"}}));
  BOOST_TEST(split("/healthz").path == "/healthz");
  BOOST_TEST(split("/healthz").query.empty());
  BOOST_TEST(split("/healthz?").path == "/healthz");
  BOOST_TEST(split("/healthz?").query.empty());
  // Keys decode like values; a key without '=' has an empty value.
  BOOST_TEST((split("/x?%6Cimit=5&dry").query == Params{{"limit", "5"}, {"dry", ""}}));
  // Only the first '?' ends the path; '?', '=', '/' and '#' later on are data.
  BOOST_TEST((split("/x?a=b?c=d/e#f").query == Params{{"a", "b?c=d/e#f"}}));
}

BOOST_AUTO_TEST_CASE(a_malformed_escape_keeps_its_raw_text_so_validation_names_the_field) {
  auto limit = split("/queues/q/messages?limit=%zz");
  BOOST_TEST((limit.query == Params{{"limit", "%zz"}}));
  store::ListParams list;
  auto errors = core::decode_list(limit.query, list);
  BOOST_TEST(fields(errors) == std::vector<std::string>{"limit"});
  const std::string base = Config{}.problem_base;
  auto answer = http::validation_problem({base, limit.path}, errors);
  BOOST_TEST(answer.status == 422);
  BOOST_TEST(answer.body.find("validation-failed") != std::string::npos);

  auto queue = split("/dlq?queue=a%2");
  BOOST_TEST((queue.query == Params{{"queue", "a%2"}}));
  store::DeadListParams dead;
  errors = core::decode_dead_list(queue.query, dead);
  BOOST_TEST(fields(errors) == std::vector<std::string>{"queue"});
  BOOST_TEST(http::validation_problem({base, queue.path}, errors).status == 422);

  // The whole key or value stays raw, its '+' and good escapes too, whatever else it holds.
  BOOST_TEST((split("/dlq?job_type=a+b%41%2").query == Params{{"job_type", "a+b%41%2"}}));
  BOOST_TEST((split("/dlq?k%41%zz=v").query == Params{{"k%41%zz", "v"}}));
  BOOST_TEST((split("/dlq?x=%&y=%4").query == Params{{"x", "%"}, {"y", "%4"}}));
}

BOOST_AUTO_TEST_CASE(plus_is_a_space_in_the_query_not_in_a_path_segment) {
  auto s = split("/dlq?job_type=send+email&a+b=c%2Bd");
  BOOST_TEST((s.query == Params{{"job_type", "send email"}, {"a b", "c+d"}}));
  store::DeadListParams dead;
  BOOST_TEST(core::decode_dead_list(s.query, dead).empty());
  BOOST_TEST((dead.filter.job_type == std::optional<std::string>("send email")));

  // /queues/a+b/messages names the queue "a+b", which is no queue name: 404 unknown-queue.
  BOOST_TEST((http::decode_segment("a+b") == std::optional<std::string>("a+b")));
  BOOST_TEST(!http::support::queue_param("a+b"));
  BOOST_TEST((http::support::queue_param("a%2Db") == std::optional<std::string>("a-b")));
}

BOOST_AUTO_TEST_CASE(the_first_of_duplicate_keys_wins_and_empty_pairs_are_skipped) {
  auto s = split("/queues/q/messages?status=dead&status=bogus");
  store::ListParams list;
  BOOST_TEST(core::decode_list(s.query, list).empty());
  BOOST_TEST((list.status == std::optional<Status>(Status::dead)));
  BOOST_TEST((split("/x?&&a=1&&b=2&").query == Params{{"a", "1"}, {"b", "2"}}));
  BOOST_TEST(split("/x?&").query.empty());
  // "=" is a pair, with an empty key and value: not skipped.
  BOOST_TEST((split("/x?=&a").query == Params{{"", ""}, {"a", ""}}));
}

BOOST_AUTO_TEST_CASE(one_bad_pair_never_fails_the_rest) {
  // Beast passes on bytes RFC 3986 refuses in a query: each is data in its own pair only.
  BOOST_TEST((split("/dlq?job_type=a|b&limit=5").query == Params{{"job_type", "a|b"}, {"limit", "5"}}));
  BOOST_TEST((split("/dlq?x=%zz&y=%41").query == Params{{"x", "%zz"}, {"y", "A"}}));
  BOOST_TEST((split("/dlq?a=\"{x}\"&b=%7B^`\\").query == Params{{"a", "\"{x}\""}, {"b", "{^`\\"}}));
  BOOST_TEST((split("/dlq?q=caf\xC3\xA9&n=%C3%A9").query ==
              Params{{"q", "caf\xC3\xA9"}, {"n", "\xC3\xA9"}}));
  BOOST_TEST((split("/dlq?q=[1]<2>&n=1").query == Params{{"q", "[1]<2>"}, {"n", "1"}}));
  store::DeadListParams dead;
  BOOST_TEST(core::decode_dead_list(split("/dlq?job_type=a|b").query, dead).empty());
  BOOST_TEST((dead.filter.job_type == std::optional<std::string>("a|b")));
}

BOOST_AUTO_TEST_CASE(path_segments_decode_without_plus_and_refuse_malformed_escapes) {
  BOOST_TEST((http::decode_segment("a%20b") == std::optional<std::string>("a b")));
  BOOST_TEST((http::decode_segment("caf%C3%a9") == std::optional<std::string>("caf\xC3\xA9")));
  BOOST_TEST((http::decode_segment("%00") == std::optional<std::string>(std::string(1, '\0'))));
  BOOST_TEST((http::decode_segment("%252e") == std::optional<std::string>("%2e")));
  BOOST_TEST((http::decode_segment("") == std::optional<std::string>("")));
  for (std::string_view bad : {"%", "%4", "a%2", "%zz", "%%41", "a%g1b", "%41%"}) {
    BOOST_TEST(!http::decode_segment(bad), bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()

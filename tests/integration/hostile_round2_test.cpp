// Issue 31, hostile input round two: what an adversary found on the operator's side after the
// first round (issue 16). Each section below is one group of the items; each keeps its
// helpers in a namespace of its own and its cases in a suite of its own. Raw sockets where the
// bytes matter, the real dlqd throughout, both databases where the store is involved.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

// ---------------------------------------------------------------------------------------------
// Items 1, 2 and 14: the method label, Host and Origin, two Authorization headers.
// ---------------------------------------------------------------------------------------------

// (end of items 1, 2 and 14)

// ---------------------------------------------------------------------------------------------
// Item 3: slow readers of /dlq, batch claims and /audit.
// ---------------------------------------------------------------------------------------------

// (end of item 3)

// ---------------------------------------------------------------------------------------------
// Item 5: folded releases and paged attempts.
// ---------------------------------------------------------------------------------------------

namespace round2_history {

using Held = std::pair<std::int64_t, std::string>;  // a claimed message's id and lease

// Claims the queue's one message as `worker`.
Held take(HttpClient& c, const std::string& q, const std::string& worker) {
  auto res = claim(c, q, {{"worker", worker}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  auto m = res.json().at("message");
  return {m.at("id").as_int64(), str(m, "lease_id")};
}

void give_back(HttpClient& c, const std::string& q, const Held& held) {
  auto res =
      c.post(message_path(q, held.first, "release"), json::object{{"lease_id", held.second}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
}

// A retryable failure, due again at once.
void fail_now(HttpClient& c, const std::string& q, const Held& held) {
  auto res = c.post(message_path(q, held.first, "fail"),
                    json::object{{"lease_id", held.second}, {"error", "boom"}, {"retry_in", 0}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
}

json::object history(HttpClient& c, const std::string& q, std::int64_t id,
                     const std::string& query = "") {
  auto res = c.get(message_path(q, id, "attempts") + query);
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().as_object();
}

}  // namespace round2_history

BOOST_AUTO_TEST_SUITE(hostile_round2_history)

// A worker that keeps giving a message back grew one history to 18,778 entries: releases in a
// row are one entry now, and none of them counts towards the message's death.
BOOST_AUTO_TEST_CASE(five_hundred_releases_are_one_entry_until_a_failure_comes_between) {
  using namespace round2_history;
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("fold");
  auto id = enqueue(c, q, "x").at("id").as_int64();
  for (int i = 1; i <= 500; ++i) give_back(c, q, take(c, q, "w-" + std::to_string(i)));

  auto folded = history(c, q, id);
  BOOST_REQUIRE_EQUAL(folded.at("count").as_int64(), 1);
  BOOST_TEST(folded.at("next_after").is_null());
  const auto& entry = folded.at("attempts").at(0).as_object();
  BOOST_TEST(str(entry, "outcome") == "released");
  BOOST_TEST(entry.at("count").as_int64() == 500);
  BOOST_TEST(entry.at("attempt").as_int64() == 500);
  BOOST_TEST(str(entry, "worker") == "w-500");
  BOOST_TEST(std::prev(entry.end())->key() == "count");
  auto m = c.get(message_path(q, id)).json();
  BOOST_TEST(str(m, "status") == "pending");
  BOOST_TEST(m.at("retry_count").as_int64() == 0);
  BOOST_TEST(m.at("attempts").as_int64() == 500);
  BOOST_TEST(str(entry, "claimed_at") == str(m, "first_attempt_at"));

  fail_now(c, q, take(c, q, "w-501"));
  give_back(c, q, take(c, q, "w-502"));
  auto after_fail = history(c, q, id);
  BOOST_REQUIRE_EQUAL(after_fail.at("count").as_int64(), 3);
  const auto& entries = after_fail.at("attempts").as_array();
  BOOST_TEST(entries.at(0).at("count").as_int64() == 500);
  BOOST_TEST(str(entries.at(1), "outcome") == "failed");
  BOOST_TEST(entries.at(1).at("count").as_int64() == 1);
  BOOST_TEST(str(entries.at(2), "outcome") == "released");
  BOOST_TEST(entries.at(2).at("count").as_int64() == 1);
  BOOST_TEST(entries.at(2).at("attempt").as_int64() == 502);
}

// Six finished attempts and the one under way, three at a time: 3, 3 and the last one alone,
// the attempt under way last on the last page.
BOOST_AUTO_TEST_CASE(seven_entries_come_back_three_at_a_time) {
  using namespace round2_history;
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("pages");
  auto id = enqueue(c, q, "x", {{"max_retries", 10}}).at("id").as_int64();
  for (int i = 1; i <= 6; ++i) fail_now(c, q, take(c, q, "w"));
  take(c, q, "w-running");

  std::vector<std::int64_t> sizes, attempts;
  std::vector<std::string> next;
  std::string after;
  for (int page = 0; page < 4; ++page) {
    auto body = history(c, q, id, "?limit=3" + after);
    sizes.push_back(body.at("count").as_int64());
    for (const auto& a : body.at("attempts").as_array()) {
      attempts.push_back(a.at("attempt").as_int64());
    }
    const auto& n = body.at("next_after");
    next.push_back(n.is_null() ? "null" : json::serialize(n));
    if (n.is_null()) {
      const auto& last = body.at("attempts").as_array().back();
      BOOST_TEST(last.at("outcome").is_null());
      BOOST_TEST(str(last, "worker") == "w-running");
      BOOST_TEST(last.at("count").as_int64() == 1);
      break;
    }
    after = "&after=" + json::serialize(n);
  }
  BOOST_TEST(sizes == (std::vector<std::int64_t>{3, 3, 1}), boost::test_tools::per_element());
  BOOST_TEST(next == (std::vector<std::string>{"3", "6", "null"}),
             boost::test_tools::per_element());
  BOOST_TEST(attempts == (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7}),
             boost::test_tools::per_element());
  auto whole = history(c, q, id);  // the default page holds up to 1,000
  BOOST_TEST(whole.at("count").as_int64() == 7);
  BOOST_TEST(whole.at("next_after").is_null());
  auto beyond = history(c, q, id, "?after=7");
  BOOST_TEST(beyond.at("count").as_int64() == 0);
  BOOST_TEST(beyond.at("next_after").is_null());
}

BOOST_AUTO_TEST_CASE(a_bad_limit_or_after_is_422_naming_it) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("pages");
  auto id = enqueue(c, q, "x").at("id").as_int64();
  const std::pair<std::string, std::string> bad[] = {
      {"limit=0", "limit"}, {"limit=1001", "limit"}, {"limit=x", "limit"},
      {"after=-1", "after"}, {"after=x", "after"},  {"limit=&after=", "limit,after"}};
  for (const auto& [query, fields] : bad) {
    BOOST_TEST_CONTEXT(query) {
      auto res = c.get(message_path(q, id, "attempts") + "?" + query);
      BOOST_TEST(res.status == 422);
      auto body = res.json();  // a range-for over a member of a temporary would dangle
      BOOST_TEST(str(body, "type").ends_with("/validation-failed"));
      std::string named;
      for (const auto& e : body.at("errors").as_array()) {
        named += (named.empty() ? "" : ",") + str(e, "field");
        BOOST_TEST(str(e, "code") == "invalid");
      }
      BOOST_TEST(named == fields);
    }
  }
  BOOST_TEST(c.get(message_path(q, id, "attempts") + "?limit=1000&after=0").status == 200);
}

BOOST_AUTO_TEST_SUITE_END()


// (end of item 5)

// ---------------------------------------------------------------------------------------------
// Items 6 and 15: the number of queues and of previews.
// ---------------------------------------------------------------------------------------------

// (end of items 6 and 15)

// ---------------------------------------------------------------------------------------------
// Items 7 to 11: signals at start-up, reloads, logs and file modes.
// ---------------------------------------------------------------------------------------------

// (end of items 7 to 11)

// ---------------------------------------------------------------------------------------------
// Items 12 and 13: what the server returns for the UI and dlqctl to show (redaction).
// ---------------------------------------------------------------------------------------------

// (end of items 12 and 13)

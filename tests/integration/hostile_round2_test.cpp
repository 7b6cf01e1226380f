// Issue 31, hostile input round two: what an adversary found on the operator's side after the
// first round (issue 16). Each section below is one group of the issue's items; each keeps its
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

// (end of item 5)

// ---------------------------------------------------------------------------------------------
// Items 6 and 15: the number of queues and of previews.
// ---------------------------------------------------------------------------------------------

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"

namespace round2_queues {

// A dlqd of the test's own (a fresh database on the backend under test) with `config`.
dlq::test::DlqdOptions own(const std::string& config, const std::string& database = "") {
  return dlq::test::DlqdOptions(config, database);
}

// POST one message to `queue`: the status.
int enqueue_status(HttpClient& c, const std::string& queue) {
  return c.post("/queues/" + queue + "/messages", json::object{{"payload", "p"}}).status;
}

// A 422 whose only problem is `queue` with code `limit`.
bool refused_for_limit(const HttpResponse& res) {
  if (res.status != 422) return false;
  const json::value body = res.json();
  const auto& errors = body.at("errors").as_array();
  return errors.size() == 1 && str(errors[0], "field") == "queue" && str(errors[0], "code") == "limit";
}

// The names GET /queues lists (one page of at most 1,000).
std::vector<std::string> listed(HttpClient& c) {
  auto res = c.get("/queues");
  BOOST_REQUIRE_EQUAL(res.status, 200);
  std::vector<std::string> out;
  const json::value body = res.json();
  for (const auto& q : body.at("queues").as_array()) out.push_back(str(q, "queue"));
  return out;
}

// One preview of every dead message: its confirm token.
std::string preview_token(HttpClient& c, const std::string& route) {
  auto res = c.post(route, json::object{{"filter", json::object{}}, {"dry_run", true}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return str(res.json(), "confirm_token");
}

HttpResponse confirm_replay(HttpClient& c, const std::string& token) {
  return c.post("/dlq/replay", json::object{{"filter", json::object{}},
                                            {"confirm_token", token},
                                            {"delay_seconds", 0}});
}

bool stale(const HttpResponse& res) {
  return res.status == 409 && str(res.json(), "type").ends_with("/preview-stale");
}

}  // namespace round2_queues

BOOST_AUTO_TEST_SUITE(hostile_round2_queues)

BOOST_AUTO_TEST_CASE(a_fourth_queue_over_max_queues_3_is_refused_until_a_purge_empties_one) {
  using namespace round2_queues;
  DlqdProcess d(own(R"({"limits": {"max_queues": 3}})"));
  HttpClient c(d.port());
  for (const char* q : {"qa", "qb", "qc"}) BOOST_REQUIRE_EQUAL(enqueue_status(c, q), 201);

  // The fourth name, single and batch: 422 on `queue`, code `limit`, and nothing stored.
  auto single = c.post("/queues/qd/messages", json::object{{"payload", "p"}});
  BOOST_TEST(refused_for_limit(single), single.body);
  json::array two{json::object{{"payload", "1"}}, json::object{{"payload", "2"}}};
  auto batch = c.post("/queues/qd/messages/batch", json::object{{"messages", two}});
  BOOST_TEST(refused_for_limit(batch), batch.body);
  BOOST_TEST(c.get("/queues/qd/messages").json().at("count").as_int64() == 0);
  BOOST_TEST(listed(c) == std::vector<std::string>({"qa", "qb", "qc"}));

  // Names in use keep working.
  BOOST_TEST(enqueue_status(c, "qa") == 201);
  BOOST_TEST(c.post("/queues/qb/messages/batch", json::object{{"messages", two}}).status == 201);

  // qc's one message succeeds and is purged: qc holds nothing, and a new name fits again.
  auto m = claim_one(c, "qc");
  BOOST_REQUIRE_EQUAL(c.post(message_path("qc", m.at("id").as_int64(), "succeed"),
                             json::object{{"lease_id", m.at("lease_id")}})
                          .status,
                      200);
  auto purge = c.request("DELETE", "/queues/qc/messages?status=succeeded&before=2099-01-01T00:00:00Z");
  BOOST_REQUIRE_EQUAL(purge.status, 200);
  BOOST_TEST(purge.json().at("purged").as_int64() == 1);
  BOOST_TEST(listed(c) == std::vector<std::string>({"qa", "qb"}));
  BOOST_TEST(c.post("/queues/qd/messages/batch", json::object{{"messages", two}}).status == 201);
  BOOST_TEST(refused_for_limit(c.post("/queues/qe/messages", json::object{{"payload", "p"}})));
  BOOST_TEST(listed(c) == std::vector<std::string>({"qa", "qb", "qd"}));
}

BOOST_AUTO_TEST_CASE(five_queues_at_limit_2_come_back_2_2_1_in_byte_order) {
  using namespace round2_queues;
  DlqdProcess d(own("{}"));
  HttpClient c(d.port());
  // Byte order ('-' < '0' < 'A' < '_' < 'a'), which a database's own collation would not keep.
  for (const char* q : {"qax", "q_x", "q0x", "qAx", "q-x"}) BOOST_REQUIRE_EQUAL(enqueue_status(c, q), 201);
  std::vector<std::vector<std::string>> pages;
  std::vector<std::string> nexts;
  std::string after;
  for (int i = 0; i < 4; ++i) {
    auto res = c.get("/queues?limit=2" + (after.empty() ? "" : "&after=" + after));
    BOOST_REQUIRE_EQUAL(res.status, 200);
    auto body = res.json();
    std::vector<std::string> names;
    for (const auto& q : body.at("queues").as_array()) names.push_back(str(q, "queue"));
    pages.push_back(names);
    const auto& next = body.at("next_after");
    nexts.push_back(next.is_null() ? "null" : std::string(next.as_string()));
    if (next.is_null()) break;
    after = std::string(next.as_string());
  }
  BOOST_REQUIRE_EQUAL(pages.size(), 3u);
  BOOST_TEST(pages[0] == std::vector<std::string>({"q-x", "q0x"}));
  BOOST_TEST(pages[1] == std::vector<std::string>({"qAx", "q_x"}));
  BOOST_TEST(pages[2] == std::vector<std::string>({"qax"}));
  BOOST_TEST(nexts == std::vector<std::string>({"q0x", "q_x", "null"}));
  // The counts are each queue's own.
  auto first = c.get("/queues?limit=1").json().at("queues").as_array().at(0);
  BOOST_TEST(first.at("ready").as_int64() == 1);

  // A bad limit or after: 422 naming it, code invalid.
  for (const char* bad : {"limit=0", "limit=1001", "limit=x", "after=a%20b", "after="}) {
    auto res = c.get(std::string("/queues?") + bad);
    BOOST_TEST(res.status == 422, bad);
    if (res.status != 422) continue;
    const json::value body = res.json();
    const auto& errors = body.at("errors").as_array();
    BOOST_TEST(errors.size() == 1u, bad);
    BOOST_TEST(str(errors.at(0), "field") == std::string(bad).substr(0, std::string(bad).find('=')), bad);
    BOOST_TEST(str(errors.at(0), "code") == "invalid", bad);
  }
}

BOOST_AUTO_TEST_CASE(two_nodes_creating_20_queues_under_max_queues_10_leave_exactly_10,
                     *boost::unit_test::precondition(on_postgresql)) {
  using namespace round2_queues;
  std::string db = create_pg_database("dlq_maxq");
  const std::string config = R"({"limits": {"max_queues": 10}})";
  DlqdProcess a(own(config, db));
  DlqdProcess b(own(config, db));
  constexpr int kNames = 20;
  std::mutex mu;
  std::vector<int> statuses;
  std::vector<std::string> problems;
  std::vector<std::thread> producers;
  // Connections first, then every request at once.
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int i = 0; i < kNames; ++i) {
    clients.push_back(std::make_unique<HttpClient>(i % 2 == 0 ? a.port() : b.port()));
  }
  std::atomic<bool> go{false};
  for (int i = 0; i < kNames; ++i) {
    producers.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      try {
        std::string q = "n" + std::to_string(i);
        HttpClient& client = *clients[static_cast<std::size_t>(i)];
        HttpResponse res = i % 4 < 2 ? client.post("/queues/" + q + "/messages", json::object{{"payload", "p"}})
                                     : client.post("/queues/" + q + "/messages/batch",
                                                        json::object{{"messages", json::array{json::object{{"payload", "p"}}}}});
        std::lock_guard lock(mu);
        statuses.push_back(res.status);
        if (res.status != 201 && !refused_for_limit(res)) problems.push_back(res.body);
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        problems.push_back(e.what());
      }
    });
  }
  go = true;
  for (auto& t : producers) t.join();
  BOOST_TEST(problems.empty(), (problems.empty() ? "" : problems.front()));
  BOOST_TEST(std::count(statuses.begin(), statuses.end(), 201) == 10);
  BOOST_TEST(std::count(statuses.begin(), statuses.end(), 422) == 10);
  HttpClient ca(a.port()), cb(b.port());
  BOOST_TEST(listed(ca).size() == 10u);
  BOOST_TEST(listed(cb) == listed(ca));
}

BOOST_AUTO_TEST_CASE(five_previews_at_max_previews_3_leave_the_first_two_stale) {
  using namespace round2_queues;
  DlqdProcess d(own(R"({"batch_replay": {"max_previews": 3}})"));
  HttpClient c(d.port());
  BOOST_REQUIRE_EQUAL(c.post("/queues/pv/messages", json::object{{"payload", "p"}, {"max_retries", 1}}).status, 201);
  auto m = claim_one(c, "pv");
  BOOST_REQUIRE_EQUAL(str(c.post(message_path("pv", m.at("id").as_int64(), "fail"),
                                 json::object{{"lease_id", m.at("lease_id")}, {"error", "boom"}})
                              .json(),
                          "status"),
                      "dead");
  // Replay and dismiss previews count together.
  std::vector<std::string> tokens;
  for (const char* route : {"/dlq/replay", "/dlq/replay", "/dlq/dismiss", "/dlq/replay", "/dlq/replay"}) {
    tokens.push_back(preview_token(c, route));
  }
  auto first = confirm_replay(c, tokens[0]);
  BOOST_TEST(stale(first), first.body);
  auto second = confirm_replay(c, tokens[1]);
  BOOST_TEST(stale(second), second.body);
  auto fifth = confirm_replay(c, tokens[4]);
  BOOST_TEST(fifth.status == 202, fifth.body);
}

BOOST_AUTO_TEST_CASE(max_queues_and_max_previews_are_checked_like_every_key) {
  TempDir dir;
  auto check = [&](const std::string& text) {
    std::ofstream(dir.file("c.json")) << text;
    return run_dlqd({"--config", dir.file("c.json"), "--check-config"});
  };
  for (const char* ok : {R"({"limits": {"max_queues": 0}})", R"({"limits": {"max_queues": 5}})",
                         R"({"batch_replay": {"max_previews": 1}})",
                         R"({"batch_replay": {"max_previews": 10000}})"}) {
    auto r = check(ok);
    BOOST_TEST(r.exit_code == 0, ok << ": " << r.err);
  }
  for (auto [bad, key] : std::vector<std::pair<const char*, const char*>>{
           {R"({"limits": {"max_queues": -1}})", "limits.max_queues"},
           {R"({"limits": {"max_queues": "many"}})", "limits.max_queues"},
           {R"({"limits": {"max_queues": 2.5}})", "limits.max_queues"},
           {R"({"batch_replay": {"max_previews": 0}})", "batch_replay.max_previews"},
           {R"({"batch_replay": {"max_previews": 10001}})", "batch_replay.max_previews"}}) {
    auto r = check(bad);
    BOOST_TEST(r.exit_code == 2, bad);
    BOOST_TEST(r.err.find(key) != std::string::npos, bad << ": " << r.err);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// (end of items 6 and 15)

// ---------------------------------------------------------------------------------------------
// Items 7 to 11: signals at start-up, reloads, logs and file modes.
// ---------------------------------------------------------------------------------------------

// (end of items 7 to 11)

// ---------------------------------------------------------------------------------------------
// Items 12 and 13: what the server returns for the UI and dlqctl to show (redaction).
// ---------------------------------------------------------------------------------------------

// (end of items 12 and 13)

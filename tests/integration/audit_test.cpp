// The audit log over real HTTP, on both databases: one entry per admin action with its actor,
// none for a refused action or a dry run, edited payloads redacted, newest-first paging and the
// filters of GET /audit, and the actor in the message's history.
#include <boost/test/unit_test.hpp>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

// Two admins and a worker; the hashes are of the tokens below (dlqd hash-token).
struct AuditServer {
  AuditServer()
      : node(DlqdOptions(json::serialize(json::object{
            {"auth", json::object{{"tokens", json::array{token("ops", ops, "admin"),
                                                         token("anna", anna, "admin"),
                                                         token("work", work, "worker")}}}}}))),
        c(node.port()) {}

  static json::object token(const char* name, const std::string& secret, const char* role) {
    auto r = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), secret);
    return {{"name", name}, {"token_sha256", r.out.substr(0, 64)}, {"roles", json::array{role}}};
  }
  Headers as(const std::string& secret) const { return {{"Authorization", "Bearer " + secret}}; }

  // Enqueues `payload` into `queue` and fails it without retries: a dead message's id.
  std::int64_t dead(const std::string& queue, const std::string& payload) {
    auto res = c.post("/queues/" + queue + "/messages", json::object{{"payload", payload}}, as(work));
    BOOST_REQUIRE_EQUAL(res.status, 403);  // a worker may not enqueue; the admin does
    auto m = c.post("/queues/" + queue + "/messages", json::object{{"payload", payload}}, as(ops));
    BOOST_REQUIRE_EQUAL(m.status, 201);
    auto claimed = claim_one(c, queue, as(work));
    std::int64_t id = claimed.at("id").as_int64();
    auto failed = c.post(message_path(queue, id, "fail"),
                         json::object{{"error", "boom"}, {"retryable", false}}, as(work));
    BOOST_REQUIRE_EQUAL(failed.status, 200);
    BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
    return id;
  }

  json::object audit(const std::string& query = "") {
    auto res = c.get("/audit" + query, as(ops));
    BOOST_REQUIRE_EQUAL(res.status, 200);
    return res.json().as_object();
  }

  const std::string ops = "audit-ops-3f2e1d0c9b8a";
  const std::string anna = "audit-anna-7a6b5c4d3e2f";
  const std::string work = "audit-work-1b2c3d4e5f6a";
  DlqdProcess node;
  HttpClient c;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(audit_log)

BOOST_AUTO_TEST_CASE(each_admin_action_writes_one_entry_and_refusals_write_none) {
  AuditServer s;
  std::string q = fresh_queue("audit");
  auto m1 = s.dead(q, "one");
  auto m2 = s.dead(q, R"({"card_number":"4111111111111111","to":"a@example.com"})");
  auto m3 = s.dead(q, "three");
  BOOST_TEST(s.audit().at("count").as_int64() == 0);  // workers' and producers' calls: none

  auto replayed = s.c.post(message_path(q, m1, "replay"), json::object{{"reason", "smtp fixed"}},
                           s.as(s.ops));
  BOOST_REQUIRE_EQUAL(replayed.status, 200);
  // Refused (no longer dead), and a dry run: no entries.
  BOOST_TEST(s.c.post(message_path(q, m1, "replay"), json::object{}, s.as(s.ops)).status == 409);
  auto dry = s.c.post(message_path(q, m2, "replay"), json::object{{"dry_run", true}}, s.as(s.ops));
  BOOST_TEST(dry.status == 200);
  BOOST_TEST(s.audit().at("count").as_int64() == 1);

  // An edited replay: one payload_edit entry, both payloads masked.
  std::string edited = R"({"card_number":"***","to":"b@example.com"})";
  auto edit = s.c.post(message_path(q, m2, "replay"),
                       json::object{{"payload", edited}, {"reason", "wrong address"}}, s.as(s.anna));
  BOOST_REQUIRE_EQUAL(edit.status, 200);
  auto dismissed = s.c.post(message_path(q, m3, "dismiss"), json::object{{"reason", "won't fix"}},
                            s.as(s.ops));
  BOOST_REQUIRE_EQUAL(dismissed.status, 200);

  auto all = s.audit();
  BOOST_REQUIRE_EQUAL(all.at("count").as_int64(), 3);
  const auto& entries = all.at("entries").as_array();
  // Newest first.
  BOOST_TEST(str(entries[0], "action") == "dismiss");
  BOOST_TEST(str(entries[0], "actor") == "ops");
  BOOST_TEST(str(entries[0], "reason") == "won't fix");
  BOOST_TEST(entries[0].at("message_ids").as_array() == json::array({m3}));
  BOOST_TEST(str(entries[0].at("details"), "status") == "dismissed");

  BOOST_TEST(str(entries[1], "action") == "payload_edit");
  BOOST_TEST(str(entries[1], "actor") == "anna");
  BOOST_TEST(str(entries[1], "queue") == q);
  const auto& details = entries[1].at("details");
  BOOST_TEST(str(details, "previous_payload") == R"({"card_number":"***","to":"a@example.com"})");
  BOOST_TEST(str(details, "payload") == R"({"card_number":"***","to":"b@example.com"})");
  BOOST_TEST(json::serialize(all).find("4111111111111111") == std::string::npos);

  BOOST_TEST(str(entries[2], "action") == "replay");
  BOOST_TEST(str(entries[2], "actor") == "ops");
  BOOST_TEST(str(entries[2], "reason") == "smtp fixed");
  BOOST_TEST(str(entries[2].at("details"), "status_before") == "dead");
  BOOST_TEST(str(entries[2].at("details"), "status") == "pending");
  BOOST_TEST(entries[2].at("filter").is_null());
  BOOST_TEST(entries[2].at("at").is_string());

  // The message's own history names the actor too.
  auto history = s.c.get(message_path(q, m1, "attempts"), s.as(s.ops)).json();
  const auto& last = history.at("attempts").as_array().back();
  BOOST_TEST(str(last, "outcome") == "replayed");
  BOOST_TEST(str(last, "actor") == "ops");
}

BOOST_AUTO_TEST_CASE(pages_newest_first_and_filters) {
  AuditServer s;
  std::string q = fresh_queue("auditpage");
  std::string other = fresh_queue("auditother");
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(s.dead(i < 4 ? q : other, "m" + std::to_string(i)));
  for (int i = 0; i < 5; ++i) {
    const std::string& who = i % 2 == 0 ? s.ops : s.anna;
    auto queue = i < 4 ? q : other;
    auto action = i == 3 ? "dismiss" : "replay";
    BOOST_REQUIRE_EQUAL(s.c.post(message_path(queue, ids[i], action), json::object{}, s.as(who)).status,
                        200);
  }
  // Pages of two: 5 entries -> 2 + 2 + 1, no entry twice, newest first.
  std::vector<std::int64_t> seen;
  std::string query = "?limit=2";
  for (int page = 0; page < 3; ++page) {
    auto body = s.audit(query);
    for (const auto& e : body.at("entries").as_array()) seen.push_back(e.at("id").as_int64());
    if (page < 2) {
      BOOST_REQUIRE(body.at("next_after_id").is_int64());
      query = "?limit=2&after_id=" + std::to_string(body.at("next_after_id").as_int64());
    } else {
      BOOST_TEST(body.at("next_after_id").is_null());
      BOOST_TEST(body.at("count").as_int64() == 1);
    }
  }
  BOOST_REQUIRE_EQUAL(seen.size(), 5u);
  for (std::size_t i = 1; i < seen.size(); ++i) BOOST_TEST(seen[i] < seen[i - 1]);

  BOOST_TEST(s.audit("?action=dismiss").at("count").as_int64() == 1);
  BOOST_TEST(s.audit("?action=replay").at("count").as_int64() == 4);
  BOOST_TEST(s.audit("?actor=anna").at("count").as_int64() == 2);
  BOOST_TEST(s.audit("?queue=" + other).at("count").as_int64() == 1);
  BOOST_TEST(s.audit("?actor=ops&queue=" + q).at("count").as_int64() == 2);
  BOOST_TEST(s.audit("?since=2999-01-01T00:00:00Z").at("count").as_int64() == 0);
  BOOST_TEST(s.audit("?until=2000-01-01T00:00:00Z").at("count").as_int64() == 0);
  BOOST_TEST(s.audit("?since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z")
                 .at("count").as_int64() == 5);

  auto bad = s.c.get("/audit?action=delete&limit=0&after_id=x&since=yesterday", s.as(s.ops));
  BOOST_TEST(bad.status == 422);
  BOOST_TEST(error_fields(bad) == std::vector<std::string>({"action", "since", "limit", "after_id"}));
  // Append-only through the API: no route changes or removes entries.
  BOOST_TEST(s.c.request("DELETE", "/audit", "", s.as(s.ops)).status == 405);
}

// Batch actions carry the queue their filter names, so ?queue= finds them like single ones; a
// filter on another queue (a longer name sharing the prefix) is not found.
BOOST_AUTO_TEST_CASE(batch_actions_are_found_by_the_queue_their_filter_names) {
  AuditServer s;
  std::string q = fresh_queue("auditbatch");
  std::string more = q + "-more";
  std::vector<std::int64_t> dismissed{s.dead(q, "a"), s.dead(q, "b")};
  s.dead(more, "c");
  auto batch = [&s](const char* route, const json::object& filter, json::object extra) {
    auto p = s.c.post(route, json::object{{"filter", filter}, {"dry_run", true}}, s.as(s.ops));
    BOOST_REQUIRE_EQUAL(p.status, 200);
    extra["filter"] = filter;
    extra["confirm_token"] = p.json().at("confirm_token");
    return s.c.post(route, extra, s.as(s.ops));
  };
  BOOST_REQUIRE_EQUAL(batch("/dlq/dismiss", json::object{{"queue", q}}, {}).status, 200);
  BOOST_REQUIRE_EQUAL(batch("/dlq/dismiss", json::object{{"queue", more}}, {}).status, 200);

  auto found = s.audit("?queue=" + q);
  BOOST_REQUIRE_EQUAL(found.at("count").as_int64(), 1);
  const auto& entry = found.at("entries").as_array()[0];
  BOOST_TEST(str(entry, "action") == "dismiss");
  BOOST_TEST(str(entry, "queue") == q);
  BOOST_TEST(entry.at("message_ids").as_array() == json::array(dismissed.begin(), dismissed.end()));
  auto other = s.audit("?queue=" + more);
  BOOST_REQUIRE_EQUAL(other.at("count").as_int64(), 1);
  BOOST_TEST(str(other.at("entries").as_array()[0], "queue") == more);

  // A batch replay (far in the future, so it stays scheduled), paused and cancelled.
  std::vector<std::int64_t> replayed{s.dead(q, "d"), s.dead(q, "e")};
  auto started = batch("/dlq/replay", json::object{{"queue", q}}, {{"delay_seconds", 3600}});
  BOOST_REQUIRE_EQUAL(started.status, 202);
  auto run_id = started.json().at("replay_id").as_int64();
  std::string base = "/dlq/replays/" + std::to_string(run_id);
  BOOST_REQUIRE_EQUAL(s.c.post(base + "/pause", s.as(s.ops)).status, 200);
  BOOST_REQUIRE_EQUAL(s.c.post(base + "/cancel", s.as(s.ops)).status, 200);
  std::vector<std::string> actions;
  auto all = s.audit("?queue=" + q);
  for (const auto& e : all.at("entries").as_array()) {
    actions.push_back(str(e, "action"));
    BOOST_TEST(str(e, "queue") == q);
    if (str(e, "action") != "dismiss") BOOST_TEST(e.at("details").at("replay_id").as_int64() == run_id);
  }
  BOOST_TEST(actions == std::vector<std::string>(
                            {"batch_replay_cancel", "batch_replay_pause", "batch_replay", "dismiss"}),
             boost::test_tools::per_element());
  BOOST_TEST(s.audit("?queue=" + more).at("count").as_int64() == 1);

  auto unused = s.audit("?queue=" + fresh_queue("auditunused"));
  BOOST_TEST(unused.at("count").as_int64() == 0);
  BOOST_TEST(unused.at("entries").as_array().empty());
}

BOOST_AUTO_TEST_SUITE_END()

// The dead-letter desk over real HTTP, on both databases: GET /dlq's filters and paging, batch
// replay in two steps (preview changes nothing; the confirmation replays exactly the previewed
// set, or nothing when it went stale), pacing, pause/resume/cancel, a message that dies again
// during its run, kill -9 in the middle of a run, acknowledgement of side effects, batch dismiss.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "integration/server_fixture.hpp"
#include "support/pg_admin.hpp"
#include "support/preconditions.hpp"

namespace json = boost::json;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

// Enqueues `n` messages into `queue` (max_retries 1) and fails each once: their ids, dead.
std::vector<std::int64_t> make_dead(HttpClient& c, const std::string& queue, int n,
                                    const std::string& job_type = "email",
                                    const std::string& error_class = "transient") {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < n; ++i) {
    json::object body{{"payload", R"({"n":)" + std::to_string(i) + R"(,"password":"pw"})"},
                      {"max_retries", 1}, {"job_type", job_type}};
    auto res = c.post("/queues/" + queue + "/messages", body);
    BOOST_REQUIRE_EQUAL(res.status, 201);
  }
  for (int i = 0; i < n; ++i) {
    auto m = claim_one(c, queue);
    auto id = m.at("id").as_int64();
    auto failed = c.post(message_path(queue, id, "fail"),
                         json::object{{"error", "boom"}, {"error_class", error_class}});
    BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
    ids.push_back(id);
  }
  return ids;
}

json::object preview(HttpClient& c, const json::object& filter, const char* route = "/dlq/replay") {
  auto res = c.post(route, json::object{{"filter", filter}, {"dry_run", true}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().as_object();
}

HttpResponse confirm(HttpClient& c, const json::object& filter, const json::object& preview,
                     json::object extra = {}) {
  extra["filter"] = filter;
  extra["confirm_token"] = preview.at("confirm_token");
  if (!extra.contains("delay_seconds")) extra["delay_seconds"] = 0;
  return c.post("/dlq/replay", extra);
}

json::object run_of(HttpClient& c, std::int64_t id) {
  auto res = c.get("/dlq/replays/" + std::to_string(id));
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().as_object();
}

// Polls the run until its status is `status` (or `seconds` pass); returns it.
json::object await_run(HttpClient& c, std::int64_t id, const std::string& status,
                       double seconds = 20) {
  auto start = Clock::now();
  json::object run;
  while (Clock::now() - start < std::chrono::duration<double>(seconds)) {
    run = run_of(c, id);
    if (str(run, "status") == status) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return run;
}

std::int64_t replay_count(HttpClient& c, const std::string& queue, std::int64_t id) {
  return c.get(message_path(queue, id)).json().at("replay_count").as_int64();
}

// Enqueues one message per entry of `death_order` into `queue` and makes them die in that order
// (indexes into the enqueue order), 10 s apart on the X-Now clock: the ids of the messages in
// the order they died. The i-th to die gets the highest priority but i, so that each claim takes
// it.
std::vector<std::int64_t> die_in_order(HttpClient& c, const std::string& queue,
                                       const std::vector<int>& death_order) {
  const auto n = static_cast<int>(death_order.size());
  std::vector<int> priority(death_order.size());
  for (int rank = 0; rank < n; ++rank) priority[static_cast<std::size_t>(death_order[rank])] = n - rank;
  std::vector<std::int64_t> ids;
  for (int i = 0; i < n; ++i) {
    auto m = enqueue(c, queue, "m" + std::to_string(i),
                     {{"max_retries", 1}, {"priority", priority[static_cast<std::size_t>(i)]}});
    ids.push_back(m.at("id").as_int64());
  }
  std::vector<std::int64_t> died;
  for (int rank = 0; rank < n; ++rank) {
    auto when = now_header(at_s(10.0 * rank));
    auto m = claim_one(c, queue, when);
    auto id = m.at("id").as_int64();
    BOOST_REQUIRE_EQUAL(id, ids[static_cast<std::size_t>(death_order[rank])]);
    auto failed = c.post(message_path(queue, id, "fail"), json::object{{"error", "boom"}}, when);
    BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
    died.push_back(id);
  }
  return died;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dead_letter_desk)

BOOST_AUTO_TEST_CASE(dlq_lists_dead_messages_across_queues_with_filters_and_paging) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  auto a = make_dead(c, "billing", 3, "charge", "timeout");
  auto b = make_dead(c, "emails", 2, "send", "transient");
  enqueue(c, "emails", "alive");  // not dead: never listed

  auto all = c.get("/dlq").json();
  BOOST_TEST(all.at("count").as_int64() == 5);
  BOOST_TEST(all.at("next_after_id").is_null());
  // Views for people are redacted.
  BOOST_TEST(str(all.at("messages").as_array()[0], "payload").find("\"***\"") != std::string::npos);

  // Pages of two, in id order, no message twice.
  std::vector<std::int64_t> seen;
  std::string query = "/dlq?limit=2";
  for (int page = 0; page < 3; ++page) {
    auto body = c.get(query).json();
    for (const auto& m : body.at("messages").as_array()) seen.push_back(m.at("id").as_int64());
    if (body.at("next_after_id").is_null()) break;
    query = "/dlq?limit=2&after_id=" + std::to_string(body.at("next_after_id").as_int64());
  }
  std::vector<std::int64_t> expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  BOOST_TEST(seen == expected);

  BOOST_TEST(c.get("/dlq?queue=emails").json().at("count").as_int64() == 2);
  BOOST_TEST(c.get("/dlq?job_type=charge").json().at("count").as_int64() == 3);
  BOOST_TEST(c.get("/dlq?error_class=transient").json().at("count").as_int64() == 2);
  BOOST_TEST(c.get("/dlq?dead_reason=retries_exhausted").json().at("count").as_int64() == 5);
  BOOST_TEST(c.get("/dlq?dead_reason=lease_expired").json().at("count").as_int64() == 0);
  BOOST_TEST(c.get("/dlq?since=2999-01-01T00:00:00Z").json().at("count").as_int64() == 0);
  BOOST_TEST(c.get("/dlq?until=2999-01-01T00:00:00Z&queue=billing").json().at("count").as_int64() == 3);
  auto bad = c.get("/dlq?queue=no%20way&error_class=meh&limit=500");
  BOOST_TEST(bad.status == 422);
  BOOST_TEST(error_fields(bad) == std::vector<std::string>({"queue", "error_class", "limit"}));
}

BOOST_AUTO_TEST_CASE(a_preview_changes_nothing_and_the_confirmation_replays_exactly_its_set) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  auto ids = make_dead(c, "q", 4, "email");
  auto other = make_dead(c, "other", 1, "email");
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter);
  BOOST_TEST(p.at("matched").as_int64() == 4);
  BOOST_TEST(p.at("by_job_type").as_object().at("email").as_int64() == 4);
  BOOST_TEST(p.at("sample").as_array().size() == 4u);
  BOOST_TEST(str(p.at("sample").as_array()[0], "payload").find("pw") == std::string::npos);
  BOOST_TEST(p.at("needs_acknowledgement").as_array().empty());
  BOOST_TEST(str(p, "confirm_token").size() == 32u);
  BOOST_TEST(p.at("expires_at").is_string());
  // Nothing changed.
  BOOST_TEST(c.get("/dlq?queue=q").json().at("count").as_int64() == 4);
  BOOST_TEST(c.get("/dlq/replays").json().at("count").as_int64() == 0);

  auto res = confirm(c, filter, p, {{"rate_per_second", 100}, {"reason", "fixed"}});
  BOOST_REQUIRE_EQUAL(res.status, 202);
  auto run_id = res.json().at("replay_id").as_int64();
  BOOST_TEST(res.header("location") == "/dlq/replays/" + std::to_string(run_id));
  BOOST_TEST(res.json().at("matched").as_int64() == 4);
  auto run = await_run(c, run_id, "done");
  BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
  BOOST_TEST(run.at("replayed").as_int64() == 4);
  BOOST_TEST(run.at("skipped").as_int64() == 0);
  BOOST_TEST(run.at("pending").as_int64() == 4);
  BOOST_TEST(str(run, "actor") == "anonymous");
  BOOST_TEST(str(run, "reason") == "fixed");
  for (auto id : ids) BOOST_TEST(replay_count(c, "q", id) == 1);
  BOOST_TEST(replay_count(c, "other", other[0]) == 0);  // outside the filter: untouched
  // The runs a message was part of: this one for each of its messages, none for the other.
  auto mine = c.get("/dlq/replays?message_id=" + std::to_string(ids[1])).json();
  BOOST_REQUIRE_EQUAL(mine.at("count").as_int64(), 1);
  BOOST_TEST(mine.at("replays").as_array()[0].at("replay_id").as_int64() == run_id);
  BOOST_TEST(c.get("/dlq/replays?message_id=" + std::to_string(other[0])).json().at("count").as_int64() == 0);
  BOOST_TEST(c.get("/dlq/replays?message_id=0").status == 422);
  // The token is used up.
  BOOST_TEST(confirm(c, filter, p).status == 409);

  // The history names the operator; the audit log has the confirmation.
  auto history = c.get(message_path("q", ids[0], "attempts")).json();
  BOOST_TEST(str(history.at("attempts").as_array().back(), "outcome") == "replayed");
  auto audit = c.get("/audit?action=batch_replay").json();
  BOOST_REQUIRE_EQUAL(audit.at("count").as_int64(), 1);
  BOOST_TEST(audit.at("entries").as_array()[0].at("details").at("replay_id").as_int64() == run_id);

  // Outcomes are read from the messages as they are now.
  auto m = claim_one(c, "q");
  c.post(message_path("q", m.at("id").as_int64(), "succeed"));
  run = run_of(c, run_id);
  BOOST_TEST(run.at("succeeded").as_int64() == 1);
  BOOST_TEST(run.at("pending").as_int64() == 3);
}

BOOST_AUTO_TEST_CASE(a_set_that_changed_since_the_preview_is_stale_and_nothing_starts) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  make_dead(c, "q", 2);
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter);
  make_dead(c, "q", 1);  // one more died after the preview
  auto res = confirm(c, filter, p);
  BOOST_TEST(res.status == 409);
  BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/preview-stale");
  BOOST_TEST(c.get("/dlq/replays").json().at("count").as_int64() == 0);
  BOOST_TEST(c.get("/dlq?queue=q").json().at("count").as_int64() == 3);

  // Another filter with the right token is stale too; an unknown token as well.
  auto p2 = preview(c, filter);
  BOOST_TEST(confirm(c, json::object{{"queue", "q"}, {"job_type", "email"}}, p2).status == 409);
  json::object fake{{"confirm_token", "0123456789abcdef0123456789abcdef"}};
  BOOST_TEST(confirm(c, filter, fake).status == 409);
  // The refused confirmations used nothing up: the right one still goes ahead.
  BOOST_TEST(confirm(c, filter, p2).status == 202);

  // Neither a preview nor a confirmation: 422 names confirm_token.
  auto neither = c.post("/dlq/replay", json::object{{"filter", filter}});
  BOOST_TEST(neither.status == 422);
  BOOST_TEST(error_fields(neither) == std::vector<std::string>({"confirm_token"}));
  auto bad = c.post("/dlq/replay", json::object{{"filter", json::object{{"error_class", "x"}}},
                                                {"dry_run", true}, {"rate_per_second", 0}});
  BOOST_TEST(error_fields(bad) == std::vector<std::string>({"filter.error_class", "rate_per_second"}));
}

// The token binds the previewed set, not an order: a replay that keeps the order (dead_at) is
// confirmed although the preview read the ids in id order, and replays in the order they died.
BOOST_AUTO_TEST_CASE(keep_order_confirms_the_previewed_set_and_replays_in_the_order_of_death) {
  HttpClient c(shared_dlqd().port());
  for (const std::vector<int>& order : {std::vector<int>{3, 2, 1, 0}, std::vector<int>{1, 3, 0, 2}}) {
    BOOST_TEST_CONTEXT("death order " << order[0] << order[1] << order[2] << order[3]) {
      std::string kept = fresh_queue("keep");
      auto died = die_in_order(c, kept, order);
      json::object filter{{"queue", kept}};
      auto p = preview(c, filter);
      auto res = confirm(c, filter, p, {{"keep_order", true}, {"rate_per_second", 2}});
      BOOST_REQUIRE_EQUAL(res.status, 202);
      auto run = await_run(c, res.json().at("replay_id").as_int64(), "done");
      BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
      BOOST_TEST(run.at("replayed").as_int64() == 4);
      BOOST_TEST(run.at("keep_order").as_bool());
      // Paced at 2/s, each replay is its own step: updated_at rises in the order of death.
      std::vector<std::string> replayed_at;
      for (auto id : died) replayed_at.push_back(str(c.get(message_path(kept, id)).json(), "updated_at"));
      for (std::size_t i = 1; i < replayed_at.size(); ++i) {
        BOOST_TEST(replayed_at[i - 1] < replayed_at[i], "replay " << i << " came before replay " << i - 1);
      }

      std::string plain = fresh_queue("idorder");
      die_in_order(c, plain, order);
      json::object plain_filter{{"queue", plain}};
      auto p2 = preview(c, plain_filter);
      BOOST_TEST(confirm(c, plain_filter, p2, {{"rate_per_second", 100}}).status == 202);

      // One death more after the preview is another set, whatever the order asked.
      std::string grown = fresh_queue("grown");
      die_in_order(c, grown, order);
      json::object grown_filter{{"queue", grown}};
      auto p3 = preview(c, grown_filter);
      make_dead(c, grown, 1);
      for (bool keep_order : {true, false}) {
        auto stale = confirm(c, grown_filter, p3, {{"keep_order", keep_order}});
        BOOST_TEST(stale.status == 409);
        BOOST_TEST(str(stale.json(), "type") == "https://dlq.dev/problems/preview-stale");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_expired_preview_is_stale) {
  // X-Now moves the preview's clock (the shared server allows it).
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("expire");
  make_dead(c, q, 1);
  json::object filter{{"queue", q}};
  auto p = c.post("/dlq/replay", json::object{{"filter", filter}, {"dry_run", true}},
                  now_header(at_s(0))).json().as_object();
  json::object body{{"filter", filter}, {"confirm_token", p.at("confirm_token")}};
  auto late = c.post("/dlq/replay", body, now_header(at_s(601)));
  BOOST_TEST(late.status == 409);
  BOOST_TEST(str(late.json(), "type") == "https://dlq.dev/problems/preview-stale");
}

BOOST_AUTO_TEST_CASE(pacing_holds_the_rate) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  make_dead(c, "q", 20);
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter);
  auto start = Clock::now();
  auto res = confirm(c, filter, p, {{"rate_per_second", 10}});
  BOOST_REQUIRE_EQUAL(res.status, 202);
  auto run = await_run(c, res.json().at("replay_id").as_int64(), "done", 30);
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
  BOOST_TEST(run.at("replayed").as_int64() == 20);
  // 20 messages at 10/s: the first at once, the 20th 1.9 s later.
  BOOST_TEST(took >= 1.8, "took " << took << " s");
  BOOST_TEST(took < 15.0, "took " << took << " s");
}

// Fractions are written as people write them (A5): 0.5 in the run, the list and the audit entry,
// not Boost.JSON's 5E-1.
BOOST_AUTO_TEST_CASE(fractions_are_plain_decimals) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("half");
  make_dead(c, q, 1);
  json::object filter{{"queue", q}};
  auto p = preview(c, filter);
  auto res = confirm(c, filter, p, {{"rate_per_second", 0.5}, {"delay_seconds", 3600}});
  BOOST_REQUIRE_EQUAL(res.status, 202);
  auto id = std::to_string(res.json().at("replay_id").as_int64());
  BOOST_TEST(c.get("/dlq/replays/" + id).body.find(R"("rate_per_second":0.5)") != std::string::npos);
  BOOST_TEST(c.get("/audit?action=batch_replay&limit=5").body.find(R"("rate_per_second":0.5)") !=
             std::string::npos);
  BOOST_TEST(c.get("/dlq/replays/" + id).body.find("E-1") == std::string::npos);
  BOOST_REQUIRE_EQUAL(c.post("/dlq/replays/" + id + "/cancel", json::object{}).status, 200);
}

BOOST_AUTO_TEST_CASE(a_message_that_dies_again_during_its_run_is_not_replayed_twice) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  auto ids = make_dead(c, "q", 5);
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter);
  auto res = confirm(c, filter, p, {{"rate_per_second", 2}});
  auto run_id = res.json().at("replay_id").as_int64();
  // Fail every message the run hands back, as a still-broken worker would.
  auto start = Clock::now();
  int failed = 0;
  while (Clock::now() - start < std::chrono::seconds(20)) {
    auto claimed = claim(c, "q", {{"wait_seconds", 1}}).json();
    if (claimed.at("claimed").as_bool()) {
      auto id = claimed.at("message").at("id").as_int64();
      c.post(message_path("q", id, "fail"), json::object{{"error", "still broken"}});
      ++failed;
    }
    if (str(run_of(c, run_id), "status") == "done" && !claimed.at("claimed").as_bool()) break;
  }
  auto run = run_of(c, run_id);
  BOOST_TEST(str(run, "status") == "done");
  BOOST_TEST(failed == 5);
  BOOST_TEST(run.at("replayed").as_int64() == 5);
  BOOST_TEST(run.at("dead_again").as_int64() == 5);
  for (auto id : ids) BOOST_TEST(replay_count(c, "q", id) == 1);  // never picked up again
}

BOOST_AUTO_TEST_CASE(pause_resume_and_cancel) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  make_dead(c, "q", 12);
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter);
  auto run_id = confirm(c, filter, p, {{"rate_per_second", 5}}).json().at("replay_id").as_int64();
  std::string base = "/dlq/replays/" + std::to_string(run_id);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto paused = c.post(base + "/pause");
  BOOST_REQUIRE_EQUAL(paused.status, 200);
  BOOST_TEST(str(paused.json(), "status") == "paused");
  auto at_pause = run_of(c, run_id).at("replayed").as_int64();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  BOOST_TEST(run_of(c, run_id).at("replayed").as_int64() == at_pause);  // nothing while paused
  BOOST_TEST(c.post(base + "/pause").status == 409);                    // already paused

  BOOST_TEST(str(c.post(base + "/resume").json(), "status") == "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto after_resume = run_of(c, run_id).at("replayed").as_int64();
  BOOST_TEST(after_resume > at_pause);
  BOOST_TEST(after_resume < 12);

  auto cancelled = c.post(base + "/cancel");
  BOOST_TEST(str(cancelled.json(), "status") == "cancelled");
  auto at_cancel = run_of(c, run_id).at("replayed").as_int64();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  BOOST_TEST(run_of(c, run_id).at("replayed").as_int64() == at_cancel);
  BOOST_TEST(c.post(base + "/resume").status == 409);
  BOOST_TEST(c.post("/dlq/replays/999999/pause").status == 404);
  BOOST_TEST(c.get("/dlq/replays/nope").status == 404);

  std::vector<std::string> actions;
  auto audit = c.get("/audit").json();  // a range-for over a member of a temporary would dangle
  for (const auto& e : audit.at("entries").as_array()) actions.push_back(str(e, "action"));
  BOOST_TEST(actions == std::vector<std::string>({"batch_replay_cancel", "batch_replay_resume",
                                                  "batch_replay_pause", "batch_replay"}));
}

BOOST_AUTO_TEST_CASE(a_run_survives_kill_9_and_replays_each_message_once) {
  TempDir dir;
  std::string db = fresh_database_url(dir.path().string());
  std::vector<std::int64_t> ids;
  std::int64_t run_id = 0;
  {
    DlqdProcess node{DlqdOptions("{}", db)};
    HttpClient c(node.port());
    ids = make_dead(c, "q", 30);
    json::object filter{{"queue", "q"}};
    auto p = preview(c, filter);
    run_id = confirm(c, filter, p, {{"rate_per_second", 20}}).json().at("replay_id").as_int64();
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    node.kill9();
  }
  DlqdProcess again{DlqdOptions("{}", db)};
  HttpClient c(again.port());
  auto run = await_run(c, run_id, "done", 30);
  BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
  BOOST_TEST(run.at("replayed").as_int64() == 30);
  BOOST_TEST(run.at("skipped").as_int64() == 0);
  for (auto id : ids) BOOST_TEST(replay_count(c, "q", id) == 1);
}

BOOST_AUTO_TEST_CASE(non_idempotent_job_types_need_an_acknowledgement) {
  DlqdProcess node{DlqdOptions(
      R"({"job_types": {"charge_card": {"idempotent": false, "replay_rate_per_second": 4}}})")};
  HttpClient c(node.port());
  make_dead(c, "q", 2, "charge_card");
  make_dead(c, "q", 1, "email");
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter);
  BOOST_TEST(p.at("needs_acknowledgement").as_array() == json::array({"charge_card"}));
  auto refused = confirm(c, filter, p, {{"rate_per_second", 50}});
  BOOST_TEST(refused.status == 422);
  BOOST_TEST(error_fields(refused) == std::vector<std::string>({"acknowledge_side_effects"}));
  auto ok = confirm(c, filter, p, {{"rate_per_second", 50}, {"acknowledge_side_effects", true}});
  BOOST_REQUIRE_EQUAL(ok.status, 202);
  // The job type's replay_rate_per_second caps the requested rate.
  auto run = run_of(c, ok.json().at("replay_id").as_int64());
  BOOST_TEST(run.at("rate_per_second").as_int64() == 4);
}

BOOST_AUTO_TEST_CASE(batch_dismiss_in_two_steps) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  auto ids = make_dead(c, "q", 3);
  make_dead(c, "keep", 1);
  json::object filter{{"queue", "q"}};
  auto p = preview(c, filter, "/dlq/dismiss");
  BOOST_TEST(p.at("matched").as_int64() == 3);
  BOOST_TEST(c.get("/dlq?queue=q").json().at("count").as_int64() == 3);  // nothing yet
  auto res = c.post("/dlq/dismiss", json::object{{"filter", filter},
                                                 {"confirm_token", p.at("confirm_token")},
                                                 {"reason", "won't fix"}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  BOOST_TEST(res.json().at("dismissed").as_int64() == 3);
  for (auto id : ids) BOOST_TEST(str(c.get(message_path("q", id)).json(), "status") == "dismissed");
  BOOST_TEST(c.get("/dlq").json().at("count").as_int64() == 1);
  auto audit = c.get("/audit?action=dismiss").json();
  BOOST_REQUIRE_EQUAL(audit.at("count").as_int64(), 1);
  BOOST_TEST(audit.at("entries").as_array()[0].at("message_ids").as_array().size() == 3u);
  BOOST_TEST(str(audit.at("entries").as_array()[0], "reason") == "won't fix");
  // A dismiss token cannot confirm a replay.
  auto p2 = preview(c, json::object{{"queue", "keep"}}, "/dlq/dismiss");
  BOOST_TEST(confirm(c, json::object{{"queue", "keep"}}, p2).status == 409);
}

BOOST_AUTO_TEST_CASE(two_nodes_a_preview_from_one_is_confirmed_on_the_other_and_a_new_leader_finishes_the_run,
                     *boost::unit_test::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_desk_nodes");
  const std::string config = R"({"database": {"leader_takeover_seconds": 2}})";
  DlqdProcess a{DlqdOptions(config, db)};
  DlqdProcess b{DlqdOptions(config, db)};
  HttpClient ca(a.port()), cb(b.port());
  auto ids = make_dead(ca, "q", 30);
  json::object filter{{"queue", "q"}};
  auto p = preview(ca, filter);
  auto res = confirm(cb, filter, p, {{"rate_per_second", 10}});  // the other node
  BOOST_REQUIRE_EQUAL(res.status, 202);
  auto run_id = res.json().at("replay_id").as_int64();

  auto leads = [](unsigned short port) {
    auto body = HttpClient(port).get("/metrics").body;
    return body.find("\ndlq_leader 1\n") != std::string::npos;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // a few replayed by the leader
  BOOST_REQUIRE(leads(a.port()) != leads(b.port()));
  DlqdProcess& leader = leads(a.port()) ? a : b;
  HttpClient& survivor = leads(a.port()) ? cb : ca;
  leader.kill9();
  auto run = await_run(survivor, run_id, "done", 30);
  BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
  BOOST_TEST(run.at("replayed").as_int64() == 30);
  for (auto id : ids) BOOST_TEST(replay_count(survivor, "q", id) == 1);
}

BOOST_AUTO_TEST_SUITE_END()

// Incidents over real HTTP, on both databases: GET /dlq/incidents's entries (members in order,
// counts per queue, deaths per hour, samples), its two sorts, filters and limit=2 paging with a
// cursor bound to its sort, each bad parameter a 422; GET /dlq/incidents/{fingerprint} and its
// 404s; `fingerprint` as a filter of GET /dlq and of batch previews (a death after the preview
// makes the confirmation stale). Each test uses a job type of its own: its incidents are its own.
// Two tests run a dlqd of their own: kill -9 in the middle of an incident's replay run, and the
// backfill of dead messages stored without fingerprints.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "integration/server_fixture.hpp"
#include "support/pg_admin.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace incidents_it {

// Enqueues one message of `job_type` into `queue` (max_retries 1), claims and fails it with
// `error` at `when` (X-Now; empty: now), with `stack` when not empty: dead. Returns its id.
std::int64_t die(HttpClient& c, const std::string& queue, const std::string& job_type,
                 const std::string& error, const std::string& when,
                 const std::string& error_class = "transient", const std::string& stack = "") {
  json::object body{{"payload", "{}"}, {"max_retries", 1}, {"job_type", job_type}};
  const Headers now = when.empty() ? Headers{} : now_header(when);
  auto res = c.post("/queues/" + queue + "/messages", body, now);
  BOOST_REQUIRE_EQUAL(res.status, 201);
  auto m = claim_one(c, queue, now);
  auto id = m.at("id").as_int64();
  json::object failure{{"error", error}, {"error_class", error_class}};
  if (!stack.empty()) failure["stack"] = stack;
  auto failed = c.post(message_path(queue, id, "fail"), failure, now);
  BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
  return id;
}

std::vector<std::string> keys_of(const json::object& o) {
  std::vector<std::string> out;
  for (const auto& kv : o) out.emplace_back(kv.key());
  return out;
}

std::vector<std::string> titles(const json::value& page) {
  std::vector<std::string> out;
  for (const auto& i : page.at("incidents").as_array()) out.push_back(str(i, "title"));
  return out;
}

// Follows next_cursor from `first` (a query without cursor) at limit=2: every title, in order.
std::vector<std::string> paged(HttpClient& c, const std::string& first, const Headers& now) {
  std::vector<std::string> out;
  std::string target = first + "&limit=2";
  for (int pages = 0; pages < 10; ++pages) {
    auto res = c.get(target, now);
    BOOST_REQUIRE_EQUAL(res.status, 200);
    auto page = res.json();
    BOOST_TEST(page.at("count").as_int64() <= 2);
    for (const auto& t : titles(page)) out.push_back(t);
    if (page.at("next_cursor").is_null()) return out;
    target = first + "&limit=2&cursor=" + std::string(page.at("next_cursor").as_string());
  }
  BOOST_FAIL("paging did not end");
  return out;
}

// Runs `sql` on the database at `url` while no dlqd has it open (SQLite through the sqlite3
// program).
void exec_sql(const std::string& url, const std::string& sql) {
  if (url.rfind("sqlite:", 0) == 0) {
    auto r = run_program("/usr/bin/sqlite3", {url.substr(7), sql});
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  } else {
    pg_exec(url, sql);
  }
}

// Polls GET /dlq/replays/{id} until the run is done (30 s at most); the last answer.
json::object await_done(HttpClient& c, std::int64_t run_id) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  json::object run;
  while (std::chrono::steady_clock::now() < end) {
    run = c.get("/dlq/replays/" + std::to_string(run_id)).json().as_object();
    if (str(run, "status") == "done") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return run;
}

// A restarted node leads once the record of the one before is 4 s old (long enough to look at
// what the killed node left before the run goes on).
const char* const kQuickLeader = R"({"database": {"leader_takeover_seconds": 4}})";
const char* const kClockOverride = R"({"testing": {"allow_clock_override": true}})";

}  // namespace incidents_it

using namespace incidents_it;

BOOST_AUTO_TEST_SUITE(incidents)

BOOST_AUTO_TEST_CASE(entries_sorts_filters_and_pages) {
  HttpClient c(shared_dlqd().port());
  const std::string jt = fresh_queue("jt"), q1 = fresh_queue("inc"), q2 = fresh_queue("inc");
  const auto now = now_header(at_s(3 * 3600 + 60));  // in hour 3 after t0
  // alpha: 3 dead over two queues and two hours; gamma: 2 (the newest); beta: 1; delta: 1 then
  // replayed (not listed).
  std::int64_t a1 = die(c, q1, jt, "alpha failed for order 17", at_s(100));
  std::int64_t a2 = die(c, q2, jt, "alpha failed for order 18", at_s(3 * 3600 + 10));
  std::int64_t a3 = die(c, q1, jt, "alpha failed for order 19", at_s(3 * 3600 + 20));
  die(c, q1, jt, "beta failed", at_s(200));
  die(c, q2, jt, "gamma timed out", at_s(3 * 3600 + 30), "timeout");
  std::int64_t g2 = die(c, q2, jt, "gamma timed out", at_s(3 * 3600 + 40), "timeout");
  std::int64_t d1 = die(c, q1, jt, "delta failed", at_s(300));
  BOOST_REQUIRE_EQUAL(c.post(message_path(q1, d1, "replay"), json::object{}, now).status, 200);

  auto res = c.get("/dlq/incidents?job_type=" + jt, now);
  BOOST_REQUIRE_EQUAL(res.status, 200);
  auto page = res.json().as_object();
  BOOST_TEST((keys_of(page) == std::vector<std::string>{"incidents", "count", "next_cursor"}));
  BOOST_TEST(page.at("count").as_int64() == 3);
  BOOST_TEST(page.at("next_cursor").is_null());
  const auto names = titles(page);
  BOOST_REQUIRE_EQUAL(names.size(), 3u);
  BOOST_TEST(names[0].starts_with("alpha"));  // dead, most first
  BOOST_TEST(names[1].starts_with("gamma"));
  BOOST_TEST(names[2].starts_with("beta"));

  const auto& alpha = page.at("incidents").as_array().at(0).as_object();
  BOOST_TEST((keys_of(alpha) ==
              std::vector<std::string>{"fingerprint", "title", "error_class", "job_types", "queues",
                                       "dead", "first_dead_at", "last_dead_at", "per_hour",
                                       "sample_ids", "dismissed", "replayed", "muted_until",
                                       "mute_reason"}));
  BOOST_TEST(alpha.at("muted_until").is_null());
  const std::string fp = str(alpha, "fingerprint");
  BOOST_TEST(fp.size() == 16u);
  BOOST_TEST(str(alpha, "title") == "alpha failed for order <n>");
  BOOST_TEST(str(alpha, "error_class") == "transient");
  BOOST_TEST(json::serialize(alpha.at("job_types")) == json::serialize(json::array{json::value(jt)}));
  BOOST_TEST(json::serialize(alpha.at("queues")) ==
             json::serialize(json::object{{q1, 2}, {q2, 1}}));
  BOOST_TEST(alpha.at("dead").as_int64() == 3);
  BOOST_TEST(str(alpha, "first_dead_at") == at_s(100));
  BOOST_TEST(str(alpha, "last_dead_at") == at_s(3 * 3600 + 20));
  const auto& per_hour = alpha.at("per_hour").as_array();
  BOOST_REQUIRE_EQUAL(per_hour.size(), 48u);
  BOOST_TEST(per_hour.at(47).as_int64() == 2);  // this hour
  BOOST_TEST(per_hour.at(44).as_int64() == 1);  // three hours ago
  BOOST_TEST(json::serialize(alpha.at("sample_ids")) == json::serialize(json::array{a3, a2, a1}));
  BOOST_TEST(alpha.at("dismissed").as_int64() == 0);
  BOOST_TEST(alpha.at("replayed").as_int64() == 0);

  // The entry alone is the same object.
  auto one = c.get("/dlq/incidents/" + fp, now);
  BOOST_REQUIRE_EQUAL(one.status, 200);
  BOOST_TEST(json::serialize(one.json()) == json::serialize(alpha));

  // last_dead_at: newest first.
  auto newest = titles(c.get("/dlq/incidents?sort=last_dead_at&job_type=" + jt, now).json());
  BOOST_REQUIRE_EQUAL(newest.size(), 3u);
  BOOST_TEST(newest[0].starts_with("gamma"));
  BOOST_TEST(newest[1].starts_with("alpha"));
  BOOST_TEST(newest[2].starts_with("beta"));

  // limit=2 pages, each sort, to the same order.
  BOOST_TEST(paged(c, "/dlq/incidents?job_type=" + jt, now) == names);
  BOOST_TEST(paged(c, "/dlq/incidents?sort=last_dead_at&job_type=" + jt, now) == newest);
  // A cursor of one sort is no cursor of the other.
  auto first = c.get("/dlq/incidents?limit=1&job_type=" + jt, now).json();
  const std::string cursor(first.at("next_cursor").as_string());
  auto crossed = c.get("/dlq/incidents?sort=last_dead_at&cursor=" + cursor + "&job_type=" + jt, now);
  BOOST_TEST(crossed.status == 422);
  BOOST_TEST((error_fields(crossed) == std::vector<std::string>{"cursor"}));

  // Filters: a queue among theirs (members stay whole), error class, a window of dead_at.
  auto in_q2 = c.get("/dlq/incidents?queue=" + q2 + "&job_type=" + jt, now).json();
  BOOST_TEST((titles(in_q2) == std::vector<std::string>{names[0], names[1]}));
  BOOST_TEST(in_q2.at("incidents").at(0).at("dead").as_int64() == 3);
  auto timeouts = titles(c.get("/dlq/incidents?error_class=timeout&job_type=" + jt, now).json());
  BOOST_TEST((timeouts == std::vector<std::string>{names[1]}));
  auto early = titles(c.get("/dlq/incidents?job_type=" + jt + "&since=" + at_s(150) +
                                "&until=" + at_s(250), now).json());
  BOOST_TEST((early == std::vector<std::string>{names[2]}));
  auto late = titles(c.get("/dlq/incidents?job_type=" + jt + "&since=" + at_s(3 * 3600), now).json());
  BOOST_TEST((late == std::vector<std::string>{names[0], names[1]}));

  // GET /dlq?fingerprint=: the incident's dead messages.
  const std::string gamma_fp = str(page.at("incidents").at(1), "fingerprint");
  auto members = c.get("/dlq?fingerprint=" + gamma_fp).json();
  BOOST_TEST(members.at("count").as_int64() == 2);
  BOOST_TEST(members.at("messages").at(1).at("id").as_int64() == g2);

  // An incident whose messages all left is not found, like one never seen.
  const std::string beta_fp = str(page.at("incidents").at(2), "fingerprint");
  auto beta_ids = c.get("/dlq?fingerprint=" + beta_fp).json();
  BOOST_REQUIRE_EQUAL(beta_ids.at("count").as_int64(), 1);
  auto beta_id = beta_ids.at("messages").at(0).at("id").as_int64();
  BOOST_REQUIRE_EQUAL(c.post(message_path(q1, beta_id, "dismiss"), json::object{}, now).status, 200);
  for (const std::string& target : {"/dlq/incidents/" + beta_fp, std::string("/dlq/incidents/0123456789abcdef"),
                                   std::string("/dlq/incidents/0123456789ABCDEF"),
                                   std::string("/dlq/incidents/0123"), std::string("/dlq/incidents/x%20y")}) {
    auto missing = c.get(target, now);
    BOOST_TEST(missing.status == 404, target);
    BOOST_TEST(str(missing.json(), "type") == "https://dlq.dev/problems/incident-not-found", target);
  }
  auto after = c.get("/dlq/incidents?job_type=" + jt, now).json();
  BOOST_TEST(after.at("count").as_int64() == 2);
}

BOOST_AUTO_TEST_CASE(each_bad_parameter_is_a_422_naming_it) {
  HttpClient c(shared_dlqd().port());
  const std::pair<const char*, const char*> cases[] = {
      {"queue=bad%20name", "queue"},  {"queue=", "queue"},        {"job_type=", "job_type"},
      {"error_class=nope", "error_class"}, {"since=yesterday", "since"}, {"until=1", "until"},
      {"sort=newest", "sort"},        {"sort=", "sort"},          {"limit=0", "limit"},
      {"limit=101", "limit"},         {"limit=x", "limit"},       {"cursor=garbage", "cursor"},
      {"cursor=d.1.0123456789ABCDEF", "cursor"}, {"cursor=", "cursor"},
  };
  for (const auto& [query, field] : cases) {
    auto res = c.get(std::string("/dlq/incidents?") + query);
    BOOST_TEST(res.status == 422, query);
    BOOST_TEST((error_fields(res) == std::vector<std::string>{field}), query);
    BOOST_TEST(str(res.json().at("errors").at(0), "code") == "invalid", query);
  }
  // Every problem, in the documented order.
  auto all = c.get("/dlq/incidents?cursor=x&limit=0&sort=x&until=x&since=x&error_class=x&queue=%21");
  BOOST_TEST((error_fields(all) == std::vector<std::string>{"queue", "error_class", "since", "until",
                                                            "sort", "limit", "cursor"}));
  for (const char* bad : {"XYZ", "0123456789ABCDEF", "0123456789abcde", ""}) {
    auto res = c.get(std::string("/dlq?fingerprint=") + bad);
    BOOST_TEST(res.status == 422, bad);
    BOOST_TEST((error_fields(res) == std::vector<std::string>{"fingerprint"}), bad);
    BOOST_TEST(str(res.json().at("errors").at(0), "code") == "invalid", bad);
  }
  for (const char* route : {"/dlq/replay", "/dlq/dismiss"}) {
    auto res = c.post(route, json::object{{"filter", json::object{{"fingerprint", "nope"}}},
                                          {"dry_run", true}});
    BOOST_TEST(res.status == 422, route);
    BOOST_TEST((error_fields(res) == std::vector<std::string>{"filter.fingerprint"}), route);
    BOOST_TEST(str(res.json().at("errors").at(0), "code") == "invalid", route);
  }
}

// POST /dlq/incidents/{fingerprint}/mute: each refusal changes nothing and writes no audit entry;
// a mute shows on the entry and in the audit log; a time in the past un-mutes; an emptied
// incident can still be muted.
BOOST_AUTO_TEST_CASE(mute_and_unmute_an_incident) {
  HttpClient c(shared_dlqd().port());
  const std::string jt = fresh_queue("jt"), q = fresh_queue("mute");
  std::int64_t id = die(c, q, jt, "smtp relay refused the login", "", "auth");
  const std::string fp = str(c.get("/dlq/incidents?job_type=" + jt).json().at("incidents").at(0),
                             "fingerprint");
  const std::string mute = "/dlq/incidents/" + fp + "/mute";
  auto audited = [&] {
    auto page = c.get("/audit?action=incident_mute&limit=100").json();
    long long n = 0;
    for (const auto& e : page.at("entries").as_array()) {
      if (json::serialize(e.at("filter")) == json::serialize(json::object{{"fingerprint", fp}})) ++n;
    }
    return n;
  };
  const std::tuple<json::object, const char*, const char*> refused[] = {
      {json::object{}, "until", "required"},
      {json::object{{"until", "tomorrow"}}, "until", "invalid"},
      {json::object{{"until", 1893456000}}, "until", "invalid"},
      {json::object{{"until", "2099-01-01T00:00:00Z"}, {"reason", std::string(1025, 'r')}},
       "reason", "too_long"},
      {json::object{{"until", "2099-01-01T00:00:00Z"}, {"reason", 7}}, "reason", "invalid"},
  };
  for (const auto& [body, field, code] : refused) {
    auto res = c.post(mute, body);
    BOOST_TEST(res.status == 422, json::serialize(body));
    BOOST_TEST((error_fields(res) == std::vector<std::string>{field}), json::serialize(body));
    BOOST_TEST(str(res.json().at("errors").at(0), "code") == code, json::serialize(body));
  }
  BOOST_TEST(c.request("POST", mute, "{not json").status == 400);
  for (const char* unknown : {"0000000000000000", "XYZ"}) {
    auto res = c.post(std::string("/dlq/incidents/") + unknown + "/mute",
                      json::object{{"until", "2099-01-01T00:00:00Z"}});
    BOOST_TEST(res.status == 404, unknown);
    BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/incident-not-found", unknown);
  }
  BOOST_TEST(audited() == 0);
  BOOST_TEST(c.get("/dlq/incidents/" + fp).json().at("muted_until").is_null());

  auto muted = c.post(mute, json::object{{"until", "2099-01-01T00:00:00Z"}, {"reason", "relay fix"}});
  BOOST_REQUIRE_EQUAL(muted.status, 200);
  BOOST_TEST(json::serialize(muted.json()) ==
             json::serialize(json::object{{"fingerprint", fp},
                                          {"muted_until", "2099-01-01T00:00:00.000Z"},
                                          {"mute_reason", "relay fix"}}));
  auto entry = c.get("/dlq/incidents/" + fp).json();
  BOOST_TEST(str(entry, "muted_until") == "2099-01-01T00:00:00.000Z");
  BOOST_TEST(str(entry, "mute_reason") == "relay fix");
  auto log = c.get("/audit?action=incident_mute&limit=1").json().at("entries").at(0);
  BOOST_TEST(json::serialize(log.at("filter")) == json::serialize(json::object{{"fingerprint", fp}}));
  BOOST_TEST(str(log, "reason") == "relay fix");
  BOOST_TEST(json::serialize(log.at("details")) ==
             json::serialize(json::object{{"until", "2099-01-01T00:00:00.000Z"},
                                          {"previous_until", nullptr}}));
  // Emptied (dismissed), then un-muted with a time in the past.
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, id, "dismiss"), json::object{}).status, 200);
  BOOST_TEST(c.get("/dlq/incidents/" + fp).status == 404);
  auto unmuted = c.post(mute, json::object{{"until", "2000-01-01T00:00:00Z"}, {"reason", "fixed"}});
  BOOST_REQUIRE_EQUAL(unmuted.status, 200);
  BOOST_TEST(unmuted.json().at("muted_until").is_null());
  BOOST_TEST(unmuted.json().at("mute_reason").is_null());
  BOOST_TEST(audited() == 2);
  auto last = c.get("/audit?action=incident_mute&limit=1").json().at("entries").at(0);
  BOOST_TEST(str(last, "reason") == "fixed");
  BOOST_TEST(json::serialize(last.at("details")) ==
             json::serialize(json::object{{"until", nullptr},
                                          {"previous_until", "2099-01-01T00:00:00.000Z"}}));
  die(c, q, jt, "smtp relay refused the login", "", "auth");
  BOOST_TEST(c.get("/dlq/incidents/" + fp).json().at("muted_until").is_null());
}

// One incident replayed and dismissed through its fingerprint: the preview counts only its dead
// messages; a death after the preview makes the confirmation stale.
BOOST_AUTO_TEST_CASE(batch_actions_by_fingerprint) {
  HttpClient c(shared_dlqd().port());
  const std::string jt = fresh_queue("jt"), q = fresh_queue("inc");
  die(c, q, jt, "epsilon failed", at_s(10));
  die(c, q, jt, "epsilon failed", at_s(20));
  die(c, q, jt, "zeta failed", at_s(30));
  auto list = c.get("/dlq/incidents?job_type=" + jt).json();
  BOOST_REQUIRE_EQUAL(list.at("count").as_int64(), 2);
  const std::string fp = str(list.at("incidents").at(0), "fingerprint");
  json::object filter{{"fingerprint", fp}};

  std::int64_t dead = 2;
  for (const char* route : {"/dlq/replay", "/dlq/dismiss"}) {
    auto p = c.post(route, json::object{{"filter", filter}, {"dry_run", true}}).json().as_object();
    BOOST_TEST(p.at("matched").as_int64() == dead, route);
    die(c, q, jt, "epsilon failed", at_s(40));  // one more died after the preview
    ++dead;
    json::object body{{"filter", filter}, {"confirm_token", p.at("confirm_token")}};
    if (std::string(route) == "/dlq/replay") body["delay_seconds"] = 0;
    auto stale = c.post(route, body);
    BOOST_TEST(stale.status == 409, route);
    BOOST_TEST(str(stale.json(), "type") == "https://dlq.dev/problems/preview-stale", route);
  }
  // The dismissal, confirmed: the incident leaves the list, its other one stays.
  auto p = c.post("/dlq/dismiss", json::object{{"filter", filter}, {"dry_run", true}}).json();
  BOOST_TEST(p.at("matched").as_int64() == 4);
  auto done = c.post("/dlq/dismiss", json::object{{"filter", filter},
                                                  {"confirm_token", p.at("confirm_token")}});
  BOOST_REQUIRE_EQUAL(done.status, 200);
  BOOST_TEST(done.json().at("dismissed").as_int64() == 4);
  auto after = c.get("/dlq/incidents?job_type=" + jt).json();
  BOOST_REQUIRE_EQUAL(after.at("count").as_int64(), 1);
  BOOST_TEST(str(after.at("incidents").at(0), "title") == "zeta failed");
  BOOST_TEST(c.get("/dlq/incidents/" + fp).status == 404);
}

// kill -9 while a run replays one incident: after the restart the run finishes, each message
// replayed once, and the incident's counts are what its messages say: none dead, then all 30
// again when each fails the same way; the other incident of the queue keeps its 4.
BOOST_AUTO_TEST_CASE(a_kill_9_mid_incident_replay_leaves_the_counts_exact) {
  TempDir dir;
  const std::string db = fresh_database_url(dir.path().string());
  const std::string q = "mail", jt = "send_mail";
  std::string fp, other_fp;
  std::int64_t run_id = 0, replayed_before_kill = 0;
  {
    DlqdProcess node{DlqdOptions(kQuickLeader, db)};
    HttpClient c(node.port());
    for (int i = 0; i < 30; ++i) die(c, q, jt, "relay timed out after " + std::to_string(i) + " s", "");
    for (int i = 0; i < 4; ++i) die(c, q, jt, "template missing", "", "invalid_input");
    auto list = c.get("/dlq/incidents").json();
    BOOST_REQUIRE_EQUAL(list.at("count").as_int64(), 2);
    fp = str(list.at("incidents").at(0), "fingerprint");
    other_fp = str(list.at("incidents").at(1), "fingerprint");
    json::object filter{{"fingerprint", fp}};
    auto p = c.post("/dlq/replay", json::object{{"filter", filter}, {"dry_run", true}}).json();
    BOOST_REQUIRE_EQUAL(p.at("matched").as_int64(), 30);
    auto res = c.post("/dlq/replay", json::object{{"filter", filter},
                                                  {"confirm_token", p.at("confirm_token")},
                                                  {"delay_seconds", 0},
                                                  {"rate_per_second", 10}});
    BOOST_REQUIRE_EQUAL(res.status, 202);
    run_id = res.json().at("replay_id").as_int64();
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    node.kill9();
  }
  DlqdProcess again{DlqdOptions(kQuickLeader, db)};
  HttpClient c(again.port());
  {
    // What the killed node left (the run may go on meanwhile: one read, one moment).
    auto mid = c.get("/dlq/incidents/" + fp).json();
    replayed_before_kill = mid.at("replayed").as_int64();
    BOOST_TEST(replayed_before_kill > 0);
    BOOST_TEST(replayed_before_kill < 30);
    BOOST_TEST(mid.at("dead").as_int64() == 30 - replayed_before_kill);
  }
  auto run = await_done(c, run_id);
  BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
  BOOST_TEST(run.at("replayed").as_int64() == 30);
  BOOST_TEST(c.get("/dlq/incidents/" + fp).status == 404);  // none dead
  auto other = c.get("/dlq/incidents/" + other_fp).json();
  BOOST_TEST(other.at("dead").as_int64() == 4);
  BOOST_TEST(other.at("queues") == (json::object{{q, 4}}));

  for (int i = 0; i < 30; ++i) {
    auto m = claim_one(c, q);
    BOOST_TEST(m.at("replay_count").as_int64() == 1);
    auto id = m.at("id").as_int64();
    auto failed = c.post(message_path(q, id, "fail"),
                         json::object{{"error", "relay timed out after 99 s"}, {"error_class", "transient"}});
    BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
  }
  auto back = c.get("/dlq/incidents/" + fp).json();
  BOOST_TEST(back.at("dead").as_int64() == 30);
  BOOST_TEST(back.at("replayed").as_int64() == 30);
  BOOST_TEST(back.at("queues") == (json::object{{q, 30}}));
  BOOST_TEST(c.get("/dlq?limit=100&fingerprint=" + fp).json().at("count").as_int64() == 30);
}

// Dead messages stored before fingerprints (a database of migration 011 that migrated: NULL
// fingerprints, no incidents) come back at start-up as the incidents their failures made: the
// same fingerprints, titles, counts per queue and per hour, samples, from last_error, the error
// class, the job type and the last failed attempt's stack.
BOOST_AUTO_TEST_CASE(a_restart_backfills_dead_messages_stored_without_fingerprints) {
  TempDir dir;
  const std::string db = fresh_database_url(dir.path().string());
  const std::string jt = "bill";
  const auto now = now_header(at_s(3 * 3600 + 60));
  json::value before;
  {
    DlqdProcess node{DlqdOptions(kClockOverride, db)};
    HttpClient c(node.port());
    die(c, "b1", jt, "card 4242 declined for order 17", at_s(100));
    die(c, "b2", jt, "card 4343 declined for order 18", at_s(3 * 3600 + 10));
    const std::string stack = "Error: gateway\n    at charge (/srv/pay/card.js:41:9)\n    at run (/srv/w.js:3:1)";
    die(c, "b1", jt, "gateway answered 502", at_s(200), "transient", stack);
    die(c, "b1", jt, "gateway answered 503", at_s(300), "transient", stack);
    die(c, "b2", jt, "gateway answered 502", at_s(400), "transient", "Error: gateway\n    at other (/srv/pay/x.js:1:1)");
    before = c.get("/dlq/incidents?job_type=" + jt, now).json().at("incidents");
    BOOST_REQUIRE_EQUAL(before.as_array().size(), 3u);  // the cards, and two stacks apart
  }
  exec_sql(db, "UPDATE messages SET fingerprint = NULL, title = NULL; DELETE FROM incident_hours; "
               "DELETE FROM incident_queues; DELETE FROM incidents;");
  DlqdProcess again{DlqdOptions(
      R"({"testing": {"allow_clock_override": true}, "log": {"level": "info"}})", db)};
  HttpClient c(again.port());
  const std::string line = R"("event":"incident backfill at start-up","written":"5")";
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);  // logs are flushed
  while (again.log().find(line) == std::string::npos && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  BOOST_TEST(again.log().find(line) != std::string::npos, again.log());
  auto after = c.get("/dlq/incidents?job_type=" + jt, now).json().at("incidents");
  BOOST_TEST(after == before);
}

BOOST_AUTO_TEST_SUITE_END()

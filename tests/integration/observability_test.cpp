// Observability and housekeeping over real HTTP, on both databases: /metrics counts exactly what
// happened and passes promtool; queues past metrics.max_queue_labels fold into _other; the
// incidents' gauges count open incidents and fold those past metrics.max_incident_labels; retention
// deletes what aged past its window (dead ones from dead_at) with its history and an audit
// entry, and enqueues keep being answered during a large sweep; purge validates, works in
// batches and is audited.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "integration/server_fixture.hpp"
#include "model/time.hpp"

namespace json = boost::json;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

// The value of one sample (`series` with its labels, as written), or -1 when absent.
double sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

// promtool's verdict on a scrape: its output (empty when clean) and exit status.
std::pair<int, std::string> promtool(const std::string& scrape, const TempDir& dir) {
  std::string in = dir.file("scrape.txt");
  std::ofstream(in) << scrape;
  std::string command = "promtool check metrics < " + in + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run promtool");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int status = pclose(p);
  return {status, out};
}

// A time `seconds` before the real clock, as X-Now wants it (the sweep runs on the real clock).
std::string ago(double seconds) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch()).count();
  return dlq::format_rfc3339(now - static_cast<dlq::TimeMs>(seconds * 1000));
}

// Enqueues `n` messages (batches of 1000), claims and acks them all "at" `when`: succeeded.
void make_succeeded(HttpClient& c, const std::string& queue, int n, const std::string& when) {
  for (int done = 0; done < n; done += 1000) {
    json::array batch;
    for (int i = done; i < std::min(n, done + 1000); ++i) batch.push_back(json::object{{"payload", "m"}});
    BOOST_REQUIRE_EQUAL(c.post("/queues/" + queue + "/messages/batch", json::object{{"messages", batch}},
                               now_header(when)).status, 201);
  }
  int acked = 0;
  while (acked < n) {
    auto claimed = c.post("/queues/" + queue + "/claim",
                          json::object{{"max", 100}, {"visibility_timeout", 43200}}, now_header(when)).json();
    json::array items;
    for (const auto& m : claimed.at("messages").as_array()) {
      items.push_back(json::object{{"id", m.at("id")}, {"lease_id", m.at("lease_id")}});
    }
    BOOST_REQUIRE(!items.empty());
    acked += static_cast<int>(items.size());
    BOOST_REQUIRE_EQUAL(c.post("/queues/" + queue + "/ack", json::object{{"items", items}},
                               now_header(when)).status, 200);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(observability)

BOOST_AUTO_TEST_CASE(metrics_count_exactly_what_happened_and_pass_promtool) {
  DlqdProcess node{DlqdOptions(R"({"metrics": {"cache_seconds": 0}})")};
  HttpClient c(node.port());
  enqueue(c, "m1", "a");
  BOOST_REQUIRE_EQUAL(c.post("/queues/m1/messages/batch",
                             json::object{{"messages", json::array{json::object{{"payload", "b"}},
                                                                   json::object{{"payload", "c"}}}}}).status, 201);
  enqueue(c, "m2", "d");
  auto two = claim(c, "m1", {{"max", 2}}).json().at("messages").as_array();
  BOOST_REQUIRE_EQUAL(two.size(), 2u);
  auto first = two[0].at("id").as_int64(), second = two[1].at("id").as_int64();
  BOOST_REQUIRE_EQUAL(c.post(message_path("m1", first, "succeed")).status, 200);
  BOOST_REQUIRE_EQUAL(c.post(message_path("m1", second, "fail"),
                             json::object{{"error", "x"}, {"error_class", "timeout"}, {"retryable", false}}).status, 200);
  BOOST_REQUIRE_EQUAL(c.post(message_path("m1", second, "replay")).status, 200);
  auto again = claim_one(c, "m1");  // the oldest due: the replayed one
  BOOST_REQUIRE_EQUAL(again.at("id").as_int64(), second);
  BOOST_REQUIRE_EQUAL(c.post(message_path("m1", second, "succeed")).status, 200);
  BOOST_TEST(c.get("/nowhere").status == 404);

  auto scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, R"(dlq_enqueued_total{queue="m1"})") == 3);
  BOOST_TEST(sample(scrape, R"(dlq_enqueued_total{queue="m2"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_claimed_total{queue="m1"})") == 3);
  BOOST_TEST(sample(scrape, R"(dlq_succeeded_total{queue="m1"})") == 2);
  BOOST_TEST(sample(scrape, R"(dlq_failed_total{queue="m1",error_class="timeout"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_dead_lettered_total{queue="m1",reason="non_retryable"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_replayed_total{queue="m1",mode="single"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_replay_outcomes_total{queue="m1",outcome="succeeded"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_messages{queue="m1",status="succeeded"})") == 2);
  BOOST_TEST(sample(scrape, R"(dlq_messages{queue="m1",status="ready"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_messages{queue="m2",status="ready"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_http_requests_total{route="/queues/{queue}/messages",method="POST",status="201"})") == 2);
  BOOST_TEST(sample(scrape, R"(dlq_http_requests_total{route="/queues/{queue}/messages/{id}/succeed",method="POST",status="200"})") == 2);
  BOOST_TEST(sample(scrape, R"(dlq_http_requests_total{route="-",method="GET",status="404"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_http_request_duration_seconds_count{route="/queues/{queue}/claim"})") == 2);
  BOOST_TEST(sample(scrape, "dlq_leader") == 1);
  BOOST_TEST(sample(scrape, "dlq_store_commit_duration_seconds_count") > 0);
  // Where a write's time went: queued, its group's statements, the commit, the way back.
  for (const char* stage : {"dlq_store_write_wait_seconds_count",
                            "dlq_store_statements_duration_seconds_count",
                            "dlq_store_handback_seconds_count"}) {
    BOOST_TEST(sample(scrape, stage) > 0, stage);
  }
  BOOST_TEST(sample(scrape, "process_resident_memory_bytes") > 0);
  // The raw path of an unknown route never becomes a label.
  BOOST_TEST(scrape.find("/nowhere") == std::string::npos);

  TempDir dir;
  auto [status, out] = promtool(scrape, dir);
  BOOST_TEST(status == 0, out);
  BOOST_TEST(out.empty(), out);
}

BOOST_AUTO_TEST_CASE(queues_past_max_queue_labels_fold_into_other) {
  DlqdProcess node{DlqdOptions(R"({"metrics": {"max_queue_labels": 2, "cache_seconds": 0}})")};
  HttpClient c(node.port());
  for (const char* q : {"a", "b", "c", "d"}) enqueue(c, q, "x");
  enqueue(c, "d", "y");
  auto scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, R"(dlq_enqueued_total{queue="a"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_enqueued_total{queue="b"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_enqueued_total{queue="_other"})") == 3);
  BOOST_TEST(sample(scrape, R"(dlq_enqueued_total{queue="c"})") == -1);
  BOOST_TEST(sample(scrape, R"(dlq_messages{queue="_other",status="ready"})") == 3);
}

// dlq_incidents_open: +2 for two causes, +1 for a third, -1 when its one message is dismissed;
// dlq_incident_dead: the two largest by fingerprint (max_incident_labels 2), the third's under
// fingerprint="_other", and no _other once every open incident has a label.
BOOST_AUTO_TEST_CASE(incident_gauges_count_open_incidents_and_fold_the_smaller_ones) {
  DlqdProcess node{DlqdOptions(R"({"metrics": {"max_incident_labels": 2, "cache_seconds": 0}})")};
  HttpClient c(node.port());
  std::int64_t last = 0;
  auto die = [&](const std::string& error, int n) {
    for (int i = 0; i < n; ++i) {
      last = enqueue(c, "inc", "x", {{"max_retries", 1}}).at("id").as_int64();
      auto m = claim_one(c, "inc");
      auto failed = c.post(message_path("inc", m.at("id").as_int64(), "fail"),
                           json::object{{"error", error}});
      BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
    }
  };
  BOOST_TEST(sample(c.get("/metrics").body, "dlq_incidents_open") == 0);
  die("alpha failed", 3);
  die("beta failed", 2);
  auto scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, "dlq_incidents_open") == 2);
  BOOST_TEST(scrape.find("dlq_incident_dead{fingerprint=\"_other\"}") == std::string::npos);
  die("gamma failed", 1);
  auto list = c.get("/dlq/incidents").json().at("incidents");
  BOOST_REQUIRE_EQUAL(list.as_array().size(), 3u);
  auto fp = [&](int i) { return str(list.at(i), "fingerprint"); };
  scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, "dlq_incidents_open") == 3);
  BOOST_TEST(sample(scrape, "dlq_incident_dead{fingerprint=\"" + fp(0) + "\"}") == 3);
  BOOST_TEST(sample(scrape, "dlq_incident_dead{fingerprint=\"" + fp(1) + "\"}") == 2);
  BOOST_TEST(sample(scrape, "dlq_incident_dead{fingerprint=\"" + fp(2) + "\"}") == -1);
  BOOST_TEST(sample(scrape, "dlq_incident_dead{fingerprint=\"_other\"}") == 1);
  TempDir dir;
  auto [status, out] = promtool(scrape, dir);
  BOOST_TEST(status == 0, out);
  BOOST_TEST(out.empty(), out);

  BOOST_REQUIRE_EQUAL(c.post(message_path("inc", last, "dismiss"), json::object{}).status, 200);
  scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, "dlq_incidents_open") == 2);
  BOOST_TEST(sample(scrape, "dlq_incident_dead{fingerprint=\"_other\"}") == -1);
}

BOOST_AUTO_TEST_CASE(retention_deletes_what_aged_out_dead_ones_from_dead_at) {
  DlqdProcess node{DlqdOptions(R"({"testing": {"allow_clock_override": true},
      "retention": {"succeeded_seconds": 60, "dead_seconds": 60, "dismissed_seconds": 0,
                    "sweep_interval_seconds": 1},
      "queues": {"keep": {"retention": {"succeeded_seconds": 0}}}})")};
  HttpClient c(node.port());
  const std::string old_time = ago(300), fresh = ago(1);
  // Succeeded five minutes ago: past the window. Kept: a queue that keeps forever, and a fresh one.
  make_succeeded(c, "r", 1, old_time);
  make_succeeded(c, "keep", 1, old_time);
  make_succeeded(c, "r", 1, fresh);
  // Enqueued five minutes ago but dead only now: aged from dead_at, so it stays.
  auto late = enqueue(c, "r", "late", {{"max_retries", 1}}, now_header(old_time)).at("id").as_int64();
  // Dead five minutes ago: goes, with its history.
  auto early = enqueue(c, "r", "early", {{"max_retries", 1}}, now_header(old_time)).at("id").as_int64();
  for (int i = 0; i < 2; ++i) {  // claimed long ago; `early` fails then, `late` now
    auto m = c.post("/queues/r/claim", json::object{{"visibility_timeout", 43200}}, now_header(old_time)).json();
    auto got = m.at("message").at("id").as_int64();
    BOOST_REQUIRE(got == late || got == early);
    BOOST_REQUIRE_EQUAL(c.post(message_path("r", got, "fail"), json::object{{"error", "x"}},
                               now_header(got == early ? old_time : fresh)).status, 200);
  }
  auto start = Clock::now();
  bool swept = false;
  while (!swept && Clock::now() - start < std::chrono::seconds(15)) {
    auto stats = c.get("/queues/r/stats").json();
    swept = stats.at("succeeded").as_int64() == 1 && stats.at("dead").as_int64() == 1;
    if (!swept) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BOOST_REQUIRE(swept);
  BOOST_TEST(c.get(message_path("r", early)).status == 404);
  BOOST_TEST(c.get(message_path("r", early, "attempts")).status == 404);
  BOOST_TEST(str(c.get(message_path("r", late)).json(), "status") == "dead");
  BOOST_TEST(c.get("/queues/keep/stats").json().at("succeeded").as_int64() == 1);
  auto audit = c.get("/audit?action=retention_purge").json();
  BOOST_TEST(audit.at("count").as_int64() >= 2);  // one per status swept, at least
  auto scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, R"(dlq_retention_purged_total{queue="r",status="succeeded"})") == 1);
  BOOST_TEST(sample(scrape, R"(dlq_retention_purged_total{queue="r",status="dead"})") == 1);
}

BOOST_AUTO_TEST_CASE(enqueues_are_answered_during_a_sweep_of_50000_rows) {
  TempDir dir;
  std::string db = fresh_database_url(dir.path().string());
  {
    DlqdProcess seeding{DlqdOptions(R"({"testing": {"allow_clock_override": true},
        "retention": {"succeeded_seconds": 0}})", db)};
    HttpClient c(seeding.port());
    make_succeeded(c, "big", 50000, ago(3600));
  }
  DlqdProcess node{DlqdOptions(R"({"retention": {"succeeded_seconds": 60, "sweep_interval_seconds": 1}})", db)};
  HttpClient c(node.port());
  double worst = 0;
  int answered = 0;
  auto start = Clock::now();
  for (;;) {
    auto t = Clock::now();
    auto res = c.post("/queues/live/messages", json::object{{"payload", "during the sweep"}});
    worst = std::max(worst, std::chrono::duration<double>(Clock::now() - t).count());
    BOOST_REQUIRE_EQUAL(res.status, 201);
    ++answered;
    auto left = c.get("/queues/big/stats").json().at("succeeded").as_int64();
    if (left == 0 || Clock::now() - start > std::chrono::seconds(120)) break;
  }
  BOOST_TEST(c.get("/queues/big/stats").json().at("succeeded").as_int64() == 0);
  BOOST_TEST(answered > 1);
  BOOST_TEST(worst < 2.0, "slowest enqueue during the sweep: " << worst << " s");
  BOOST_TEST(c.get("/queues/live/stats").json().at("ready").as_int64() == answered);
}

BOOST_AUTO_TEST_CASE(purge_validates_deletes_in_batches_and_is_audited) {
  DlqdProcess node{DlqdOptions(R"({"testing": {"allow_clock_override": true}})")};
  HttpClient c(node.port());
  make_succeeded(c, "p", 2500, ago(60));
  enqueue(c, "p", "still pending");
  auto missing = c.request("DELETE", "/queues/p/messages");
  BOOST_TEST(missing.status == 422);
  BOOST_TEST(error_fields(missing) == std::vector<std::string>({"status"}));
  BOOST_TEST(c.request("DELETE", "/queues/p/messages?status=pending").status == 422);
  BOOST_TEST(c.request("DELETE", "/queues/p/messages?status=succeeded&before=nope").status == 422);
  // Nothing entered `succeeded` before an hour ago.
  auto none = c.request("DELETE", "/queues/p/messages?status=succeeded&before=" + ago(3600));
  BOOST_TEST(none.json().at("purged").as_int64() == 0);
  auto res = c.request("DELETE", "/queues/p/messages?status=succeeded");
  BOOST_REQUIRE_EQUAL(res.status, 200);
  BOOST_TEST(res.json().at("purged").as_int64() == 2500);
  auto stats = c.get("/queues/p/stats").json();
  BOOST_TEST(stats.at("succeeded").as_int64() == 0);
  BOOST_TEST(stats.at("ready").as_int64() == 1);
  auto audit = c.get("/audit?action=purge").json();
  BOOST_TEST(audit.at("count").as_int64() == 10);  // batches of 250
  BOOST_TEST(str(audit.at("entries").as_array()[0], "actor") == "anonymous");
  BOOST_TEST(str(audit.at("entries").as_array()[0].at("filter"), "status") == "succeeded");
}

BOOST_AUTO_TEST_SUITE_END()

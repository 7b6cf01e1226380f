// Replay you can trust over time, over real HTTP on both databases: max_replays refuses a single
// replay at the limit (dry run too) unless forced, a batch preview counts and its run skips such
// messages, the limits' precedence; a message's payload versions after edited replays, paged;
// and the lineage (life, replay_id) on history entries after single and batch replays.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {
namespace lin {

using SteadyClock = std::chrono::steady_clock;

const std::string kReplayLimit = "https://dlq.dev/problems/replay-limit";

// Claims the message (alone in its queue) and fails it once: max_retries 1 makes it dead.
void die(HttpClient& c, const std::string& queue, std::int64_t id) {
  auto m = claim_one(c, queue);
  BOOST_REQUIRE_EQUAL(m.at("id").as_int64(), id);
  auto failed = c.post(message_path(queue, id, "fail"), json::object{{"error", "boom"}});
  BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
}

// A dead message in `queue`, of `job_type` when given.
std::int64_t dead_message(HttpClient& c, const std::string& queue,
                          const std::string& payload = R"({"n":1})",
                          std::optional<std::string> job_type = std::nullopt) {
  json::object extra{{"max_retries", 1}};
  if (job_type) extra["job_type"] = *job_type;
  auto id = enqueue(c, queue, payload, extra).at("id").as_int64();
  die(c, queue, id);
  return id;
}

HttpResponse replay(HttpClient& c, const std::string& queue, std::int64_t id,
                    json::object body = {}) {
  return c.post(message_path(queue, id, "replay"), body);
}

json::object message(HttpClient& c, const std::string& queue, std::int64_t id) {
  return c.get(message_path(queue, id)).json().as_object();
}

// How many times a fresh dead message of `queue` and `job_type` can be replayed before the
// limit refuses it (`cap` when it never does).
int replays_allowed(HttpClient& c, const std::string& queue, std::optional<std::string> job_type,
                    int cap = 4) {
  auto id = dead_message(c, queue, R"({"n":1})", std::move(job_type));
  for (int n = 0; n < cap; ++n) {
    auto res = replay(c, queue, id);
    if (res.status == 409) {
      BOOST_TEST(str(res.json(), "type") == kReplayLimit);
      return n;
    }
    BOOST_REQUIRE_EQUAL(res.status, 200);
    die(c, queue, id);
  }
  return cap;
}

std::vector<std::string> keys(const json::object& o) {
  std::vector<std::string> out;
  for (const auto& kv : o) out.emplace_back(kv.key());
  return out;
}

// Previews a batch replay of `filter` and confirms it to start at once, fast.
json::object batch_replay(HttpClient& c, const json::object& filter, json::object* preview_out) {
  auto preview = c.post("/dlq/replay", json::object{{"filter", filter}, {"dry_run", true}});
  BOOST_REQUIRE_EQUAL(preview.status, 200);
  if (preview_out) *preview_out = preview.json().as_object();
  auto confirmed = c.post("/dlq/replay", json::object{{"filter", filter},
                                                      {"confirm_token", preview.json().at("confirm_token")},
                                                      {"delay_seconds", 0},
                                                      {"rate_per_second", 1000}});
  BOOST_REQUIRE_EQUAL(confirmed.status, 202);
  auto id = confirmed.json().at("replay_id").as_int64();
  auto start = SteadyClock::now();
  json::object run;
  while (SteadyClock::now() - start < std::chrono::seconds(20)) {
    run = c.get("/dlq/replays/" + std::to_string(id)).json().as_object();
    if (str(run, "status") == "done") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_REQUIRE_EQUAL(str(run, "status"), "done");
  return run;
}

json::array attempts(HttpClient& c, const std::string& queue, std::int64_t id) {
  auto res = c.get(message_path(queue, id, "attempts"));
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().at("attempts").as_array();
}

}  // namespace lin
}  // namespace

BOOST_AUTO_TEST_SUITE(lineage)

BOOST_AUTO_TEST_CASE(a_single_replay_at_max_replays_is_refused_dry_run_too_unless_forced) {
  DlqdProcess node{DlqdOptions(R"({"defaults": {"max_replays": 2}})")};
  HttpClient c(node.port());
  auto id = lin::dead_message(c, "q");
  for (int i = 0; i < 2; ++i) {
    BOOST_REQUIRE_EQUAL(lin::replay(c, "q", id).status, 200);
    lin::die(c, "q", id);
  }
  auto before = lin::message(c, "q", id);
  BOOST_TEST(before.at("replay_count").as_int64() == 2);

  auto refused = lin::replay(c, "q", id, {{"reason", "once more"}});
  BOOST_TEST(refused.status == 409);
  BOOST_TEST(str(refused.json(), "type") == lin::kReplayLimit);
  auto dry = lin::replay(c, "q", id, {{"dry_run", true}});
  BOOST_TEST(dry.status == 409);
  BOOST_TEST(str(dry.json(), "type") == lin::kReplayLimit);
  BOOST_TEST(lin::message(c, "q", id) == before);  // unchanged
  BOOST_TEST(lin::attempts(c, "q", id).size() == 5u);  // 3 failures, 2 replays

  auto forced = lin::replay(c, "q", id, {{"force", true}});
  BOOST_TEST(forced.status == 200);
  BOOST_TEST(str(forced.json(), "status") == "pending");
  BOOST_TEST(forced.json().at("replay_count").as_int64() == 3);
}

BOOST_AUTO_TEST_CASE(a_batch_preview_counts_and_its_run_skips_messages_at_max_replays) {
  DlqdProcess node{DlqdOptions(R"({"defaults": {"max_replays": 1}})")};
  HttpClient c(node.port());
  auto once = lin::dead_message(c, "b");
  BOOST_REQUIRE_EQUAL(lin::replay(c, "b", once).status, 200);
  lin::die(c, "b", once);
  auto fresh1 = lin::dead_message(c, "b");
  auto fresh2 = lin::dead_message(c, "b");

  json::object preview;
  auto run = lin::batch_replay(c, json::object{{"queue", "b"}}, &preview);
  BOOST_TEST(preview.at("matched").as_int64() == 3);
  BOOST_TEST(preview.at("skipped_max_replays").as_int64() == 1);
  auto pk = lin::keys(preview);
  auto after_ack = std::find(pk.begin(), pk.end(), "needs_acknowledgement");
  BOOST_REQUIRE(after_ack != pk.end());
  BOOST_TEST(*(after_ack + 1) == "skipped_max_replays");

  BOOST_TEST(run.at("replayed").as_int64() == 2);
  BOOST_TEST(run.at("skipped").as_int64() == 1);
  BOOST_TEST(run.at("skipped_by_reason") == json::value(json::object{{"max_replays", 1}}));
  auto rk = lin::keys(run);
  auto skipped = std::find(rk.begin(), rk.end(), "skipped");
  BOOST_REQUIRE(skipped != rk.end());
  BOOST_TEST(*(skipped + 1) == "skipped_by_reason");

  BOOST_TEST(str(lin::message(c, "b", once), "status") == "dead");
  BOOST_TEST(lin::message(c, "b", once).at("replay_count").as_int64() == 1);
  BOOST_TEST(str(lin::message(c, "b", fresh1), "status") == "pending");
  BOOST_TEST(str(lin::message(c, "b", fresh2), "status") == "pending");

  // A dismiss preview says nothing about replays.
  auto dismiss = c.post("/dlq/dismiss", json::object{{"filter", json::object{{"queue", "b"}}},
                                                     {"dry_run", true}});
  BOOST_TEST(!dismiss.json().as_object().contains("skipped_max_replays"));
}

// A queue's max_replays replaces the default (like every queue key); of the queue's and the job
// type's, the lower non-zero one wins; 0 is no limit.
BOOST_AUTO_TEST_CASE(the_lower_non_zero_of_queue_and_job_type_limits_wins) {
  DlqdProcess node{DlqdOptions(R"({"defaults": {"max_replays": 3},
      "queues": {"tight": {"max_replays": 1}, "loose": {"max_replays": 0}},
      "job_types": {"capped": {"max_replays": 2}, "free": {"max_replays": 0}}})")};
  HttpClient c(node.port());
  BOOST_TEST(lin::replays_allowed(c, "other", std::nullopt) == 3);           // defaults
  BOOST_TEST(lin::replays_allowed(c, "other", std::string("capped")) == 2);  // job type lower
  BOOST_TEST(lin::replays_allowed(c, "other", std::string("free")) == 3);    // 0: defaults
  BOOST_TEST(lin::replays_allowed(c, "tight", std::string("capped")) == 1);  // queue lower
  BOOST_TEST(lin::replays_allowed(c, "loose", std::nullopt) == 4);           // no limit
  BOOST_TEST(lin::replays_allowed(c, "loose", std::string("capped")) == 2);  // job type's
}

BOOST_AUTO_TEST_CASE(versions_list_what_each_edited_replay_set_a_page_at_a_time) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  const std::string q = "v";
  auto id = lin::dead_message(c, q, R"({"n":1,"password":"pw"})");
  auto created_at = str(lin::message(c, q, id), "created_at");
  BOOST_REQUIRE_EQUAL(lin::replay(c, q, id, {{"payload", R"({"n":2,"password":"***"})"},
                                                 {"reason", "fix one"}})
                          .status,
                      200);
  lin::die(c, q, id);
  BOOST_REQUIRE_EQUAL(lin::replay(c, q, id, {{"reason", "as it is"}}).status, 200);  // no edit
  lin::die(c, q, id);
  BOOST_REQUIRE_EQUAL(lin::replay(c, q, id, {{"payload", R"({"n":3})"}, {"reason", "fix two"}})
                          .status,
                      200);

  auto all = c.get(message_path(q, id, "versions")).json().as_object();
  BOOST_TEST(lin::keys(all) == std::vector<std::string>({"versions", "count", "next_after"}));
  BOOST_TEST(all.at("count").as_int64() == 3);
  BOOST_TEST(all.at("next_after").is_null());
  const auto& v = all.at("versions").as_array();
  BOOST_REQUIRE_EQUAL(v.size(), 3u);
  BOOST_TEST(lin::keys(v[0].as_object()) ==
             std::vector<std::string>({"version", "payload", "at", "actor", "reason"}));
  BOOST_TEST(v[0].at("version").as_int64() == 1);
  BOOST_TEST(str(v[0], "payload") == R"({"n":1,"password":"***"})");  // redacted for people
  BOOST_TEST(str(v[0], "at") == created_at);
  BOOST_TEST(v[0].at("actor").is_null());
  BOOST_TEST(v[0].at("reason").is_null());
  BOOST_TEST(str(v[1], "payload") == R"({"n":2,"password":"***"})");  // the mask kept "pw"
  BOOST_TEST(str(v[1], "reason") == "fix one");
  BOOST_TEST(str(v[2], "payload") == R"({"n":3})");
  BOOST_TEST(str(v[2], "reason") == "fix two");
  BOOST_TEST(str(v[2], "payload") == str(lin::message(c, q, id), "payload"));  // current
  // The edited replays' times, from the history.
  std::vector<std::string> edited_at;
  for (const auto& a : lin::attempts(c, q, id)) {
    if (str(a, "outcome") == "replayed" && !a.at("previous_payload").is_null()) {
      edited_at.push_back(str(a, "finished_at"));
    }
  }
  BOOST_REQUIRE_EQUAL(edited_at.size(), 2u);
  BOOST_TEST(str(v[1], "at") == edited_at[0]);
  BOOST_TEST(str(v[2], "at") == edited_at[1]);

  // limit=1, then after each page's next_after.
  std::vector<std::int64_t> seen;
  std::string query = message_path(q, id, "versions") + "?limit=1";
  for (int page = 0; page < 5; ++page) {
    auto body = c.get(query).json();
    BOOST_TEST(body.at("count").as_int64() == 1);
    seen.push_back(body.at("versions").at(0).at("version").as_int64());
    if (body.at("next_after").is_null()) break;
    query = message_path(q, id, "versions") + "?limit=1&after=" +
            std::to_string(body.at("next_after").as_int64());
  }
  BOOST_TEST(seen == std::vector<std::int64_t>({1, 2, 3}));
  auto past = c.get(message_path(q, id, "versions") + "?after=3").json();
  BOOST_TEST(past.at("count").as_int64() == 0);
  BOOST_TEST(past.at("next_after").is_null());

  // Never edited: one version, the payload as enqueued.
  auto plain = enqueue(c, "w", R"({"x":1})").at("id").as_int64();
  auto one = c.get(message_path("w", plain, "versions")).json();
  BOOST_TEST(one.at("count").as_int64() == 1);
  BOOST_TEST(str(one.at("versions").at(0), "payload") == R"({"x":1})");

  for (const char* bad : {"?limit=0", "?limit=101", "?after=-1", "?limit=x"}) {
    auto res = c.get(message_path(q, id, "versions") + bad);
    BOOST_TEST(res.status == 422, bad);
  }
  BOOST_TEST(error_fields(c.get(message_path(q, id, "versions") + "?limit=0&after=-1")) ==
             std::vector<std::string>({"limit", "after"}));
  auto missing = c.get(message_path(q, 999999, "versions"));
  BOOST_TEST(missing.status == 404);
  BOOST_TEST(str(missing.json(), "type") == "https://dlq.dev/problems/message-not-found");
  BOOST_TEST(c.get(message_path("w", id, "versions")).status == 404);  // another queue's id
}

BOOST_AUTO_TEST_CASE(history_entries_carry_their_life_and_the_run_that_replayed_them) {
  DlqdProcess node{DlqdOptions("{}")};
  HttpClient c(node.port());
  const std::string q = "l";
  auto id = lin::dead_message(c, q);
  BOOST_REQUIRE_EQUAL(lin::replay(c, q, id).status, 200);
  lin::die(c, q, id);
  auto run = lin::batch_replay(c, json::object{{"queue", q}}, nullptr);
  const auto run_id = run.at("replay_id").as_int64();
  claim_one(c, q);  // the attempt under way

  auto entries = lin::attempts(c, q, id);
  BOOST_REQUIRE_EQUAL(entries.size(), 5u);
  struct Expected {
    const char* outcome;
    std::int64_t life;
    std::optional<std::int64_t> replay_id;
  };
  const std::vector<Expected> expected{{"failed", 0, std::nullopt},
                                       {"replayed", 1, std::nullopt},
                                       {"failed", 1, std::nullopt},
                                       {"replayed", 2, run_id},
                                       {"", 2, std::nullopt}};  // under way: no outcome yet
  for (std::size_t i = 0; i < entries.size(); ++i) {
    BOOST_TEST_CONTEXT("entry " << i) {
      const auto& e = entries[i].as_object();
      auto k = lin::keys(e);
      BOOST_REQUIRE_GE(k.size(), 4u);
      BOOST_TEST(k[k.size() - 4] == "life");  // appended at the end, before worker_version
      BOOST_TEST(k[k.size() - 3] == "replay_id");
      BOOST_TEST(k[k.size() - 2] == "worker_version");
      BOOST_TEST(k[k.size() - 1] == "trial");  // issue 36: null but on a trial's entry
      BOOST_TEST(e.at("trial").is_null());
      if (*expected[i].outcome) BOOST_TEST(str(e, "outcome") == expected[i].outcome);
      BOOST_TEST(e.at("life").as_int64() == expected[i].life);
      if (expected[i].replay_id) {
        BOOST_TEST(e.at("replay_id").as_int64() == *expected[i].replay_id);
      } else {
        BOOST_TEST(e.at("replay_id").is_null());
      }
    }
  }
}

// Each attempt entry keeps the worker_version its claim sent (the attempt under way too); an
// event has none, a claim without one leaves it null, and over 64 bytes is refused.
BOOST_AUTO_TEST_CASE(attempts_record_the_worker_version_of_each_claim) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("wv");
  auto id = enqueue(c, q, "x", {{"max_retries", 3}}).at("id").as_int64();
  auto too_long = claim(c, q, {{"worker_version", std::string(65, 'v')}});
  BOOST_TEST(too_long.status == 422);
  BOOST_TEST(error_fields(too_long) == std::vector<std::string>{"worker_version"});
  auto body = too_long.json();
  BOOST_TEST(str(body.at("errors").at(0), "code") == "too_long");

  auto first = claim(c, q, {{"worker", "w1"}, {"worker_version", "1.2.0"}});
  BOOST_REQUIRE_EQUAL(first.status, 200);
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, id, "fail"), json::object{{"error", "boom"}, {"retry_in", 0}}).status, 200);
  auto second = claim(c, q, {{"worker", "w2"}, {"worker_version", std::string(64, 'b')}});
  BOOST_REQUIRE_EQUAL(second.status, 200);
  auto entries = lin::attempts(c, q, id);
  BOOST_REQUIRE_EQUAL(entries.size(), 2u);
  BOOST_TEST(str(entries[0], "worker_version") == "1.2.0");
  BOOST_TEST(str(entries[1], "worker_version") == std::string(64, 'b'));  // under way
  BOOST_TEST(entries[1].at("outcome").is_null());
  auto lease = str(second.json().at("message"), "lease_id");
  BOOST_REQUIRE_EQUAL(
      c.post(message_path(q, id, "release"), json::object{{"lease_id", lease}, {"delay_seconds", 0}}).status,
      200);
  // A claim that sends none: its entry says null, not the version of the lease before.
  auto third = claim(c, q, {{"worker", "w3"}});
  BOOST_REQUIRE_EQUAL(third.status, 200);
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, id, "fail"), json::object{{"error", "no"}, {"retryable", false}}).status, 200);
  BOOST_REQUIRE_EQUAL(lin::replay(c, q, id).status, 200);
  entries = lin::attempts(c, q, id);
  BOOST_REQUIRE_EQUAL(entries.size(), 4u);
  BOOST_TEST(str(entries[1], "outcome") == "released");
  BOOST_TEST(str(entries[1], "worker_version") == std::string(64, 'b'));
  BOOST_TEST(str(entries[2], "outcome") == "failed");
  BOOST_TEST(entries[2].at("worker_version").is_null());
  BOOST_TEST(str(entries[3], "outcome") == "replayed");
  BOOST_TEST(entries[3].at("worker_version").is_null());  // an event
}

BOOST_AUTO_TEST_SUITE_END()

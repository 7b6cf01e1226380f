// B1: leases with fencing, heartbeats, voluntary release, the reaper, batch claims.
#include <boost/test/unit_test.hpp>

#include <set>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

// An instant in the past: a lease granted "at" it has already expired, so the reaper (on the
// real clock) takes it back at once (http-api.md section 0).
std::string past(int seconds) { return dlq::format_rfc3339(946684800000LL + seconds * 1000LL); }

json::value wait_for_status(HttpClient& c, const std::string& path, const std::string& status) {
  for (int i = 0; i < 100; ++i) {
    auto m = c.get(path).json();
    if (str(m, "status") == status) return m;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BOOST_FAIL("message never became " + status);
  return {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(leases)

BOOST_AUTO_TEST_CASE(a_claim_carries_a_lease_that_only_claim_answers_show) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  auto m = claim_one(c, q, now_header(at_s(0)));
  std::string lease = str(m, "lease_id");
  BOOST_TEST(lease.size() >= 33u);
  BOOST_TEST(str(m, "lease_expires_at") == at_s(30));
  // lease_id, then the recorded side effects last (issue 36 revised "lease_id stays last").
  auto keys_end = std::prev(m.end());
  BOOST_TEST(keys_end->key() == "effects");
  BOOST_TEST(std::prev(keys_end)->key() == "lease_id");
  auto shown = c.get(message_path(q, id)).json().as_object();
  BOOST_TEST(!shown.contains("lease_id"));
  BOOST_TEST(str(shown, "lease_expires_at") == at_s(30));
  auto listed = c.get("/queues/" + q + "/messages").json();
  BOOST_TEST(!listed.at("messages").at(0).as_object().contains("lease_id"));
}

BOOST_AUTO_TEST_CASE(visibility_timeout_sets_the_lease_length) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "x");
  auto res = claim(c, q, {{"visibility_timeout", 120}}, now_header(at_s(0)));
  BOOST_TEST(str(res.json().at("message"), "lease_expires_at") == at_s(120));
}

BOOST_AUTO_TEST_CASE(a_wrong_or_stale_lease_is_409_lease_lost_and_changes_nothing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  auto m = claim_one(c, q, now_header(at_s(0)));
  std::string lease = str(m, "lease_id");
  for (const char* action : {"succeed", "fail", "extend", "release"}) {
    auto res = c.post(message_path(q, id, action), json::object{{"lease_id", "not-" + lease}},
                      now_header(at_s(1)));
    BOOST_TEST(res.status == 409, action);
    BOOST_TEST(str(res.json(), "type") == "https://dlq.dev/problems/lease-lost", action);
  }
  auto still = c.get(message_path(q, id)).json();
  BOOST_TEST(str(still, "status") == "processing");
  BOOST_TEST(str(still, "updated_at") == at_s(0));
  auto ok = c.post(message_path(q, id, "succeed"), json::object{{"lease_id", lease}}, now_header(at_s(1)));
  BOOST_TEST(ok.status == 200);
  // The lease ended with the attempt: using it again is lost, whatever the status.
  auto again = c.post(message_path(q, id, "succeed"), json::object{{"lease_id", lease}});
  BOOST_TEST(again.status == 409);
  BOOST_TEST(str(again.json(), "type") == "https://dlq.dev/problems/lease-lost");
}

BOOST_AUTO_TEST_CASE(extend_pushes_the_deadline_and_keeps_a_checkpoint) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x", {{"max_retries", 5}}).at("id").as_int64();
  std::string lease = str(claim_one(c, q, now_header(at_s(0))), "lease_id");
  auto res = c.post(message_path(q, id, "extend"),
                    json::object{{"lease_id", lease}, {"seconds", 90}, {"checkpoint", "email_sent"}},
                    now_header(at_s(20)));
  BOOST_TEST(res.status == 200);
  BOOST_TEST(str(res.json(), "lease_expires_at") == at_s(110));
  BOOST_TEST(str(res.json(), "checkpoint") == "email_sent");
  auto default_length = c.post(message_path(q, id, "extend"), json::object{{"lease_id", lease}},
                               now_header(at_s(30)));
  BOOST_TEST(str(default_length.json(), "lease_expires_at") == at_s(60));
  // The checkpoint survives a failure and comes back with the next claim.
  c.post(message_path(q, id, "fail"), json::object{{"lease_id", lease}, {"error", "x"}}, now_header(at_s(31)));
  auto next = claim_one(c, q, now_header(at_s(40)));
  BOOST_TEST(str(next, "checkpoint") == "email_sent");
}

BOOST_AUTO_TEST_CASE(extend_and_release_require_a_lease_id) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  claim_one(c, q, now_header(at_s(0)));
  for (const char* action : {"extend", "release"}) {
    auto res = c.post(message_path(q, id, action), json::object{});
    BOOST_TEST(res.status == 422, action);
    BOOST_TEST(str(res.json().at("errors").at(0), "field") == "lease_id");
  }
  auto bad = c.post(message_path(q, id, "extend"), json::object{{"lease_id", "x"}, {"seconds", 0}});
  BOOST_TEST(bad.status == 422);
}

BOOST_AUTO_TEST_CASE(release_gives_the_message_back_without_a_failure) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  std::string lease = str(claim_one(c, q, now_header(at_s(0))), "lease_id");
  auto res = c.post(message_path(q, id, "release"), json::object{{"lease_id", lease}, {"delay_seconds", 10}},
                    now_header(at_s(1)));
  BOOST_TEST(res.status == 200);
  auto m = res.json();
  BOOST_TEST(str(m, "status") == "pending");
  BOOST_TEST(m.at("retry_count").as_int64() == 0);
  BOOST_TEST(m.at("last_error").is_null());
  BOOST_TEST(str(m, "retry_after") == at_s(11));
  BOOST_TEST(m.at("lease_expires_at").is_null());
  BOOST_TEST(claim(c, q, {}, now_header(at_s(10))).json().at("claimed").as_bool() == false);
  std::string second = str(claim_one(c, q, now_header(at_s(11))), "lease_id");
  BOOST_TEST(second != lease);
  auto now_release = c.post(message_path(q, id, "release"), json::object{{"lease_id", second}},
                            now_header(at_s(12)));
  BOOST_TEST(now_release.json().at("retry_after").is_null());
  BOOST_TEST(claim(c, q, {}, now_header(at_s(12))).json().at("claimed").as_bool());
}

BOOST_AUTO_TEST_CASE(an_expired_lease_is_reaped_and_redelivered_with_a_new_lease) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  // A one-second lease on the real clock.
  auto first = claim(c, q, {{"visibility_timeout", 1}}).json().at("message");
  std::string old_lease = str(first, "lease_id");
  auto start = Clock::now();
  // Expiry after 1 s, reaped within a second, due again 2 s later: a long-poll gets it.
  auto res = claim(c, q, {{"wait_seconds", 20}});
  double waited = std::chrono::duration<double>(Clock::now() - start).count();
  auto again = res.json();
  BOOST_REQUIRE(again.at("claimed").as_bool());
  auto m = again.at("message");
  BOOST_TEST(m.at("id").as_int64() == id);
  BOOST_TEST(str(m, "lease_id") != old_lease);
  BOOST_TEST(m.at("lease_expiries").as_int64() == 1);
  BOOST_TEST(m.at("retry_count").as_int64() == 0);
  BOOST_TEST(str(m, "last_error") == "lease expired");
  BOOST_TEST(waited > 2.5);
  BOOST_TEST(waited < 10.0);
  // The old worker comes back too late.
  auto late = c.post(message_path(q, id, "succeed"), json::object{{"lease_id", old_lease}});
  BOOST_TEST(late.status == 409);
  BOOST_TEST(str(late.json(), "type") == "https://dlq.dev/problems/lease-lost");
  auto history = c.get(message_path(q, id, "attempts")).json();
  BOOST_TEST(str(history.at("attempts").at(0), "outcome") == "lease_expired");
}

BOOST_AUTO_TEST_CASE(a_poison_message_ends_dead_with_lease_expired) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "kills its worker", {{"max_retries", 10}}).at("id").as_int64();
  std::string path = message_path(q, id);
  for (int i = 1; i <= 3; ++i) {
    // Claimed "in 2000": the lease is already over, the reaper takes it back at once.
    auto m = claim_one(c, q, now_header(past(i * 100)));
    BOOST_TEST(m.at("lease_expiries").as_int64() == i - 1);
    auto after = wait_for_status(c, path, i < 3 ? "pending" : "dead");
    BOOST_TEST(after.at("lease_expiries").as_int64() == i);
  }
  auto dead = c.get(path).json();
  BOOST_TEST(str(dead, "dead_reason") == "lease_expired");
  BOOST_TEST(dead.at("retry_count").as_int64() == 0);  // the failure budget is untouched
  BOOST_TEST(dead.at("retry_after").is_null());
}

BOOST_AUTO_TEST_CASE(batch_claim_takes_up_to_max_each_with_its_own_lease) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  for (int i = 0; i < 5; ++i) enqueue(c, q, std::to_string(i), {}, now_header(at_s(i)));
  auto res = claim(c, q, {{"max", 3}}, now_header(at_s(10)));
  auto body = res.json().as_object();
  BOOST_TEST(body.at("claimed").as_bool());
  BOOST_TEST(!body.contains("message"));
  auto& list = body.at("messages").as_array();
  BOOST_REQUIRE_EQUAL(list.size(), 3u);
  std::set<std::string> leases;
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(str(list[i], "payload") == std::to_string(i));
    leases.insert(str(list[i], "lease_id"));
  }
  BOOST_TEST(leases.size() == 3u);
  auto one = claim(c, q, {{"max", 1}}, now_header(at_s(10))).json();
  BOOST_TEST(one.at("messages").as_array().size() == 1u);
  auto rest = claim(c, q, {{"max", 100}}, now_header(at_s(10))).json();
  BOOST_TEST(rest.at("messages").as_array().size() == 1u);
  BOOST_TEST(claim(c, q, {{"max", 0}}).status == 422);
  BOOST_TEST(claim(c, q, {{"max", 101}}).status == 422);
}

BOOST_AUTO_TEST_CASE(the_worker_is_recorded_in_the_history) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = enqueue(c, q, "x").at("id").as_int64();
  auto m = claim(c, q, {{"worker", "host-7/pid-42"}}, now_header(at_s(0))).json().at("message");
  auto running = c.get(message_path(q, id, "attempts")).json();
  BOOST_TEST(running.at("count").as_int64() == 1);
  BOOST_TEST(running.at("attempts").at(0).at("outcome").is_null());
  BOOST_TEST(str(running.at("attempts").at(0), "worker") == "host-7/pid-42");
  c.post(message_path(q, id, "succeed"), json::object{{"lease_id", m.at("lease_id")}}, now_header(at_s(3)));
  auto done = c.get(message_path(q, id, "attempts")).json();
  auto a = done.at("attempts").at(0);
  BOOST_TEST(str(a, "outcome") == "succeeded");
  BOOST_TEST(str(a, "worker") == "host-7/pid-42");
  BOOST_TEST(str(a, "claimed_at") == at_s(0));
  BOOST_TEST(str(a, "finished_at") == at_s(3));
}

BOOST_AUTO_TEST_SUITE_END()

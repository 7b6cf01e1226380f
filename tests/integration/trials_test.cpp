// Trial runs (issue 36) over real HTTP on both databases: starting one (and again), the claims
// that may take it, its lease on its own routes only, the message left as it was with one
// `trial` history entry, the refusals, a batch by ids, a parked claim woken, and both expiries.
#include <boost/test/unit_test.hpp>

#include <future>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {
namespace tri {

const std::string kLeaseLost = "https://dlq.dev/problems/lease-lost";
const std::string kInvalidState = "https://dlq.dev/problems/invalid-state";
const std::string kTrialNotFound = "https://dlq.dev/problems/trial-not-found";

std::vector<std::string> keys(const json::object& o) {
  std::vector<std::string> out;
  for (const auto& kv : o) out.emplace_back(kv.key());
  return out;
}

// A dead message of job type `charge` holding a done effect `invoice`.
std::int64_t dead_charge(HttpClient& c, const std::string& queue,
                         const std::string& payload = R"({"amount":10})") {
  auto id = enqueue(c, queue, payload, {{"max_retries", 1}, {"job_type", "charge"}}).at("id").as_int64();
  auto m = claim_one(c, queue);
  std::string lease(m.at("lease_id").as_string());
  BOOST_REQUIRE_EQUAL(c.post(message_path(queue, id, "effects"),
                             json::object{{"lease_id", lease}, {"key", "invoice"},
                                          {"state", "done"}, {"result", "77"}})
                          .status,
                      200);
  auto failed = c.post(message_path(queue, id, "fail"),
                       json::object{{"lease_id", lease}, {"error", "card declined"}});
  BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
  return id;
}

std::string trial_path(const std::string& queue, std::int64_t id, std::int64_t trial,
                       const std::string& action = "") {
  std::string p = message_path(queue, id, "trials") + "/" + std::to_string(trial);
  return action.empty() ? p : p + "/" + action;
}

}  // namespace tri
}  // namespace

BOOST_AUTO_TEST_SUITE(trials)

BOOST_AUTO_TEST_CASE(a_trial_reaches_only_claims_that_ask_and_leaves_the_message_as_it_was) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("trial");
  auto id = tri::dead_charge(c, q);
  auto before = c.get(message_path(q, id)).json().as_object();

  auto started = c.post(message_path(q, id, "trials"), json::object{{"reason", "does it work now?"}});
  BOOST_REQUIRE_EQUAL(started.status, 201);
  auto t = started.json().as_object();
  BOOST_TEST((tri::keys(t) == std::vector<std::string>{
                  "trial_id", "queue", "message_id", "status", "actor", "reason", "payload_edited",
                  "created_at", "claimed_at", "finished_at", "worker", "worker_version", "error",
                  "error_class", "stack", "cause", "would_effects"}));
  BOOST_TEST(str(t, "status") == "pending");
  BOOST_TEST(t.at("payload_edited").as_bool() == false);
  const std::int64_t trial = t.at("trial_id").as_int64();
  // One open trial per message: a second start answers it.
  auto again = c.post(message_path(q, id, "trials"), json::object{});
  BOOST_TEST(again.status == 200);
  BOOST_TEST(again.json().at("trial_id").as_int64() == trial);
  BOOST_TEST(str(c.get(tri::trial_path(q, id, trial)).json(), "status") == "pending");

  // Only a claim with trials: true and the message's job type takes it.
  auto no_types = claim(c, q, {{"trials", true}});
  BOOST_TEST(no_types.status == 422);
  BOOST_TEST(error_fields(no_types) == std::vector<std::string>{"trials"});
  BOOST_TEST(claim(c, q, {{"job_types", {"charge"}}}).json().at("claimed").as_bool() == false);
  BOOST_TEST(claim(c, q, {{"trials", true}, {"job_types", {"other"}}}).json().at("claimed").as_bool() == false);
  auto taken = claim(c, q, {{"trials", true}, {"job_types", {"charge"}}, {"worker", "w9"},
                            {"worker_version", "2.0.0"}});
  BOOST_REQUIRE_EQUAL(taken.status, 200);
  auto m = taken.json().at("message").as_object();
  BOOST_TEST(m.at("id").as_int64() == id);
  BOOST_TEST(tri::keys(m).back() == "trial_id");
  BOOST_TEST(m.at("trial_id").as_int64() == trial);
  BOOST_TEST(str(m, "status") == "dead");
  BOOST_TEST(m.at("effects").as_array().size() == 1u);
  const std::string lease(m.at("lease_id").as_string());
  BOOST_TEST(str(c.get(tri::trial_path(q, id, trial)).json(), "status") == "running");

  // The trial's lease anywhere else is lost.
  for (const char* action : {"succeed", "fail", "extend", "release"}) {
    auto res = c.post(message_path(q, id, action), json::object{{"lease_id", lease}});
    BOOST_TEST(res.status == 409, action);
    BOOST_TEST(str(res.json(), "type") == tri::kLeaseLost, action);
  }
  auto effect = c.post(message_path(q, id, "effects"),
                       json::object{{"lease_id", lease}, {"key", "charge"}, {"state", "started"}});
  BOOST_TEST(effect.status == 409);
  auto acked = c.post("/queues/" + q + "/ack",
                      json::object{{"items", json::array{json::object{{"id", id}, {"lease_id", lease}}}}});
  BOOST_TEST(acked.json().at("results").at(0).at("status").as_int64() == 409);

  BOOST_TEST(c.post(tri::trial_path(q, id, trial, "extend"),
                    json::object{{"lease_id", lease}, {"seconds", 60}})
                 .status == 200);
  auto done = c.post(tri::trial_path(q, id, trial, "succeed"),
                     json::object{{"lease_id", lease},
                                  {"would_effects", json::array{json::object{
                                                        {"key", "charge:1"},
                                                        {"description", "charge 10 EUR"}}}}});
  BOOST_REQUIRE_EQUAL(done.status, 200);
  auto d = done.json().as_object();
  BOOST_TEST(str(d, "status") == "succeeded");
  BOOST_TEST(str(d, "worker") == "w9");
  BOOST_TEST(str(d, "worker_version") == "2.0.0");
  BOOST_TEST(json::serialize(d.at("would_effects")) ==
             R"([{"key":"charge:1","description":"charge 10 EUR"}])");
  // The same answer resent: 200 with the trial, unchanged; another end under it is lost.
  auto twice = c.post(tri::trial_path(q, id, trial, "succeed"), json::object{{"lease_id", lease}});
  BOOST_TEST(twice.status == 200);
  BOOST_TEST(json::serialize(twice.json().at("would_effects")) == json::serialize(d.at("would_effects")));
  auto other_end = c.post(tri::trial_path(q, id, trial, "fail"),
                          json::object{{"lease_id", lease}, {"error", "x"}});
  BOOST_TEST(other_end.status == 409);
  BOOST_TEST(str(other_end.json(), "type") == tri::kLeaseLost);

  // The message is as it was; its history ends with the trial.
  auto after = c.get(message_path(q, id)).json().as_object();
  for (const char* k : {"status", "attempts", "retry_count", "last_error", "checkpoint",
                        "updated_at", "replay_count"}) {
    BOOST_TEST(json::serialize(after.at(k)) == json::serialize(before.at(k)), k);
  }
  auto history = c.get(message_path(q, id, "attempts")).json().as_object();
  auto entries = history.at("attempts").as_array();
  BOOST_REQUIRE_EQUAL(entries.size(), 2u);
  BOOST_TEST(entries[0].at("trial").is_null());
  auto e = entries[1].as_object();
  BOOST_TEST(str(e, "outcome") == "trial");
  BOOST_TEST(e.at("attempt").as_int64() == 1);
  BOOST_TEST(str(e, "reason") == "does it work now?");
  BOOST_TEST(str(e, "worker") == "w9");
  BOOST_TEST(tri::keys(e).back() == "trial");
  BOOST_TEST(e.at("trial").at("trial_id").as_int64() == trial);
  BOOST_TEST(str(e.at("trial"), "status") == "succeeded");
  BOOST_TEST(history.at("effects").as_array().size() == 1u);  // the trial recorded none
  // A new trial may start once the last one ended.
  BOOST_TEST(c.post(message_path(q, id, "trials"), json::object{}).status == 201);
}

BOOST_AUTO_TEST_CASE(an_edited_trial_fails_and_refusals) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("trialx");
  auto id = tri::dead_charge(c, q, R"({"amount":10,"password":"s3cret"})");

  BOOST_TEST(c.post(message_path(q, 999999999, "trials"), json::object{}).status == 404);
  auto bad_json = c.post(message_path(q, id, "trials"), json::object{{"payload", "{\"amount\":"}});
  BOOST_REQUIRE_EQUAL(bad_json.status, 422);
  BOOST_TEST(str(bad_json.json().at("errors").at(0), "code") == "invalid_json");
  auto pending = enqueue(c, q, "x", {{"job_type", "charge"}}).at("id").as_int64();
  auto not_dead = c.post(message_path(q, pending, "trials"), json::object{});
  BOOST_TEST(not_dead.status == 409);
  BOOST_TEST(str(not_dead.json(), "type") == tri::kInvalidState);
  BOOST_TEST(c.get(tri::trial_path(q, id, 999999)).status == 404);
  BOOST_TEST(str(c.get(tri::trial_path(q, id, 999999)).json(), "type") == tri::kTrialNotFound);

  // An edit keeps masked values ("***") and reaches the worker; the message keeps its payload.
  auto started = c.post(message_path(q, id, "trials"),
                        json::object{{"payload", R"({"amount":5,"password":"***"})"}});
  BOOST_REQUIRE_EQUAL(started.status, 201);
  BOOST_TEST(started.json().at("payload_edited").as_bool());
  const std::int64_t trial = started.json().at("trial_id").as_int64();
  // A trials claim takes the trial first, then ordinary messages of its types.
  auto m = claim(c, q, {{"trials", true}, {"job_types", {"charge"}}, {"max", 5}}).json();
  const json::array& got = m.at("messages").as_array();
  BOOST_REQUIRE_EQUAL(got.size(), 2u);
  BOOST_TEST(got[0].at("trial_id").as_int64() == trial);  // trials come first
  BOOST_TEST(!got[1].as_object().contains("trial_id"));
  BOOST_TEST(str(got[0], "payload") == R"({"amount":5,"password":"s3cret"})");
  const std::string lease(got[0].at("lease_id").as_string());

  auto no_lease = c.post(tri::trial_path(q, id, trial, "fail"), json::object{{"error", "x"}});
  BOOST_TEST(no_lease.status == 422);
  BOOST_TEST(error_fields(no_lease) == std::vector<std::string>{"lease_id"});
  auto bad_effects = c.post(tri::trial_path(q, id, trial, "fail"),
                            json::object{{"lease_id", lease},
                                         {"would_effects", json::array{json::object{{"key", ""}}}}});
  BOOST_TEST(bad_effects.status == 422);
  BOOST_TEST(error_fields(bad_effects) == std::vector<std::string>{"would_effects[0].key"});
  auto wrong = c.post(tri::trial_path(q, id, trial, "fail"),
                      json::object{{"lease_id", "not-it"}, {"error", "x"}});
  BOOST_TEST(wrong.status == 409);
  BOOST_TEST(c.post(tri::trial_path(q, pending, trial, "fail"),
                    json::object{{"lease_id", lease}, {"error", "x"}})
                 .status == 404);  // the trial of another message
  auto failed = c.post(tri::trial_path(q, id, trial, "fail"),
                       json::object{{"lease_id", lease}, {"error", "card declined again"},
                                    {"error_class", "invalid_input"}, {"stack", "at charge()"}});
  BOOST_REQUIRE_EQUAL(failed.status, 200);
  BOOST_TEST(str(failed.json(), "status") == "failed");
  BOOST_TEST(str(failed.json(), "error_class") == "invalid_input");
  BOOST_TEST(str(c.get(message_path(q, id)).json(), "payload") == R"({"amount":10,"password":"***"})");
}

BOOST_AUTO_TEST_CASE(trials_of_several_messages_by_id_are_checked_first) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("trialb");
  auto a = tri::dead_charge(c, q);
  auto b = tri::dead_charge(c, q);
  auto pending = enqueue(c, q, "x", {{"job_type", "charge"}}).at("id").as_int64();

  auto unknown = c.post("/dlq/trials", json::object{{"ids", {a, 999999999}}});
  BOOST_REQUIRE_EQUAL(unknown.status, 422);
  BOOST_TEST(error_fields(unknown) == std::vector<std::string>{"ids[1]"});
  BOOST_TEST(str(unknown.json().at("errors").at(0), "code") == "not_found");
  auto invalid = c.post("/dlq/trials", json::object{{"ids", {pending, a}}});
  BOOST_REQUIRE_EQUAL(invalid.status, 422);
  BOOST_TEST(error_fields(invalid) == std::vector<std::string>{"ids[0]"});
  BOOST_TEST(str(invalid.json().at("errors").at(0), "code") == "invalid");
  BOOST_TEST(c.post("/dlq/trials", json::object{{"ids", json::array{}}}).status == 422);
  BOOST_TEST(c.post("/dlq/trials", json::object{}).status == 422);
  BOOST_TEST(c.post("/dlq/trials", json::object{{"ids", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}}).status == 422);

  auto ok = c.post("/dlq/trials", json::object{{"ids", {b, a}}, {"reason", "sample"}});
  BOOST_REQUIRE_EQUAL(ok.status, 201);
  auto body = ok.json().as_object();
  BOOST_TEST(body.at("count").as_int64() == 2);
  BOOST_TEST(body.at("trials").at(0).at("message_id").as_int64() == b);
  BOOST_TEST(body.at("trials").at(1).at("message_id").as_int64() == a);
  // Nothing was started by the refused requests: these are the first trials of a and b.
  auto got = claim(c, q, {{"trials", true}, {"job_types", {"charge"}}, {"max", 2}}).json();
  BOOST_TEST(got.at("messages").as_array().size() == 2u);
  BOOST_TEST(got.at("messages").at(0).as_object().contains("trial_id"));
  BOOST_TEST(got.at("messages").at(1).as_object().contains("trial_id"));
}

// A parked claim that asked for trials takes one started while it waits, long before its wait
// ends.
BOOST_AUTO_TEST_CASE(a_parked_trials_claim_wakes_for_a_trial) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("trialw");
  auto id = tri::dead_charge(c, q);
  auto start = std::chrono::steady_clock::now();
  auto parked = std::async(std::launch::async, [&] {
    HttpClient worker(shared_dlqd().port());
    return claim(worker, q, {{"trials", true}, {"job_types", {"charge"}}, {"wait_seconds", 20}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, id, "trials"), json::object{}).status, 201);
  auto res = parked.get();
  auto waited = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE_EQUAL(res.status, 200);
  BOOST_TEST(res.json().at("message").as_object().contains("trial_id"));
  BOOST_TEST(waited < std::chrono::seconds(10));
}

// trials.timeout_seconds ends a trial nobody claimed; a claimed one ends when its lease does.
BOOST_AUTO_TEST_CASE(unclaimed_and_lapsed_trials_expire) {
  DlqdProcess node{DlqdOptions(R"({"trials": {"timeout_seconds": 1}})")};
  HttpClient c(node.port());
  const std::string q = fresh_queue("triale");
  auto a = tri::dead_charge(c, q);
  auto b = tri::dead_charge(c, q);
  auto ta = c.post(message_path(q, a, "trials"), json::object{}).json().at("trial_id").as_int64();
  auto tb = c.post(message_path(q, b, "trials"), json::object{}).json().at("trial_id").as_int64();
  // a's trial (the older) is claimed at once with a 1-second lease, b's never.
  auto got = claim(c, q, {{"trials", true}, {"job_types", {"charge"}}, {"visibility_timeout", 1}});
  BOOST_REQUIRE(got.json().at("message").as_object().contains("trial_id"));
  BOOST_REQUIRE_EQUAL(got.json().at("message").at("id").as_int64(), a);  // oldest first
  auto ended = [&](std::int64_t id, std::int64_t trial) {
    return str(c.get(tri::trial_path(q, id, trial)).json(), "status") == "expired";
  };
  BOOST_TEST(eventually([&] { return ended(a, ta) && ended(b, tb); }, 10));
  auto entries = c.get(message_path(q, a, "attempts")).json().at("attempts").as_array();
  BOOST_TEST(str(entries.back(), "outcome") == "trial");
  BOOST_TEST(str(entries.back().at("trial"), "status") == "expired");
  BOOST_TEST(str(entries.back(), "error").find("lease ran out") != std::string::npos);
  entries = c.get(message_path(q, b, "attempts")).json().at("attempts").as_array();
  BOOST_TEST(str(entries.back(), "error").find("no worker claimed it") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

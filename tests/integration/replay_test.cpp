// B3 (single message): idempotency keys, safe replay with its options, dismiss, and redaction in
// the views meant for people.
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <set>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

// Enqueues, claims and fails a message until it is dead (max_retries 1: one failure).
std::int64_t dead_message(HttpClient& c, const std::string& q, const std::string& payload,
                          json::object extra = {}) {
  extra["max_retries"] = 1;
  auto id = enqueue(c, q, payload, extra, now_header(at_s(0))).at("id").as_int64();
  auto m = claim_one(c, q, now_header(at_s(1)));
  BOOST_REQUIRE_EQUAL(m.at("id").as_int64(), id);
  auto res = c.post(message_path(q, id, "fail"),
                    json::object{{"error", "Authorization: Bearer sk-live-123 rejected"},
                                 {"error_class", "auth"}},
                    now_header(at_s(2)));
  BOOST_REQUIRE_EQUAL(str(res.json(), "status"), "dead");
  return id;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replay)

BOOST_AUTO_TEST_CASE(enqueue_with_a_held_key_returns_the_holder_with_200) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto first = enqueue(c, q, "one", {{"idempotency_key", "order-1"}});
  auto again = c.post("/queues/" + q + "/messages",
                      json::object{{"payload", "two"}, {"idempotency_key", "order-1"}});
  BOOST_TEST(again.status == 200);
  BOOST_TEST(again.json().at("id") == first.at("id"));
  BOOST_TEST(str(again.json(), "payload") == "one");
  auto id = first.at("id").as_int64();
  claim_one(c, q);
  c.post(message_path(q, id, "succeed"));
  auto after_success = c.post("/queues/" + q + "/messages",
                              json::object{{"payload", "three"}, {"idempotency_key", "order-1"}});
  BOOST_TEST(after_success.status == 200);
  BOOST_TEST(after_success.json().at("id").as_int64() == id);
  BOOST_TEST(c.get("/queues/" + q + "/messages").json().at("count").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(a_key_held_only_by_dead_messages_creates_a_new_message) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto dead_id = dead_message(c, q, "one", {{"idempotency_key", "k"}});
  auto fresh = c.post("/queues/" + q + "/messages", json::object{{"payload", "two"}, {"idempotency_key", "k"}});
  BOOST_TEST(fresh.status == 201);
  BOOST_TEST(fresh.json().at("id").as_int64() != dead_id);
}

BOOST_AUTO_TEST_CASE(concurrent_enqueues_with_one_key_create_one_message) {
  std::string q = fresh_queue();
  std::mutex mu;
  std::set<std::int64_t> ids;
  int created = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&, i] {
      HttpClient c(shared_dlqd().port());
      auto res = c.post("/queues/" + q + "/messages",
                        json::object{{"payload", std::to_string(i)}, {"idempotency_key", "same"}});
      std::lock_guard lock(mu);
      ids.insert(res.json().at("id").as_int64());
      if (res.status == 201) ++created;
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(ids.size() == 1u);
  BOOST_TEST(created == 1);
}

BOOST_AUTO_TEST_CASE(replay_is_blocked_by_an_in_flight_or_succeeded_holder) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = dead_message(c, q, "charge", {{"idempotency_key", "charge-9"}});
  auto holder = enqueue(c, q, "charge again", {{"idempotency_key", "charge-9"}});
  auto blocked = c.post(message_path(q, id, "replay"), json::object{{"force", true}});
  BOOST_TEST(blocked.status == 409);
  BOOST_TEST(str(blocked.json(), "type") == "https://dlq.dev/problems/idempotency-conflict");

  auto hid = holder.at("id").as_int64();
  auto m = claim_one(c, q, now_header(at_s(10)));
  BOOST_REQUIRE_EQUAL(m.at("id").as_int64(), hid);
  c.post(message_path(q, hid, "succeed"));
  auto succeeded = c.post(message_path(q, id, "replay"));
  BOOST_TEST(succeeded.status == 409);
  BOOST_TEST(str(succeeded.json(), "type") == "https://dlq.dev/problems/already-succeeded");
  BOOST_TEST(str(c.get(message_path(q, id)).json(), "status") == "dead");

  auto forced = c.post(message_path(q, id, "replay"), json::object{{"force", true}, {"reason", "customer asked"}});
  BOOST_TEST(forced.status == 200);
  BOOST_TEST(str(forced.json(), "status") == "pending");
}

BOOST_AUTO_TEST_CASE(replay_starts_a_new_life_and_keeps_the_lineage) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = dead_message(c, q, "job", {{"priority", 4}});
  c.post(message_path(q, id, "replay"), json::object{{"reason", "fixed the key"}}, now_header(at_s(10)));
  auto m = claim_one(c, q, now_header(at_s(11)));
  BOOST_TEST(m.at("id").as_int64() == id);
  BOOST_TEST(m.at("replay_count").as_int64() == 1);
  BOOST_TEST(m.at("retry_count").as_int64() == 0);
  BOOST_TEST(m.at("priority").as_int64() == 4);
  BOOST_TEST(m.at("error_class").is_null());
  BOOST_TEST(m.at("dead_reason").is_null());
  BOOST_TEST(m.at("dead_at").is_null());
  BOOST_TEST(m.at("attempts").as_int64() == 2);
  BOOST_TEST(str(m, "created_at") == at_s(0));
  c.post(message_path(q, id, "succeed"), json::object{}, now_header(at_s(12)));

  auto history = c.get(message_path(q, id, "attempts")).json();
  BOOST_REQUIRE_EQUAL(history.at("count").as_int64(), 3);
  auto& list = history.at("attempts").as_array();
  BOOST_TEST(str(list[0], "outcome") == "failed");
  BOOST_TEST(str(list[1], "outcome") == "replayed");
  BOOST_TEST(str(list[1], "reason") == "fixed the key");
  BOOST_TEST(str(list[2], "outcome") == "succeeded");
  BOOST_TEST(list[2].at("attempt").as_int64() == 2);
}

BOOST_AUTO_TEST_CASE(replay_dry_run_changes_nothing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = dead_message(c, q, "job");
  auto preview = c.post(message_path(q, id, "replay"), json::object{{"dry_run", true}}, now_header(at_s(9)));
  BOOST_TEST(preview.status == 200);
  auto body = preview.json();
  BOOST_TEST(body.at("dry_run").as_bool());
  BOOST_TEST(str(body.at("message"), "status") == "pending");
  BOOST_TEST(body.at("message").at("replay_count").as_int64() == 1);
  auto stored = c.get(message_path(q, id)).json();
  BOOST_TEST(str(stored, "status") == "dead");
  BOOST_TEST(stored.at("replay_count").as_int64() == 0);
  BOOST_TEST(c.get(message_path(q, id, "attempts")).json().at("count").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(scheduled_replay) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = dead_message(c, q, "job");
  auto res = c.post(message_path(q, id, "replay"), json::object{{"delay_seconds", 300}}, now_header(at_s(10)));
  BOOST_TEST(str(res.json(), "retry_after") == at_s(310));
  BOOST_TEST(claim(c, q, {}, now_header(at_s(309))).json().at("claimed").as_bool() == false);
  BOOST_TEST(claim_one(c, q, now_header(at_s(310))).at("id").as_int64() == id);
}

BOOST_AUTO_TEST_CASE(an_edited_payload_keeps_masked_secrets_and_the_previous_payload) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  std::string original = R"({"to":"alx@@example.com","password":"hunter2"})";
  auto id = dead_message(c, q, original);
  auto shown = c.get(message_path(q, id)).json();
  BOOST_TEST(str(shown, "payload") == R"({"to":"alx@@example.com","password":"***"})");
  // The operator fixes the address in what they see; the mask stays as it was.
  auto res = c.post(message_path(q, id, "replay"),
                    json::object{{"payload", R"({"to":"alex@example.com","password":"***"})"},
                                 {"reason", "typo in address"}});
  BOOST_TEST(res.status == 200);
  auto m = claim_one(c, q, now_header(at_s(20)));
  BOOST_TEST(json::parse(str(m, "payload")) == json::parse(R"({"to":"alex@example.com","password":"hunter2"})"));
  auto history = c.get(message_path(q, id, "attempts")).json();
  auto replay_entry = history.at("attempts").at(1);
  BOOST_TEST(str(replay_entry, "outcome") == "replayed");
  BOOST_TEST(json::parse(str(replay_entry, "previous_payload")) ==
             json::parse(R"({"to":"alx@@example.com","password":"***"})"));
}

BOOST_AUTO_TEST_CASE(dismiss_marks_a_dead_message_wont_fix) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto id = dead_message(c, q, "job");
  auto res = c.post(message_path(q, id, "dismiss"), json::object{{"reason", "customer deleted"}});
  BOOST_TEST(res.status == 200);
  BOOST_TEST(str(res.json(), "status") == "dismissed");
  BOOST_TEST(c.get("/queues/" + q + "/messages?status=dismissed").json().at("count").as_int64() == 1);
  auto again = c.post(message_path(q, id, "dismiss"));
  BOOST_TEST(again.status == 409);
  BOOST_TEST(str(again.json(), "error") == "only dead messages can be dismissed");
  auto replay = c.post(message_path(q, id, "replay"));
  BOOST_TEST(replay.status == 409);
  auto forced = c.post(message_path(q, id, "replay"), json::object{{"force", true}});
  BOOST_TEST(forced.status == 200);
  auto history = c.get(message_path(q, id, "attempts")).json();
  BOOST_TEST(str(history.at("attempts").at(1), "outcome") == "dismissed");
  BOOST_TEST(str(history.at("attempts").at(1), "reason") == "customer deleted");
}

BOOST_AUTO_TEST_CASE(secrets_are_masked_for_people_but_not_for_producers_and_workers) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  std::string payload = R"({"user":"bob","api_key":"k-123","card":{"card_number":"4111"}})";
  auto created = enqueue(c, q, payload);
  BOOST_TEST(str(created, "payload") == payload);  // the producer's answer: as stored
  auto id = created.at("id").as_int64();
  auto shown = json::parse(str(c.get(message_path(q, id)).json(), "payload"));
  BOOST_TEST(shown.at("api_key").as_string() == "***");
  BOOST_TEST(shown.at("card").at("card_number").as_string() == "***");
  BOOST_TEST(shown.at("user").as_string() == "bob");
  auto listed = c.get("/queues/" + q + "/messages").json();
  BOOST_TEST(json::parse(str(listed.at("messages").at(0), "payload")).at("api_key").as_string() == "***");
  auto claimed = claim_one(c, q);
  BOOST_TEST(str(claimed, "payload") == payload);  // the worker's answer: as stored

  auto failed = c.post(message_path(q, id, "fail"),
                       json::object{{"error", "upstream said: token=abc123 invalid"}, {"retryable", false}});
  BOOST_TEST(str(failed.json(), "last_error") == "upstream said: token=abc123 invalid");
  auto dead = c.get(message_path(q, id)).json();
  BOOST_TEST(str(dead, "last_error") == "upstream said: token=*** invalid");
  auto history = c.get(message_path(q, id, "attempts")).json();
  BOOST_TEST(str(history.at("attempts").at(0), "error") == "upstream said: token=*** invalid");
  // Payloads without secret keys are returned byte for byte everywhere.
  std::string plain = R"({ "a" :  1 })";
  auto p = enqueue(c, q, plain);
  BOOST_TEST(str(c.get(message_path(q, p.at("id").as_int64())).json(), "payload") == plain);
}

BOOST_AUTO_TEST_CASE(redaction_can_be_turned_off) {
  DlqdProcess server(DlqdOptions(R"({"redaction": {"fields": []}})"));
  HttpClient c(server.port());
  std::string payload = R"({"password":"p"})";
  auto id = enqueue(c, "q", payload).at("id").as_int64();
  BOOST_TEST(str(c.get(message_path("q", id)).json(), "payload") == payload);
}

// An edit of a JSON payload must parse (issue 34, A4): the 422 gives the byte offset, real and dry
// run, and nothing changes; payload_is_json: false stores it; a non-JSON original takes any text;
// an unknown id is a 404 first.
BOOST_AUTO_TEST_CASE(edited_payload_must_parse) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("edits");
  auto id = dead_message(c, q, R"({"to": "x@example.com"})");
  const std::string broken = R"({"to": "x@example.com", oops)";
  const auto history_before = c.get(message_path(q, id, "attempts")).json().at("count").as_int64();
  const auto audit_before = c.get("/audit?action=payload_edit&queue=" + q).json().at("count").as_int64();
  for (bool dry : {true, false}) {
    auto res = c.post(message_path(q, id, "replay"), json::object{{"payload", broken}, {"dry_run", dry}});
    BOOST_TEST(res.status == 422, "dry_run " << dry);
    BOOST_TEST((error_fields(res) == std::vector<std::string>{"payload"}));
    const auto body = res.json();  // a reference into a temporary would dangle
    const auto& e = body.at("errors").at(0);
    BOOST_TEST(str(e, "code") == "invalid_json");
    BOOST_TEST(str(e, "message").starts_with("payload is not valid JSON at byte 24: "), str(e, "message"));
  }
  BOOST_TEST(str(c.get(message_path(q, id)).json(), "status") == "dead");
  BOOST_TEST(c.get(message_path(q, id, "attempts")).json().at("count").as_int64() == history_before);
  BOOST_TEST(c.get("/audit?action=payload_edit&queue=" + q).json().at("count").as_int64() == audit_before);
  // An unknown id: its 404 comes first.
  auto unknown = c.post(message_path(q, 999999999, "replay"), json::object{{"payload", broken}});
  BOOST_TEST(unknown.status == 404);
  BOOST_TEST(c.post(message_path(q, id, "replay"),
                    json::object{{"payload", broken}, {"payload_is_json", "no"}}).status == 422);
  auto stored = c.post(message_path(q, id, "replay"),
                       json::object{{"payload", broken}, {"payload_is_json", false}});
  BOOST_TEST(stored.status == 200);
  BOOST_TEST(str(stored.json(), "status") == "pending");

  const std::string q2 = fresh_queue("edits");
  auto plain = dead_message(c, q2, "not json at all");
  auto fixed = c.post(message_path(q2, plain, "replay"), json::object{{"payload", "fixed"}});
  BOOST_TEST(fixed.status == 200);
}

BOOST_AUTO_TEST_SUITE_END()

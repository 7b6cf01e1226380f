// Part A: enqueue, list and show — bodies, key order, validation, 404s.
#include <boost/test/unit_test.hpp>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::vector<std::string> keys_of(const json::object& o) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : o) keys.emplace_back(k);
  return keys;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(messages)

BOOST_AUTO_TEST_CASE(enqueue_answers_201_with_the_message_in_contract_key_order) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto res = c.post("/queues/" + q + "/messages",
                    json::object{{"payload", "{\"to\":\"alice@example.com\"}"}, {"max_retries", 5}},
                    now_header(at_s(0)));
  BOOST_TEST(res.status == 201);
  BOOST_TEST(res.header("content-type") == "application/json");
  auto m = res.json().as_object();
  std::vector<std::string> expected{
      "id", "queue", "payload", "status", "retry_count", "max_retries", "retry_after", "last_error",
      "created_at", "updated_at", "priority", "job_type", "idempotency_key", "error_class",
      "dead_reason", "checkpoint", "lease_expiries", "attempts", "first_attempt_at",
      "last_attempt_at", "dead_at", "replay_count", "lease_expires_at", "fingerprint", "title"};
  BOOST_TEST(keys_of(m) == expected, boost::test_tools::per_element());
  BOOST_TEST(m.at("id").as_int64() > 0);
  BOOST_TEST(str(m, "queue") == q);
  BOOST_TEST(str(m, "payload") == "{\"to\":\"alice@example.com\"}");
  BOOST_TEST(str(m, "status") == "pending");
  BOOST_TEST(m.at("retry_count").as_int64() == 0);
  BOOST_TEST(m.at("max_retries").as_int64() == 5);
  BOOST_TEST(m.at("retry_after").is_null());
  BOOST_TEST(m.at("last_error").is_null());
  BOOST_TEST(str(m, "created_at") == "2099-01-01T00:00:00.000Z");
  BOOST_TEST(str(m, "updated_at") == "2099-01-01T00:00:00.000Z");
}

BOOST_AUTO_TEST_CASE(max_retries_defaults_to_3) {
  HttpClient c(shared_dlqd().port());
  auto m = enqueue(c, fresh_queue(), "x");
  BOOST_TEST(m.at("max_retries").as_int64() == 3);
}

BOOST_AUTO_TEST_CASE(payload_must_be_a_non_empty_string_within_the_limit) {
  HttpClient c(shared_dlqd().port());
  std::string path = "/queues/" + fresh_queue() + "/messages";
  for (const auto& body : {json::object{}, json::object{{"payload", ""}}, json::object{{"payload", 42}},
                           json::object{{"payload", nullptr}}, json::object{{"payload", json::array{}}},
                           json::object{{"payload", std::string(262145, 'a')}}}) {
    auto res = c.post(path, body);
    BOOST_TEST(res.status == 422);
    BOOST_TEST(res.header("content-type") == "application/problem+json");
    auto problem = res.json();
    BOOST_TEST(str(problem, "type") == "https://dlq.dev/problems/validation-failed");
    BOOST_TEST(error_fields(res) == std::vector<std::string>{"payload"});
  }
  auto exact = c.post(path, json::object{{"payload", std::string(262144, 'a')}});
  BOOST_TEST(exact.status == 201);
  auto missing = c.post(path, json::object{});
  BOOST_TEST(str(missing.json().at("errors").at(0), "code") == "required");
}

BOOST_AUTO_TEST_CASE(max_retries_must_be_an_integer_from_1_to_10) {
  HttpClient c(shared_dlqd().port());
  std::string path = "/queues/" + fresh_queue() + "/messages";
  for (json::value bad : {json::value("3"), json::value(3.5), json::value(nullptr), json::value(true),
                          json::value(0), json::value(11), json::value(-1)}) {
    auto res = c.post(path, json::object{{"payload", "x"}, {"max_retries", bad}});
    BOOST_TEST(res.status == 422, "max_retries " << json::serialize(bad));
    BOOST_TEST(error_fields(res) == std::vector<std::string>{"max_retries"});
  }
  for (int ok : {1, 10}) {
    BOOST_TEST(c.post(path, json::object{{"payload", "x"}, {"max_retries", ok}}).status == 201);
  }
}

BOOST_AUTO_TEST_CASE(every_invalid_field_is_listed_in_documented_order_with_x_now_last) {
  HttpClient c(shared_dlqd().port());
  auto res = c.post("/queues/" + fresh_queue() + "/messages",
                    json::object{{"max_retries", "x"}, {"payload", 1}}, now_header("not a time"));
  BOOST_TEST(res.status == 422);
  BOOST_TEST(error_fields(res) == (std::vector<std::string>{"payload", "max_retries", "X-Now"}),
             boost::test_tools::per_element());
  auto problem = res.json().as_object();
  BOOST_TEST(str(problem, "error") == "validation failed");
  BOOST_TEST(problem.at("status").as_int64() == 422);
}

BOOST_AUTO_TEST_CASE(a_payload_is_returned_exactly_as_stored) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  std::string payload = "  not json \"quoted\" \\ \u00e9\u4e2d\U0001F600 \t\n end";
  auto m = enqueue(c, q, payload);
  BOOST_TEST(str(m, "payload") == payload);
  auto shown = c.get(message_path(q, m.at("id").as_int64()));
  BOOST_TEST(str(shown.json(), "payload") == payload);
}

BOOST_AUTO_TEST_CASE(list_pages_in_created_at_then_id_order) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  std::vector<std::int64_t> ids;
  // Created out of time order: list follows created_at, not insertion.
  for (int s : {3, 1, 2, 1}) {
    ids.push_back(enqueue(c, q, "m" + std::to_string(s), {}, now_header(at_s(s))).at("id").as_int64());
  }
  auto res = c.get("/queues/" + q + "/messages");
  BOOST_TEST(res.status == 200);
  auto body = res.json().as_object();
  BOOST_TEST(keys_of(body) == (std::vector<std::string>{"messages", "count"}));
  BOOST_TEST(body.at("count").as_int64() == 4);
  std::vector<std::int64_t> order;
  for (const auto& m : body.at("messages").as_array()) order.push_back(m.at("id").as_int64());
  BOOST_TEST(order == (std::vector<std::int64_t>{ids[1], ids[3], ids[2], ids[0]}),
             boost::test_tools::per_element());

  auto page = c.get("/queues/" + q + "/messages?limit=2&offset=1").json();
  BOOST_TEST(page.at("count").as_int64() == 2);
  BOOST_TEST(page.at("messages").at(0).at("id").as_int64() == ids[3]);
  BOOST_TEST(page.at("messages").at(1).at("id").as_int64() == ids[2]);
  auto beyond = c.get("/queues/" + q + "/messages?offset=10").json();
  BOOST_TEST(beyond.at("count").as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(list_filters_by_status) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  enqueue(c, q, "a");
  enqueue(c, q, "b");
  claim_one(c, q);
  auto pending = c.get("/queues/" + q + "/messages?status=pending").json();
  BOOST_TEST(pending.at("count").as_int64() == 1);
  BOOST_TEST(str(pending.at("messages").at(0), "payload") == "b");
  auto processing = c.get("/queues/" + q + "/messages?status=processing").json();
  BOOST_TEST(processing.at("count").as_int64() == 1);
  auto dead = c.get("/queues/" + q + "/messages?status=dead").json();
  BOOST_TEST(dead.at("count").as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(list_rejects_bad_query_parameters) {
  HttpClient c(shared_dlqd().port());
  std::string base = "/queues/" + fresh_queue() + "/messages";
  struct Case {
    std::string query;
    std::vector<std::string> fields;
  };
  for (const auto& [query, fields] : std::vector<Case>{
           {"?status=lost", {"status"}},
           {"?limit=0", {"limit"}},
           {"?limit=101", {"limit"}},
           {"?limit=abc", {"limit"}},
           {"?limit=-1", {"limit"}},
           {"?limit=+5", {"limit"}},
           {"?limit=5.0", {"limit"}},
           {"?limit=", {"limit"}},
           {"?offset=1000001", {"offset"}},
           {"?offset=x", {"offset"}},
           {"?offset=99999999999999999999999", {"offset"}},
           {"?status=nope&limit=0&offset=y", {"status", "limit", "offset"}}}) {
    auto res = c.get(base + query);
    BOOST_TEST(res.status == 422, query);
    BOOST_TEST(error_fields(res) == fields, query);
  }
  BOOST_TEST(c.get(base + "?limit=007&offset=000").status == 200);
  BOOST_TEST(c.get(base + "?limit=100&offset=1000000").status == 200);
}

BOOST_AUTO_TEST_CASE(a_queue_never_used_is_empty_not_missing) {
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/queues/" + fresh_queue("never") + "/messages");
  BOOST_TEST(res.status == 200);
  BOOST_TEST(res.body == R"({"messages":[],"count":0})");
}

BOOST_AUTO_TEST_CASE(invalid_queue_names_are_404_unknown_queue) {
  HttpClient c(shared_dlqd().port());
  for (const std::string& name : std::vector<std::string>{"bad.name", "bad%2Fname", "sp%20ace",
                                                        std::string(65, 'a'), "%", "caf%C3%A9"}) {
    auto res = c.get("/queues/" + name + "/messages");
    BOOST_TEST(res.status == 404, name);
    auto problem = res.json();
    BOOST_TEST(str(problem, "error") == "unknown queue name");
    BOOST_TEST(str(problem, "type") == "https://dlq.dev/problems/unknown-queue");
    BOOST_TEST(c.post("/queues/" + name + "/messages", json::object{{"payload", "x"}}).status == 404);
    BOOST_TEST(c.post("/queues/" + name + "/claim").status == 404);
  }
  // Percent-encoded valid characters are fine.
  BOOST_TEST(c.get("/queues/" + std::string("ab%63") + "/messages").status == 200);
  BOOST_TEST(c.get("/queues/" + std::string(64, 'a') + "/messages").status == 200);
}

BOOST_AUTO_TEST_CASE(show_returns_the_message_and_404s_otherwise) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto m = enqueue(c, q, "hello");
  auto id = m.at("id").as_int64();
  auto res = c.get(message_path(q, id));
  BOOST_TEST(res.status == 200);
  BOOST_TEST(res.json().as_object() == m);

  auto zero_padded = c.get("/queues/" + q + "/messages/000" + std::to_string(id));
  BOOST_TEST(zero_padded.status == 200);

  for (std::string bad : {"0", "-1", "abc", "1.0", "1234567890123456789", "99999999999999999"}) {
    auto r = c.get("/queues/" + q + "/messages/" + bad);
    BOOST_TEST(r.status == 404, bad);
    BOOST_TEST(str(r.json(), "error") == "message not found");
    BOOST_TEST(str(r.json(), "type") == "https://dlq.dev/problems/message-not-found");
  }
  // The id exists, but in another queue.
  auto other = c.get(message_path(fresh_queue(), id));
  BOOST_TEST(other.status == 404);
  BOOST_TEST(str(other.json(), "error") == "message not found");
  // An invalid queue name on a message route is "message not found".
  auto bad_queue = c.get(message_path("bad.queue", id));
  BOOST_TEST(bad_queue.status == 404);
  BOOST_TEST(str(bad_queue.json(), "error") == "message not found");
}

// GET /queues/{q}/messages (issue 34, A3): the default order is Part A's; order=desc reverses it;
// job_type, error_class and retrying filter; each bad value is a 422 naming it, in order; offset
// paging under desc skips nothing.
BOOST_AUTO_TEST_CASE(list_filters_and_order) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("lists");
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(enqueue(c, q, "m" + std::to_string(i), {{"job_type", i % 2 ? "y" : "x"}})
                      .at("id").as_int64());
  }
  auto first = claim_one(c, q);
  BOOST_REQUIRE_EQUAL(first.at("id").as_int64(), ids[0]);
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, ids[0], "fail"),
                             json::object{{"error", "slow"}, {"error_class", "timeout"}})
                          .status, 200);
  auto listed = [&](const std::string& query) {
    auto res = c.get("/queues/" + q + "/messages" + query);
    BOOST_REQUIRE_EQUAL(res.status, 200);
    auto body = res.json().as_object();
    BOOST_TEST((keys_of(body) == std::vector<std::string>{"messages", "count"}));
    std::vector<std::int64_t> out;
    for (const auto& m : body.at("messages").as_array()) out.push_back(m.at("id").as_int64());
    BOOST_TEST(body.at("count").as_int64() == static_cast<std::int64_t>(out.size()));
    return out;
  };
  using V = std::vector<std::int64_t>;
  const V reversed(ids.rbegin(), ids.rend());
  BOOST_TEST(listed("") == ids);
  BOOST_TEST(listed("?order=asc") == ids);
  BOOST_TEST(listed("?order=desc") == reversed);
  BOOST_TEST(listed("?job_type=x") == (V{ids[0], ids[2], ids[4]}));
  BOOST_TEST(listed("?job_type=x&order=desc") == (V{ids[4], ids[2], ids[0]}));
  BOOST_TEST(listed("?error_class=timeout") == (V{ids[0]}));
  BOOST_TEST(listed("?retrying=true") == (V{ids[0]}));
  BOOST_TEST(listed("?retrying=true&status=pending&job_type=y").empty());
  BOOST_TEST(listed("?status=pending&order=desc") == reversed);
  V paged;
  for (int offset = 0; offset < 6; offset += 2) {
    for (auto id : listed("?order=desc&limit=2&offset=" + std::to_string(offset))) paged.push_back(id);
  }
  BOOST_TEST(paged == reversed);

  const std::pair<std::string, std::pair<const char*, const char*>> bad[] = {
      {"order=newest", {"order", "invalid"}},
      {"order=", {"order", "invalid"}},
      {"job_type=", {"job_type", "invalid"}},
      {"job_type=" + std::string(129, 'j'), {"job_type", "too_long"}},
      {"error_class=nope", {"error_class", "invalid"}},
      {"retrying=yes", {"retrying", "invalid"}},
      {"retrying=true&status=processing", {"retrying", "invalid"}},
  };
  for (const auto& [query, want] : bad) {
    auto res = c.get("/queues/" + q + "/messages?" + query);
    BOOST_TEST(res.status == 422, query);
    BOOST_TEST((error_fields(res) == std::vector<std::string>{want.first}), query);
    BOOST_TEST(str(res.json().at("errors").at(0), "code") == want.second, query);
  }
  auto all = c.get("/queues/" + q + "/messages?retrying=x&error_class=x&job_type=&order=x&offset=-1&limit=0&status=x");
  BOOST_TEST((error_fields(all) == std::vector<std::string>{"status", "limit", "offset", "order",
                                                            "job_type", "error_class", "retrying"}));
}

BOOST_AUTO_TEST_SUITE_END()

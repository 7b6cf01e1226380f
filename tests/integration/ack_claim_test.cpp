// Claim with acknowledgements (http-api B6), over real HTTP on both databases: the acks are
// applied exactly as /ack would and answered in "acked" (the answer's last member), bad items are
// answered on their own while the claim proceeds, a bad `ack` changes nothing, a claim that waits
// has committed its acks before it parks, and an ack resent under the lease the message
// succeeded with answers 200 without a second success (in /ack too).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

json::object ack_of(const json::object& m) {
  return json::object{{"id", m.at("id")}, {"lease_id", m.at("lease_id")}};
}

std::string status_of(HttpClient& c, const std::string& q, std::int64_t id) {
  return str(c.get(message_path(q, id)).json(), "status");
}

// The outcomes of the message's finished attempts, oldest first.
std::vector<std::string> outcomes(HttpClient& c, const std::string& q, std::int64_t id) {
  std::vector<std::string> out;
  auto history = c.get(message_path(q, id, "attempts")).json();
  for (const auto& a : history.at("attempts").as_array()) {
    if (a.at("outcome").is_string()) out.emplace_back(a.at("outcome").as_string());
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(claim_with_ack)

BOOST_AUTO_TEST_CASE(acks_ride_with_the_next_claim_and_answer_last) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("ackc");
  enqueue(c, q, "one");
  enqueue(c, q, "two");
  auto first = claim_one(c, q);
  // A plain claim (it takes "two") gets Part A's answer, without "acked".
  BOOST_TEST(!claim(c, q).json().as_object().contains("acked"));
  auto res = claim(c, q, json::object{{"ack", json::array{ack_of(first)}}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  auto body = res.json().as_object();
  BOOST_TEST(body.at("claimed").as_bool() == false);  // "two" is leased already
  const auto& acked = body.at("acked").as_array();
  BOOST_REQUIRE_EQUAL(acked.size(), 1u);
  BOOST_TEST(acked[0].at("id").as_int64() == first.at("id").as_int64());
  BOOST_TEST(acked[0].at("status").as_int64() == 200);
  BOOST_TEST(acked[0].at("error").is_null());
  BOOST_TEST(res.body.rfind(R"(,"acked":[)") > res.body.find(R"("message":)"));
  BOOST_TEST(res.body.back() == '}');
  BOOST_TEST(status_of(c, q, first.at("id").as_int64()) == "succeeded");

  // With work waiting: the ack and the next message in one answer.
  enqueue(c, q, "three");
  auto held = claim(c, q, json::object{{"ack", json::array{}}});
  BOOST_TEST(held.json().at("acked").as_array().empty());
  auto third = held.json().at("message").as_object();
  enqueue(c, q, "four");
  auto next = claim(c, q, json::object{{"ack", json::array{ack_of(third)}}}).json();
  BOOST_TEST(next.at("claimed").as_bool());
  BOOST_TEST(str(next.at("message"), "payload") == "four");
  BOOST_TEST(next.at("acked").as_array()[0].at("status").as_int64() == 200);
  BOOST_TEST(status_of(c, q, third.at("id").as_int64()) == "succeeded");
}

BOOST_AUTO_TEST_CASE(bad_items_are_answered_alone_and_the_claim_proceeds) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("ackc");
  for (const char* p : {"a", "b", "c"}) enqueue(c, q, p);
  auto a = claim_one(c, q);
  auto b = claim_one(c, q);
  json::array items{json::object{{"id", "x"}},
                    json::object{{"id", a.at("id")}, {"lease_id", 7}},
                    json::object{{"id", b.at("id")}, {"lease_id", "not-the-lease"}},
                    ack_of(a),
                    json::object{{"id", 999999999}, {"lease_id", "l"}}};
  auto res = claim(c, q, json::object{{"ack", items}, {"max", 5}});
  BOOST_REQUIRE_EQUAL(res.status, 200);
  auto body = res.json();
  BOOST_TEST(body.at("messages").as_array().size() == 1u);  // "c"
  std::vector<std::int64_t> statuses;
  for (const auto& r : body.at("acked").as_array()) statuses.push_back(r.at("status").as_int64());
  BOOST_TEST((statuses == std::vector<std::int64_t>{422, 422, 409, 200, 404}));
  BOOST_TEST(status_of(c, q, a.at("id").as_int64()) == "succeeded");
  BOOST_TEST(status_of(c, q, b.at("id").as_int64()) == "processing");
}

BOOST_AUTO_TEST_CASE(an_ack_that_is_not_a_list_of_at_most_1000_changes_nothing) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("ackc");
  enqueue(c, q, "a");
  enqueue(c, q, "b");
  auto a = claim_one(c, q);
  json::array too_many;
  for (int i = 0; i < 1001; ++i) too_many.push_back(ack_of(a));
  for (const json::value& bad : {json::value(ack_of(a)), json::value("x"), json::value(too_many)}) {
    auto res = claim(c, q, json::object{{"ack", bad}});
    BOOST_TEST(res.status == 422);
    BOOST_TEST((error_fields(res) == std::vector<std::string>{"ack"}));
  }
  BOOST_TEST(status_of(c, q, a.at("id").as_int64()) == "processing");
  BOOST_TEST(claim(c, q).json().at("claimed").as_bool());  // "b" was not taken by a refused claim
}

BOOST_AUTO_TEST_CASE(a_claim_that_waits_has_committed_its_acks_before_it_parks) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("ackc");
  enqueue(c, q, "only");
  auto m = claim_one(c, q);
  auto waiting = std::async(std::launch::async, [&] {
    HttpClient w(shared_dlqd().port());
    return claim(w, q, json::object{{"ack", json::array{ack_of(m)}}, {"wait_seconds", 2}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  BOOST_TEST(status_of(c, q, m.at("id").as_int64()) == "succeeded");  // while the claim waits
  auto res = waiting.get();
  BOOST_REQUIRE_EQUAL(res.status, 200);
  BOOST_TEST(res.json().at("claimed").as_bool() == false);
  BOOST_TEST(res.json().at("acked").as_array()[0].at("status").as_int64() == 200);
}

BOOST_AUTO_TEST_CASE(an_ack_resent_under_its_lease_answers_200_once_succeeded) {
  DlqdProcess node{DlqdOptions("{}")};  // its own, so that /metrics counts this queue alone
  HttpClient c(node.port());
  std::string q = "resent";
  enqueue(c, q, "a");
  auto m = claim_one(c, q);
  auto id = m.at("id").as_int64();
  json::array again{ack_of(m)};
  BOOST_TEST(claim(c, q, json::object{{"ack", again}}).json().at("acked").as_array()[0]
                 .at("status").as_int64() == 200);
  // The answer was "lost": the worker resends, by claim and by /ack.
  BOOST_TEST(claim(c, q, json::object{{"ack", again}}).json().at("acked").as_array()[0]
                 .at("status").as_int64() == 200);
  auto acked = c.post("/queues/" + q + "/ack", json::object{{"items", again}}).json();
  BOOST_TEST(acked.at("results").as_array()[0].at("status").as_int64() == 200);
  BOOST_TEST((outcomes(c, q, id) == std::vector<std::string>{"succeeded"}));  // one success
  auto metrics = c.get("/metrics").body;
  BOOST_TEST(metrics.find("\ndlq_succeeded_total{queue=\"resent\"} 1\n") != std::string::npos);
  // The single succeed route keeps Part A's answer (that lease is over); another lease, or a
  // later step under the old one, is refused as before.
  auto single = c.post(message_path(q, id, "succeed"), json::object{{"lease_id", m.at("lease_id")}});
  BOOST_TEST(single.status == 409);
  BOOST_TEST(str(single.json(), "type") == "https://dlq.dev/problems/lease-lost");
  json::array other{json::object{{"id", id}, {"lease_id", "other"}}};
  auto wrong = c.post("/queues/" + q + "/ack", json::object{{"items", other}}).json();
  BOOST_TEST(wrong.at("results").as_array()[0].at("status").as_int64() == 409);
  auto late_fail = c.post(message_path(q, id, "fail"),
                          json::object{{"lease_id", m.at("lease_id")}, {"error", "x"}});
  BOOST_TEST(late_fail.status == 409);
  BOOST_TEST(str(late_fail.json(), "type") == "https://dlq.dev/problems/lease-lost");
}

BOOST_AUTO_TEST_SUITE_END()

// B6 batches and B5 queue stats.
#include <boost/test/unit_test.hpp>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(batches)

BOOST_AUTO_TEST_CASE(batch_enqueue_answers_in_input_order) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  auto existing = enqueue(c, q, "already here", {{"idempotency_key", "dup"}});
  json::array items{json::object{{"payload", "a"}},
                    json::object{{"payload", "b"}, {"priority", 5}, {"job_type", "t"}},
                    json::object{{"payload", "c"}, {"idempotency_key", "dup"}},
                    json::object{{"payload", "d"}, {"delay_seconds", 60}}};
  auto res = c.post("/queues/" + q + "/messages/batch", json::object{{"messages", items}},
                    now_header(at_s(0)));
  BOOST_TEST(res.status == 201);
  auto body = res.json().as_object();
  BOOST_TEST(body.at("count").as_int64() == 4);
  auto& list = body.at("messages").as_array();
  BOOST_TEST(str(list[0], "payload") == "a");
  BOOST_TEST(list[1].at("priority").as_int64() == 5);
  BOOST_TEST(list[2].at("id") == existing.at("id"));  // deduplicated: the existing message
  BOOST_TEST(str(list[2], "payload") == "already here");
  BOOST_TEST(str(list[3], "retry_after") == at_s(60));
  BOOST_TEST(c.get("/queues/" + q + "/messages").json().at("count").as_int64() == 4);
}

BOOST_AUTO_TEST_CASE(one_invalid_item_rejects_the_whole_batch) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  json::array items{json::object{{"payload", "ok"}}, json::object{{"payload", ""}},
                    json::object{{"payload", "x"}, {"max_retries", 0}}, json::value(5)};
  auto res = c.post("/queues/" + q + "/messages/batch", json::object{{"messages", items}});
  BOOST_TEST(res.status == 422);
  BOOST_TEST(error_fields(res) ==
                 (std::vector<std::string>{"messages[1].payload", "messages[2].max_retries", "messages[3]"}),
             boost::test_tools::per_element());
  BOOST_TEST(c.get("/queues/" + q + "/messages").json().at("count").as_int64() == 0);

  BOOST_TEST(error_fields(c.post("/queues/" + q + "/messages/batch", json::object{})) ==
             std::vector<std::string>{"messages"});
  BOOST_TEST(c.post("/queues/" + q + "/messages/batch", json::object{{"messages", json::array{}}}).status == 422);
  json::array too_many;
  for (int i = 0; i < 1001; ++i) too_many.push_back(json::object{{"payload", "x"}});
  BOOST_TEST(c.post("/queues/" + q + "/messages/batch", json::object{{"messages", too_many}}).status == 422);
  json::array thousand;
  for (int i = 0; i < 1000; ++i) thousand.push_back(json::object{{"payload", std::to_string(i)}});
  BOOST_TEST(c.post("/queues/" + q + "/messages/batch", json::object{{"messages", thousand}}).status == 201);
}

BOOST_AUTO_TEST_CASE(ack_answers_per_item) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  for (int i = 0; i < 3; ++i) enqueue(c, q, std::to_string(i));
  auto claimed = claim(c, q, {{"max", 3}}).json().at("messages").as_array();
  auto pending = enqueue(c, q, "not claimed");
  json::array items{
      json::object{{"id", claimed[0].at("id")}, {"lease_id", claimed[0].at("lease_id")}},
      json::object{{"id", claimed[1].at("id")}},
      json::object{{"id", claimed[2].at("id")}, {"lease_id", "stale"}},
      json::object{{"id", pending.at("id")}},
      json::object{{"id", 999999999}},
      json::object{{"id", "7"}},
  };
  auto res = c.post("/queues/" + q + "/ack", json::object{{"items", items}});
  BOOST_TEST(res.status == 200);
  auto results = res.json().at("results").as_array();
  BOOST_REQUIRE_EQUAL(results.size(), 6u);
  std::vector<std::int64_t> statuses;
  for (const auto& r : results) statuses.push_back(r.at("status").as_int64());
  BOOST_TEST(statuses == (std::vector<std::int64_t>{200, 200, 409, 409, 404, 422}),
             boost::test_tools::per_element());
  BOOST_TEST(results[0].at("error").is_null());
  BOOST_TEST(results[0].at("id") == claimed[0].at("id"));
  BOOST_TEST(str(results[3], "error") == "only processing messages can succeed");
  BOOST_TEST(str(c.get(message_path(q, claimed[2].at("id").as_int64())).json(), "status") == "processing");
  BOOST_TEST(c.post("/queues/" + q + "/ack", json::object{{"items", json::array{}}}).status == 422);
}

BOOST_AUTO_TEST_CASE(queue_stats_count_every_status) {
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue("stats");
  auto empty = c.get("/queues/" + q + "/stats").json();
  BOOST_TEST(empty.at("ready").as_int64() == 0);
  BOOST_TEST(empty.at("oldest_ready_age_seconds").is_null());
  enqueue(c, q, "ready 1");
  enqueue(c, q, "ready 2");
  enqueue(c, q, "later", {{"delay_seconds", 3600}});
  enqueue(c, q, "working");
  enqueue(c, q, "dies", {{"max_retries", 1}});
  auto first = claim_one(c, q);  // ready 1
  c.post(message_path(q, first.at("id").as_int64(), "succeed"));
  claim_one(c, q);  // ready 2 stays processing
  auto working = claim_one(c, q);
  c.post(message_path(q, working.at("id").as_int64(), "fail"), json::object{{"retryable", false}});
  auto stats = c.get("/queues/" + q + "/stats").json().as_object();
  std::vector<std::string> keys;
  for (const auto& [k, v] : stats) keys.emplace_back(k);
  BOOST_TEST(keys == (std::vector<std::string>{"queue", "ready", "scheduled", "processing", "succeeded", "dead",
                                               "dismissed", "oldest_ready_age_seconds",
                                               "oldest_dead_age_seconds"}),
             boost::test_tools::per_element());
  BOOST_TEST(stats.at("ready").as_int64() == 1);
  BOOST_TEST(stats.at("scheduled").as_int64() == 1);
  BOOST_TEST(stats.at("processing").as_int64() == 1);
  BOOST_TEST(stats.at("succeeded").as_int64() == 1);
  BOOST_TEST(stats.at("dead").as_int64() == 1);
  BOOST_TEST(stats.at("oldest_ready_age_seconds").as_int64() >= 0);
  BOOST_TEST(stats.at("oldest_dead_age_seconds").as_int64() >= 0);

  auto all = c.get("/queues").json();
  bool found = false;
  for (const auto& item : all.at("queues").as_array()) {
    if (str(item, "queue") == q) {
      found = true;
      BOOST_TEST(item.at("dead").as_int64() == 1);
    }
  }
  BOOST_TEST(found);
  BOOST_TEST(c.get("/queues/bad.name/stats").status == 404);
}

BOOST_AUTO_TEST_SUITE_END()

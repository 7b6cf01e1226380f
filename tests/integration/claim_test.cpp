// Claims under concurrency: many workers on separate connections never receive the same
// message twice.
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <set>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(claims)

BOOST_AUTO_TEST_CASE(concurrent_claimers_never_share_a_message) {
  std::string q = fresh_queue();
  constexpr int kMessages = 400;
  constexpr int kWorkers = 16;
  {
    HttpClient c(shared_dlqd().port());
    json::array batch;
    for (int i = 0; i < kMessages; ++i) batch.push_back(json::object{{"payload", std::to_string(i)}});
    auto res = c.post("/queues/" + q + "/messages/batch", json::object{{"messages", batch}});
    BOOST_REQUIRE_EQUAL(res.status, 201);
  }
  std::mutex mu;
  std::multiset<std::int64_t> seen;
  std::vector<std::string> failures;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      try {
        HttpClient c(shared_dlqd().port());
        for (;;) {
          auto res = c.post("/queues/" + q + "/claim");
          if (res.status != 200) {
            std::lock_guard lock(mu);
            failures.push_back(res.body);
            return;
          }
          auto body = res.json();
          if (!body.at("claimed").as_bool()) return;
          auto id = body.at("message").at("id").as_int64();
          auto done = c.post(message_path(q, id, "succeed"));
          std::lock_guard lock(mu);
          seen.insert(id);
          if (done.status != 200) failures.push_back(done.body);
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        failures.push_back(e.what());
      }
    });
  }
  for (auto& t : workers) t.join();
  BOOST_TEST(failures.empty(), (failures.empty() ? "" : failures.front()));
  BOOST_TEST(seen.size() == static_cast<std::size_t>(kMessages));
  std::set<std::int64_t> unique(seen.begin(), seen.end());
  BOOST_TEST(unique.size() == seen.size());
  HttpClient c(shared_dlqd().port());
  auto succeeded = c.get("/queues/" + q + "/messages?status=succeeded&limit=100&offset=300").json();
  BOOST_TEST(succeeded.at("count").as_int64() == 100);
}

BOOST_AUTO_TEST_SUITE_END()

// B1: long-poll claims park until work is due and are woken by events, never by polling.
// Real time is the point here, so bounds are generous (these run under ASan on 2 cores).
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

namespace {

double elapsed_s(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(long_poll)

BOOST_AUTO_TEST_CASE(a_parked_claim_wakes_on_enqueue) {
  std::string q = fresh_queue();
  HttpResponse answer;
  double waited = 0;
  std::thread claimer([&] {
    HttpClient c(shared_dlqd().port());
    auto start = Clock::now();
    answer = claim(c, q, {{"wait_seconds", 20}});
    waited = elapsed_s(start);
  });
  std::this_thread::sleep_for(milliseconds(300));
  HttpClient producer(shared_dlqd().port());
  auto sent = Clock::now();
  auto m = enqueue(producer, q, "wake up");
  claimer.join();
  BOOST_TEST(answer.status == 200);
  auto body = answer.json();
  BOOST_TEST(body.at("claimed").as_bool());
  BOOST_TEST(body.at("message").at("id") == m.at("id"));
  BOOST_TEST(waited < 10.0);
  BOOST_TEST(elapsed_s(sent) < 5.0);
}

BOOST_AUTO_TEST_CASE(the_wait_query_parameter_works_too) {
  std::string q = fresh_queue();
  HttpResponse answer;
  std::thread claimer([&] {
    HttpClient c(shared_dlqd().port());
    answer = c.post("/queues/" + q + "/claim?wait=20");
  });
  std::this_thread::sleep_for(milliseconds(300));
  HttpClient producer(shared_dlqd().port());
  enqueue(producer, q, "x");
  claimer.join();
  BOOST_TEST(answer.json().at("claimed").as_bool());
}

BOOST_AUTO_TEST_CASE(a_parked_claim_wakes_when_retry_after_passes_with_no_other_event) {
  std::string q = fresh_queue();
  HttpClient c(shared_dlqd().port());
  auto id = enqueue(c, q, "retry me").at("id").as_int64();
  claim_one(c, q);
  auto failed = c.post(message_path(q, id, "fail"), json::object{{"error", "transient"}}).json();
  BOOST_REQUIRE_EQUAL(str(failed, "status"), "pending");  // due in 2 s (real clock)
  auto start = Clock::now();
  auto res = claim(c, q, {{"wait_seconds", 20}});
  double waited = elapsed_s(start);
  BOOST_TEST(res.json().at("claimed").as_bool());
  BOOST_TEST(res.json().at("message").at("id").as_int64() == id);
  BOOST_TEST(waited > 1.0);  // not before retry_after
  BOOST_TEST(waited < 6.0);
}

BOOST_AUTO_TEST_CASE(an_empty_wait_ends_with_claimed_false_on_time) {
  HttpClient c(shared_dlqd().port());
  auto start = Clock::now();
  auto res = claim(c, fresh_queue(), {{"wait_seconds", 1}});
  double waited = elapsed_s(start);
  BOOST_TEST(res.status == 200);
  BOOST_TEST(res.body == R"({"claimed":false,"message":null})");
  BOOST_TEST(waited >= 0.95);
  BOOST_TEST(waited < 4.0);
  auto batch = claim(c, fresh_queue(), {{"wait_seconds", 1}, {"max", 5}});
  BOOST_TEST(batch.body == R"({"claimed":false,"messages":[]})");
}

BOOST_AUTO_TEST_CASE(twenty_parked_claimers_and_twenty_enqueues_each_message_once) {
  std::string q = fresh_queue();
  constexpr int kClaimers = 20;
  std::mutex mu;
  std::multiset<std::int64_t> got;
  std::vector<std::string> problems;
  std::vector<std::thread> claimers;
  for (int i = 0; i < kClaimers; ++i) {
    claimers.emplace_back([&] {
      try {
        HttpClient c(shared_dlqd().port());
        auto res = claim(c, q, {{"wait_seconds", 30}});
        auto body = res.json();
        std::lock_guard lock(mu);
        if (!body.at("claimed").as_bool()) {
          problems.push_back("a claimer got nothing");
        } else {
          got.insert(body.at("message").at("id").as_int64());
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        problems.push_back(e.what());
      }
    });
  }
  std::this_thread::sleep_for(milliseconds(500));
  HttpClient producer(shared_dlqd().port());
  std::set<std::int64_t> sent;
  for (int i = 0; i < kClaimers; ++i) sent.insert(enqueue(producer, q, std::to_string(i)).at("id").as_int64());
  for (auto& t : claimers) t.join();
  BOOST_TEST(problems.empty(), (problems.empty() ? "" : problems.front()));
  BOOST_TEST(got.size() == sent.size());
  BOOST_TEST((std::set<std::int64_t>(got.begin(), got.end()) == sent));
}

BOOST_AUTO_TEST_CASE(waiters_are_served_in_arrival_order) {
  std::string q = fresh_queue();
  std::vector<std::int64_t> received(3, 0);
  std::vector<std::thread> claimers;
  for (int i = 0; i < 3; ++i) {
    claimers.emplace_back([&, i] {
      HttpClient c(shared_dlqd().port());
      auto res = claim(c, q, {{"wait_seconds", 30}});
      received[i] = res.json().at("message").at("id").as_int64();
    });
    std::this_thread::sleep_for(milliseconds(300));  // park in a known order
  }
  HttpClient producer(shared_dlqd().port());
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(enqueue(producer, q, std::to_string(i)).at("id").as_int64());
    std::this_thread::sleep_for(milliseconds(200));
  }
  for (auto& t : claimers) t.join();
  BOOST_TEST(received == ids, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_claimer_that_disconnects_leaves_no_ghost_and_takes_nothing) {
  std::string q = fresh_queue();
  {
    HttpClient c(shared_dlqd().port());
    std::string body = R"({"wait_seconds": 30})";
    // Park a claim, then hang up without reading the answer.
    c.raw("POST /queues/" + q + "/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
              std::to_string(body.size()) + "\r\n\r\n" + body,
          300);
  }
  std::this_thread::sleep_for(milliseconds(300));
  HttpClient c(shared_dlqd().port());
  auto m = enqueue(c, q, "for a live worker");
  std::this_thread::sleep_for(milliseconds(300));
  // Still pending: nobody claimed it for the departed client.
  BOOST_TEST(str(c.get(message_path(q, m.at("id").as_int64())).json(), "status") == "pending");
  auto start = Clock::now();
  auto res = claim(c, q, {{"wait_seconds", 5}});
  BOOST_TEST(res.json().at("claimed").as_bool());
  BOOST_TEST(elapsed_s(start) < 2.0);
}

BOOST_AUTO_TEST_CASE(a_claim_for_other_job_types_keeps_waiting) {
  std::string q = fresh_queue();
  HttpResponse answer;
  std::thread claimer([&] {
    HttpClient c(shared_dlqd().port());
    answer = claim(c, q, {{"wait_seconds", 20}, {"job_types", json::array{"sms"}}});
  });
  std::this_thread::sleep_for(milliseconds(300));
  HttpClient producer(shared_dlqd().port());
  auto email = enqueue(producer, q, "e", {{"job_type", "email"}});
  std::this_thread::sleep_for(milliseconds(300));
  auto sms = enqueue(producer, q, "s", {{"job_type", "sms"}});
  claimer.join();
  BOOST_TEST(answer.json().at("message").at("id") == sms.at("id"));
  BOOST_TEST(str(producer.get(message_path(q, email.at("id").as_int64())).json(), "status") == "pending");
}

BOOST_AUTO_TEST_CASE(metrics_count_parked_claims_and_group_commits) {
  auto value_of = [](const std::string& text, const std::string& name) {
    auto at = text.find("\n" + name + " ");
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, name << " missing from /metrics");
    return std::stoll(text.substr(at + name.size() + 2));
  };
  HttpClient c(shared_dlqd().port());
  std::string q = fresh_queue();
  // Parked claims are counted per queue; a queue with none has no sample.
  const std::string waiters = "dlq_long_poll_waiters{queue=\"" + q + "\"}";
  auto parked_in_q = [&](const std::string& text) -> long long {
    return text.find("\n" + waiters + " ") == std::string::npos ? 0 : value_of(text, waiters);
  };
  auto before = c.get("/metrics");
  BOOST_TEST(before.status == 200);
  BOOST_TEST(before.header("content-type") == "text/plain; version=0.0.4");
  BOOST_TEST(parked_in_q(before.body) == 0);
  std::thread claimer([&] {
    HttpClient w(shared_dlqd().port());
    claim(w, q, {{"wait_seconds", 20}});
  });
  long long parked = 0;
  for (int i = 0; i < 50 && parked == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    parked = parked_in_q(c.get("/metrics").body);
  }
  BOOST_TEST(parked == 1);
  enqueue(c, q, "done waiting");
  claimer.join();
  auto after = c.get("/metrics").body;
  BOOST_TEST(parked_in_q(after) == 0);
  long long commits = value_of(after, "dlq_store_commits_total");
  long long operations = value_of(after, "dlq_store_operations_total");
  BOOST_TEST(commits > value_of(before.body, "dlq_store_commits_total"));
  BOOST_TEST(operations >= commits);
}

BOOST_AUTO_TEST_SUITE_END()

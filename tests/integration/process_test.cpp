// dlqd as a process: durability across kill -9, graceful shutdown, configuration errors.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <thread>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(process)

BOOST_AUTO_TEST_CASE(acknowledged_changes_survive_kill_9) {
  TempDir dir;
  std::string url = fresh_database_url(dir.path().string());
  std::string q = fresh_queue();
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> succeeded;
  std::int64_t failed_id = 0;
  {
    DlqdProcess server(DlqdOptions{"{}", url});
    HttpClient c(server.port());
    for (int i = 0; i < 50; ++i) ids.push_back(enqueue(c, q, "m" + std::to_string(i)).at("id").as_int64());
    for (int i = 0; i < 20; ++i) {
      auto m = claim_one(c, q);
      auto res = c.post(message_path(q, m.at("id").as_int64(), "succeed"));
      BOOST_REQUIRE_EQUAL(res.status, 200);
      succeeded.push_back(m.at("id").as_int64());
    }
    auto m = claim_one(c, q);
    failed_id = m.at("id").as_int64();
    BOOST_REQUIRE_EQUAL(c.post(message_path(q, failed_id, "fail"), json::object{{"error", "e"}}).status, 200);
    server.kill9();
  }
  DlqdProcess restarted(DlqdOptions{"{}", url});
  HttpClient c(restarted.port());
  auto all = c.get("/queues/" + q + "/messages?limit=100").json();
  BOOST_TEST(all.at("count").as_int64() == 50);
  for (auto id : succeeded) {
    BOOST_TEST(str(c.get(message_path(q, id)).json(), "status") == "succeeded");
  }
  auto failed = c.get(message_path(q, failed_id)).json();
  BOOST_TEST(str(failed, "status") == "pending");
  BOOST_TEST(str(failed, "last_error") == "e");
  auto pending = c.get("/queues/" + q + "/messages?status=pending&limit=100").json();
  BOOST_TEST(pending.at("count").as_int64() == 30);
}

BOOST_AUTO_TEST_CASE(sigterm_finishes_in_flight_work_and_exits_0) {
  DlqdProcess server(DlqdOptions{});
  std::string q = fresh_queue();
  HttpClient c(server.port());
  enqueue(c, q, "x");
  // A long-poll on an empty queue is in flight when SIGTERM arrives.
  HttpResponse parked;
  std::thread waiter([&] {
    HttpClient w(server.port());
    parked = w.post("/queues/" + fresh_queue() + "/claim", json::object{{"wait_seconds", 30}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto started = std::chrono::steady_clock::now();
  int code = server.terminate();
  waiter.join();
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_TEST(code == 0);
  BOOST_TEST(parked.status == 200);
  BOOST_TEST(parked.body == R"({"claimed":false,"message":null})");
  BOOST_TEST(parked.header("connection") == "close");
  BOOST_TEST((took < std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_CASE(check_config_names_the_bad_key) {
  TempDir dir;
  auto write = [&](const std::string& text) {
    std::ofstream(dir.file("c.json")) << text;
    return dir.file("c.json");
  };
  auto ok = run_dlqd({"--config", write("// comment\n{\"limits\": {\"max_body_bytes\": 2048,},}"),
                      "--check-config"});
  BOOST_TEST(ok.exit_code == 0, ok.err);

  auto unknown = run_dlqd({"--config", write(R"({"limits": {"max_bodybytes": 1}})"), "--check-config"});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.err.find("limits.max_bodybytes") != std::string::npos, unknown.err);

  auto wrong_type = run_dlqd({"--config", write(R"({"threads": "four"})"), "--check-config"});
  BOOST_TEST(wrong_type.exit_code == 2);
  BOOST_TEST(wrong_type.err.find("\"threads\"") != std::string::npos, wrong_type.err);

  // Every documented key is built now (alerts were the last "not supported yet"): a bad value
  // of one is named like any other.
  auto bad_alerts = run_dlqd({"--config", write(R"({"alerts": {"webhook_url": "smtp://x"}})"),
                              "--check-config"});
  BOOST_TEST(bad_alerts.exit_code == 2);
  BOOST_TEST(bad_alerts.err.find("alerts.webhook_url") != std::string::npos, bad_alerts.err);

  auto bad_limit = run_dlqd({"--config", write(R"({"job_types": {"t": {"max_replays": 1001}}})"),
                             "--check-config"});
  BOOST_TEST(bad_limit.exit_code == 2);
  BOOST_TEST(bad_limit.err.find("job_types.t.max_replays") != std::string::npos, bad_limit.err);

  auto not_json = run_dlqd({"--config", write("{nope"), "--check-config"});
  BOOST_TEST(not_json.exit_code == 2);

  auto missing = run_dlqd({"--config", dir.file("absent.json"), "--check-config"});
  BOOST_TEST(missing.exit_code == 2);
}

BOOST_AUTO_TEST_CASE(print_config_merges_file_environment_and_flags) {
  TempDir dir;
  std::ofstream(dir.file("c.json")) << R"({"listen": "127.0.0.1:7000", "threads": 3})";
  auto res = run_dlqd({"--config", dir.file("c.json"), "--db", "sqlite:/tmp/x.db", "--print-config"},
                      {"DLQ_LISTEN=127.0.0.1:7001", "DLQ_LOG_LEVEL=debug"});
  BOOST_REQUIRE_EQUAL(res.exit_code, 0);
  auto merged = json::parse(res.out).as_object();
  BOOST_TEST(str(merged, "listen") == "127.0.0.1:7001");
  BOOST_TEST(merged.at("threads").as_int64() == 3);
  BOOST_TEST(str(merged.at("database"), "url") == "sqlite:/tmp/x.db");
  BOOST_TEST(str(merged.at("log"), "level") == "debug");
  auto flag = run_dlqd({"--config", dir.file("c.json"), "--listen", "127.0.0.1:7002", "--print-config"},
                       {"DLQ_LISTEN=127.0.0.1:7001"});
  BOOST_TEST(str(json::parse(flag.out), "listen") == "127.0.0.1:7002");
  auto bad_env = run_dlqd({"--print-config"}, {"DLQ_LOG_LEVEL=loud"});
  BOOST_TEST(bad_env.exit_code == 2);
  BOOST_TEST(bad_env.err.find("DLQ_LOG_LEVEL") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refuses_to_listen_beyond_loopback_without_tokens) {
  TempDir dir;
  auto res = run_dlqd({"--listen", "0.0.0.0:0", "--db", "sqlite:" + dir.file("x.db")});
  BOOST_TEST(res.exit_code == 2);
  BOOST_TEST(res.err.find("refusing") != std::string::npos, res.err);
}

BOOST_AUTO_TEST_SUITE_END()

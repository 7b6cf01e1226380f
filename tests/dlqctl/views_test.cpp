// dlqctl's read-only commands against a live dlqd: tables for people, JSON that parses and
// matches the server, exit statuses 0/1/2.
#include <boost/test/unit_test.hpp>

#include "dlqctl/dlqctl_support.hpp"
#include "support/temp_dir.hpp"

namespace json = boost::json;
using namespace dlq::test;

BOOST_AUTO_TEST_SUITE(views)

BOOST_AUTO_TEST_CASE(queues_and_stats) {
  std::string q = unique_name("ctlq");
  make_dead(q, "one");
  auto r = dlqctl({"queues"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.starts_with("QUEUE"));
  BOOST_TEST(r.out.find(q) != std::string::npos);

  r = dlqctl({"--json", "queues"});
  REQUIRE_EXIT(r, 0);
  bool found = false;
  json::value all = json::parse(r.out);
  for (const auto& item : all.at("queues").as_array()) {
    if (str(item, "queue") == q) {
      found = true;
      BOOST_TEST(item.at("dead").as_int64() == 1);
    }
  }
  BOOST_TEST(found);

  r = dlqctl({"stats", q});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("dead:") != std::string::npos);
  r = dlqctl({"stats", q, "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out).at("dead").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(ls_queue_show_attempts) {
  std::string q = unique_name("ctlls");
  auto id = make_dead(q, R"({"to":"a@example.com","password":"hunter2"})", "email");
  auto r = dlqctl({"ls", "--queue", q});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("dead") != std::string::npos);
  BOOST_TEST(r.out.find("1/1") != std::string::npos);
  r = dlqctl({"ls", "--queue", q, "--status", "pending", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out).at("count").as_int64() == 0);
  r = dlqctl({"ls", "--queue", q, "--status", "nonsense"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("422 validation-failed") != std::string::npos);
  BOOST_TEST(r.err.find("status:") != std::string::npos);

  r = dlqctl({"show", q, std::to_string(id)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("status:") != std::string::npos);
  BOOST_TEST(r.out.find("hunter2") == std::string::npos);  // the server's view for people
  r = dlqctl({"show", q, std::to_string(id), "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out).at("id").as_int64() == id);
  r = dlqctl({"show", q, "999999999"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("404 message-not-found") != std::string::npos);

  r = dlqctl({"attempts", q, std::to_string(id)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("failed") != std::string::npos);
  BOOST_TEST(r.out.find("smtp timeout") != std::string::npos);
  r = dlqctl({"attempts", q, std::to_string(id), "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out).at("count").as_int64() == 1);
}

BOOST_AUTO_TEST_CASE(ls_dead_filters) {
  std::string q = unique_name("ctldead");
  auto a = make_dead(q, "a", "email", "timeout");
  auto b = make_dead(q, "b", "sms", "invalid_input");
  auto r = dlqctl({"ls", "--dead", "--queue", q});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("DEAD REASON") != std::string::npos);
  BOOST_TEST(r.out.find("email") != std::string::npos);
  BOOST_TEST(r.out.find("sms") != std::string::npos);

  auto ids = [](const CommandResult& res) {
    std::vector<std::int64_t> out;
    json::value page = json::parse(res.out);
    for (const auto& m : page.at("messages").as_array()) out.push_back(m.at("id").as_int64());
    return out;
  };
  r = dlqctl({"ls", "--dead", "--queue", q, "--job-type", "sms", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids(r) == std::vector<std::int64_t>{b});
  r = dlqctl({"ls", "--dead", "--queue", q, "--error-class", "timeout", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids(r) == std::vector<std::int64_t>{a});
  // invalid_input is not retryable: dead at once with reason non_retryable.
  r = dlqctl({"ls", "--dead", "--queue", q, "--reason", "non_retryable", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids(r) == std::vector<std::int64_t>{b});
  r = dlqctl({"ls", "--dead", "--queue", q, "--since", "2000-01-01T00:00:00Z", "--until",
              "2000-01-02 00:00:00", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids(r).empty());
  r = dlqctl({"ls", "--dead", "--queue", q, "--limit", "1"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.err.find("(more: --after " + std::to_string(a) + ")") != std::string::npos);
}

// Issue 31, item 6: the queues a page at a time, by name.
BOOST_AUTO_TEST_CASE(queues_page_by_name_with_limit_and_after) {
  std::string q = unique_name("ctlpage");
  for (const std::string& name : {q + "_a", q + "_b", q + "_c"}) make_dead(name, "one");
  // Nothing sorts between q_a and q_b, nor between q_b and q_c.
  auto r = dlqctl({"queues", "--limit", "1", "--after", q + "_a"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find(q + "_b") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(q + "_a") == std::string::npos, r.out);
  BOOST_TEST(r.out.find(q + "_c") == std::string::npos, r.out);
  BOOST_TEST(r.err.find("(more: --after " + q + "_b)") != std::string::npos, r.err);
  r = dlqctl({"--json", "queues", "--limit", "2", "--after", q + "_a"});
  REQUIRE_EXIT(r, 0);
  auto page = json::parse(r.out);
  BOOST_REQUIRE_EQUAL(page.at("queues").as_array().size(), 2u);
  BOOST_TEST(str(page.at("queues").as_array()[1], "queue") == q + "_c");
  // The server checks the page's parameters.
  r = dlqctl({"queues", "--limit", "1001"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("limit") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(health_and_access) {
  auto r = dlqctl({"health"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "ok\n");
  r = dlqctl({"health", "--ready", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(str(json::parse(r.out), "status") == "ready");
  // No token: 401; the reader token may look but not replay: 403. Both exit 1, in words.
  r = dlqctl_raw({"--url", server_url(), "queues"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("401 unauthorized") != std::string::npos);
  r = dlqctl_raw({"queues"}, {"DLQ_URL=" + server_url(), "DLQ_TOKEN=" + kReaderToken});
  REQUIRE_EXIT(r, 0);
  r = dlqctl_raw({"replay", "q", "1"}, {"DLQ_URL=" + server_url(), "DLQ_TOKEN=" + kReaderToken});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("403 forbidden") != std::string::npos);
  BOOST_TEST(r.err.find(kReaderToken) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_usage_exits_2) {
  std::vector<std::vector<std::string>> cases = {
      {},
      {"bogus"},
      {"ls"},                                   // needs --queue or --dead
      {"ls", "--queue", "q", "--job-type", "x"},  // a filter flag belongs to ls --dead
      {"show", "q"},                             // needs an id
      {"dismiss", "q", "1"},                     // needs --reason
      {"purge", "q"},                            // needs --status
      {"purge", "q", "--status", "pending", "--yes"},
      {"ls", "--dead", "--since", "yesterday"},
      {"enqueue", "q", "x", "--delay", "soon"},
      {"run", "1", "explode"},
      {"queues", "--dead"},
      {"--url", "ftp://example.com", "queues"},
      {"--url", "http://", "queues"},
  };
  for (const auto& args : cases) {
    auto r = dlqctl_raw(args, {"DLQ_URL=" + server_url(), "DLQ_TOKEN=" + kAdminToken});
    BOOST_TEST_CONTEXT((args.empty() ? "(none)" : args.front()) << " " << (args.size() > 1 ? args[1] : "")) {
      BOOST_TEST(r.exit_code == 2);
      BOOST_TEST(r.err.find("dlqctl: ") == 0u);
      BOOST_TEST(r.out.empty());
    }
  }
  auto help = dlqctl_raw({"--help"});
  REQUIRE_EXIT(help, 0);
  BOOST_TEST(help.out.find("replay --dead") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hash_token_matches_dlqd) {
  auto ours = dlqctl_raw({"hash-token"}, {}, kAdminToken + "\n");
  REQUIRE_EXIT(ours, 0);
  auto theirs = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), kAdminToken + "\n");
  BOOST_TEST(theirs.exit_code == 0);
  BOOST_TEST(ours.out == theirs.out);
  BOOST_TEST(ours.out.size() == 65u);
  auto empty = dlqctl_raw({"hash-token"}, {}, "");
  REQUIRE_EXIT(empty, 2);
}

BOOST_AUTO_TEST_SUITE_END()

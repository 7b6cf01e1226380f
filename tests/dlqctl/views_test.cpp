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

// Issue 31, item 5: the history is paged (--limit, --after) with the server's next_after as the
// hint, and a folded run of releases shows its count.
BOOST_AUTO_TEST_CASE(attempts_pages_with_limit_and_after) {
  std::string q = unique_name("ctlhist");
  auto& c = setup_client();
  auto res = c.post("/queues/" + q + "/messages",
                    json::object{{"payload", "x"}, {"max_retries", 5}}, admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 201);
  std::string path = "/queues/" + q + "/messages/" + std::to_string(res.json().at("id").as_int64());
  auto turn = [&](const std::string& action, json::object body) {
    auto claimed = c.post("/queues/" + q + "/claim", json::object{}, admin_headers());
    BOOST_REQUIRE_EQUAL(claimed.status, 200);
    body["lease_id"] = str(claimed.json().at("message"), "lease_id");
    BOOST_REQUIRE_EQUAL(c.post(path + "/" + action, body, admin_headers()).status, 200);
  };
  turn("fail", {{"error", "first"}, {"retry_in", 0}});
  turn("fail", {{"error", "second"}, {"retry_in", 0}});
  turn("release", {});
  turn("release", {});  // folded into the one before
  std::string id = path.substr(path.rfind('/') + 1);

  auto r = dlqctl({"attempts", q, id, "--limit", "2"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("first") != std::string::npos);
  BOOST_TEST(r.out.find("second") != std::string::npos);
  BOOST_TEST(r.out.find("released") == std::string::npos);
  BOOST_TEST(r.err.find("(more: --after 2)") != std::string::npos);
  r = dlqctl({"attempts", q, id, "--limit", "2", "--after", "2"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("released x2") != std::string::npos);
  BOOST_TEST(r.out.find("first") == std::string::npos);
  BOOST_TEST(r.err.find("more:") == std::string::npos);
  r = dlqctl({"attempts", q, id, "--json", "--limit", "1", "--after", "1"});
  REQUIRE_EXIT(r, 0);
  json::value page = json::parse(r.out);
  BOOST_TEST(page.at("count").as_int64() == 1);
  BOOST_TEST(page.at("next_after").as_int64() == 2);
  r = dlqctl({"attempts", q, id, "--limit", "1001"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("limit:") != std::string::npos);
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

// Issue 31, items 4 and 13: text from producers and workers reaches the operator's terminal
// only as escapes, and the secrets in it masked.
namespace hostile_text {

// OSC 52 (writes the clipboard), CSI 2J (clears the screen), CR, BS and U+202E (right-to-left
// override), each with the escape dlqctl prints for it.
const std::vector<std::pair<std::string, std::string>> kHostile = {
    {"\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"},
    {"\x1b[2J", "\\x1b[2J"},
    {"\r", "\\x0d"},
    {"\b", "\\x08"},
    {"\xe2\x80\xae", "\\u202e"},
};

std::string hostile(const std::string& prefix) {
  std::string s = prefix;
  for (const auto& [raw, escaped] : kHostile) s += raw;
  return s;
}

// A dead message whose job type and last error hold every hostile sequence.
std::int64_t make_hostile_dead(const std::string& queue, const std::string& payload,
                               const std::string& job_type, const std::string& error) {
  auto& c = setup_client();
  auto res = c.post("/queues/" + queue + "/messages",
                    json::object{{"payload", payload}, {"max_retries", 1}, {"job_type", job_type}},
                    admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 201);
  std::int64_t id = res.json().at("id").as_int64();
  BOOST_REQUIRE_EQUAL(c.post("/queues/" + queue + "/claim", json::object{}, admin_headers()).status, 200);
  auto failed = c.post("/queues/" + queue + "/messages/" + std::to_string(id) + "/fail",
                       json::object{{"error", error}, {"error_class", "transient"}}, admin_headers());
  BOOST_REQUIRE_EQUAL(failed.status, 200);
  return id;
}

// No raw hostile byte anywhere in what dlqctl wrote for people; every escape in its stdout.
void require_escaped(const CommandResult& r, const std::string& what) {
  BOOST_TEST_CONTEXT(what << "\nstdout: " << r.out << "\nstderr: " << r.err) {
    for (const std::string* stream : {&r.out, &r.err}) {
      for (char c : {'\x1b', '\x07', '\r', '\b'}) BOOST_TEST(stream->find(c) == std::string::npos);
      BOOST_TEST(stream->find("\xe2\x80\xae") == std::string::npos);
    }
    for (const auto& [raw, escaped] : kHostile) BOOST_TEST(r.out.find(escaped) != std::string::npos);
  }
}

}  // namespace hostile_text

BOOST_AUTO_TEST_CASE(human_output_escapes_controls_and_bidi_json_stays_exact) {
  using namespace hostile_text;
  std::string q = unique_name("ctlhostile");
  const std::string job_type = hostile("J");
  auto id = make_hostile_dead(q, "p", job_type, hostile("E"));
  const std::string msg = std::to_string(id);

  auto r = dlqctl({"ls", "--dead", "--queue", q});
  REQUIRE_EXIT(r, 0);
  require_escaped(r, "ls --dead");
  r = dlqctl({"show", q, msg});
  REQUIRE_EXIT(r, 0);
  require_escaped(r, "show");
  r = dlqctl({"attempts", q, msg});
  REQUIRE_EXIT(r, 0);
  require_escaped(r, "attempts");
  r = dlqctl({"replay", "--dead", "--queue", q, "--dry-run"});
  REQUIRE_EXIT(r, 0);
  require_escaped(r, "replay --dead --dry-run");
  // The preview before the y/N question, and the question itself.
  r = dlqctl({"replay", "--dead", "--queue", q, "--job-type", job_type}, "n\n");
  REQUIRE_EXIT(r, 1);
  require_escaped(r, "replay --dead, answered no");
  BOOST_TEST(r.err.find("[y/N]") != std::string::npos);
  // A problem that repeats what it was given.
  r = dlqctl({"run", "1", "\x1b[2J\xe2\x80\xae"});
  REQUIRE_EXIT(r, 2);
  BOOST_TEST(r.err.find("\\x1b[2J\\u202e") != std::string::npos);
  BOOST_TEST(r.err.find('\x1b') == std::string::npos);

  // --json is the server's answer, byte for byte.
  auto& c = setup_client();
  for (const auto& [args, target] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"ls", "--dead", "--queue", q, "--json"}, "/dlq?queue=" + q},
           {{"show", q, msg, "--json"}, "/queues/" + q + "/messages/" + msg},
           {{"attempts", q, msg, "--json"}, "/queues/" + q + "/messages/" + msg + "/attempts"}}) {
    r = dlqctl(args);
    REQUIRE_EXIT(r, 0);
    auto body = c.get(target, admin_headers());
    BOOST_REQUIRE_EQUAL(body.status, 200);
    BOOST_TEST(r.out == body.body + "\n", target);
  }
  r = dlqctl({"replay", "--dead", "--queue", q, "--dry-run", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("\xe2\x80\xae") != std::string::npos);  // JSON leaves U+202E as it is
  BOOST_TEST(json::parse(r.out).at("by_job_type").as_object().contains(job_type));
}

BOOST_AUTO_TEST_CASE(show_masks_url_userinfo_encoded_tokens_and_json_behind_a_bom) {
  std::string q = unique_name("ctlmask");
  auto id = hostile_text::make_hostile_dead(
      q, "\xEF\xBB\xBF{\"to\":\"a@example.com\",\"password\":\"hunter2\"}", "email",
      "GET https://user:SECRET@api.example.com/v1 failed; retry with token%3Dabc123");
  auto r = dlqctl({"show", q, std::to_string(id)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST_CONTEXT(r.out) {
    BOOST_TEST(r.out.find("SECRET") == std::string::npos);
    BOOST_TEST(r.out.find("abc123") == std::string::npos);
    BOOST_TEST(r.out.find("hunter2") == std::string::npos);
    BOOST_TEST(r.out.find("https://***@api.example.com/v1") != std::string::npos);
    BOOST_TEST(r.out.find("token%3D***") != std::string::npos);
    BOOST_TEST(r.out.find("a@example.com") != std::string::npos);
  }
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
      {"ls", "--queue", "q", "--dead-reason", "x"},  // a dead-letter filter belongs to ls --dead
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

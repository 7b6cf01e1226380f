// What an on-call engineer meets in dlqctl during an incident (issue #34): the failure's cause
// and stack, help per command, side effects refused before any question, errors that name the
// flag, tables that fit the terminal, Ctrl-C while following, a misspelt queue named, ages as
// times, a queue's list filtered with its total, whoami, and ids and answers checked.
#include <fstream>
#include <future>
#include <thread>
#include <regex>

#include <boost/test/unit_test.hpp>

#include "dlqctl/dlqctl_support.hpp"
#include "support/temp_dir.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::int64_t enqueue(const std::string& queue, const json::object& body) {
  auto res = setup_client().post("/queues/" + queue + "/messages", body, admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 201);
  auto answer = res.json();
  return answer.at("id").as_int64();
}

// Claims the queue's next message (it must be `id`; `claim` is the claim's body) and fails it
// with `failure`.
std::string claim_and_fail(const std::string& queue, std::int64_t id, const json::object& failure,
                           const json::object& claim = {}) {
  auto& c = setup_client();
  auto claimed = c.post("/queues/" + queue + "/claim", claim, admin_headers());
  BOOST_REQUIRE_EQUAL(claimed.status, 200);
  auto answer = claimed.json();
  BOOST_REQUIRE_EQUAL(answer.at("message").at("id").as_int64(), id);
  auto failed = c.post("/queues/" + queue + "/messages/" + std::to_string(id) + "/fail", failure,
                       admin_headers());
  BOOST_REQUIRE_EQUAL(failed.status, 200);
  return str(failed.json(), "status");
}

std::vector<std::int64_t> ids_of(const std::string& out) {
  std::vector<std::int64_t> ids;
  json::value page = json::parse(out);
  for (const auto& m : page.at("messages").as_array()) ids.push_back(m.at("id").as_int64());
  return ids;
}

// Display columns of a UTF-8 line (continuation bytes take none).
std::size_t columns_of(const std::string& line) {
  std::size_t n = 0;
  for (char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

const std::string kUnused = "(or every one was purged): check the name.";

}  // namespace

BOOST_AUTO_TEST_SUITE(oncall)

BOOST_AUTO_TEST_CASE(attempts_shows_cause_and_stack) {
  std::string q = unique_name("ctlcause");
  auto id = enqueue(q, {{"payload", "x"}, {"max_retries", 1}});
  std::string stack;
  for (int i = 1; i <= 8; ++i) stack += "  at frame" + std::to_string(i) + " (worker.js:" + std::to_string(i) + ")\n";
  BOOST_REQUIRE_EQUAL(claim_and_fail(q, id, {{"error", "smtp timeout"},
                                             {"error_class", "timeout"},
                                             {"cause", "ECONNRESET from smtp.example.com"},
                                             {"stack", stack}},
                                     {{"worker", "worker-7"}, {"worker_version", "2.4.1"}}),
                      "dead");
  auto r = dlqctl({"attempts", q, std::to_string(id)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("cause: ECONNRESET from smtp.example.com") != std::string::npos);
  BOOST_TEST(r.out.find("at frame5 (worker.js:5)") != std::string::npos);
  BOOST_TEST(r.out.find("at frame6") == std::string::npos);
  BOOST_TEST(r.out.find("3 more line(s): --full shows them") != std::string::npos);
  BOOST_TEST(r.out.find("worker-7 2.4.1") != std::string::npos);  // the claim's worker_version
  r = dlqctl({"attempts", q, std::to_string(id), "--full"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("at frame8 (worker.js:8)") != std::string::npos);
  BOOST_TEST(r.out.find("more line(s)") == std::string::npos);

  // With --limit one page and the hint to the next; without it every page, to the end.
  std::string q2 = unique_name("ctlpages");
  auto id2 = enqueue(q2, {{"payload", "y"}, {"max_retries", 5}});
  for (int i = 0; i < 3; ++i) {
    BOOST_REQUIRE_EQUAL(claim_and_fail(q2, id2, {{"error", "try " + std::to_string(i)}, {"retry_in", 0}}),
                        "pending");
  }
  r = dlqctl({"attempts", q2, std::to_string(id2), "--limit", "2"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.err.find("(more: --after ") != std::string::npos);
  BOOST_TEST(r.out.find("try 2") == std::string::npos);
  r = dlqctl({"attempts", q2, std::to_string(id2), "--json"});
  REQUIRE_EXIT(r, 0);
  auto all = json::parse(r.out);
  BOOST_TEST(all.at("count").as_int64() == 3);
  BOOST_TEST(all.at("next_after").is_null());
  r = dlqctl({"attempts", q2, std::to_string(id2)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("try 2") != std::string::npos);
  BOOST_TEST(r.err.find("(more:") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(help_per_command) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"help", "replay"}, {"replay", "--help"}}) {
    auto r = dlqctl_raw(args);
    REQUIRE_EXIT(r, 0);
    BOOST_TEST(r.out.find("Usage: dlqctl replay Q ID") == 0u);
    BOOST_TEST(r.out.find("dlqctl replay --dead") != std::string::npos);
    BOOST_TEST(r.out.find("--acknowledge-side-effects") != std::string::npos);
    BOOST_TEST(r.out.find("Example:\n  dlqctl replay") != std::string::npos);
    BOOST_TEST(r.out.find("--cursor") == std::string::npos);  // only the command's own flags
  }
  auto r = dlqctl_raw({"help", "attempts"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("--full") != std::string::npos);
  r = dlqctl_raw({"help"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("Commands:") != std::string::npos);
  r = dlqctl_raw({"help", "replya"});
  REQUIRE_EXIT(r, 2);
  BOOST_TEST(r.err.find("no such command: replya") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(side_effects_refused_before_prompt) {
  std::string q = unique_name("ctlfx");
  make_dead(q, "a", kNotIdempotentType);
  make_dead(q, "b", "email");
  // "y" waits on stdin: were there a question, it would be answered yes.
  auto r = dlqctl({"replay", "--dead", "--queue", q, "--delay", "0"}, "y\n");
  REQUIRE_EXIT(r, 2);
  BOOST_TEST(r.err.find(std::string("job type(s) ") + kNotIdempotentType) != std::string::npos);
  BOOST_TEST(r.err.find("add --acknowledge-side-effects") != std::string::npos);
  BOOST_TEST(r.err.find("[y/N]") == std::string::npos);
  r = dlqctl({"replay", "--dead", "--queue", q, "--yes"});
  REQUIRE_EXIT(r, 2);
  auto runs = dlqctl({"runs", "--json", "--limit", "100"});
  REQUIRE_EXIT(runs, 0);
  json::value listed = json::parse(runs.out);
  for (const auto& run : listed.at("replays").as_array()) {
    const json::value* queue = run.at("filter").as_object().if_contains("queue");
    BOOST_TEST(!(queue && queue->is_string() && queue->get_string() == q));  // no run was started
  }

  // With the flag the question names what it repeats; "n" changes nothing.
  r = dlqctl({"replay", "--dead", "--queue", q, "--acknowledge-side-effects"}, "n\n");
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find(std::string("This repeats the side effects of ") + kNotIdempotentType +
                        " (not idempotent). [y/N]") != std::string::npos);
  r = dlqctl({"replay", "--dead", "--queue", q, "--acknowledge-side-effects", "--delay", "0", "--yes"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find(" done: 2 replayed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(errors_name_the_flags) {
  std::string q = unique_name("ctlflags");
  // A dead message whose idempotency key another message then used and succeeded with.
  auto dead = enqueue(q, {{"payload", "charge"}, {"max_retries", 1}, {"idempotency_key", "k-1"}});
  BOOST_REQUIRE_EQUAL(claim_and_fail(q, dead, {{"error", "boom"}}), "dead");
  auto holder = enqueue(q, {{"payload", "charge again"}, {"idempotency_key", "k-1"}});
  auto& c = setup_client();
  auto claimed = c.post("/queues/" + q + "/claim", json::object{}, admin_headers());
  auto m = claimed.json();
  BOOST_REQUIRE_EQUAL(m.at("message").at("id").as_int64(), holder);
  auto lease = str(m.at("message"), "lease_id");
  BOOST_REQUIRE_EQUAL(c.post("/queues/" + q + "/messages/" + std::to_string(holder) + "/succeed",
                             json::object{{"lease_id", lease}}, admin_headers())
                          .status,
                      200);
  auto r = dlqctl({"replay", q, std::to_string(dead)});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("409 already-succeeded") != std::string::npos);
  BOOST_TEST(r.err.find("add --force") != std::string::npos);

  // A dismissed message replays only with --force, and the refusal says so.
  auto other = make_dead(q, "x");
  REQUIRE_EXIT(dlqctl({"dismiss", q, std::to_string(other), "--reason", "won't fix"}), 0);
  r = dlqctl({"replay", q, std::to_string(other)});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("409 invalid-state") != std::string::npos);
  BOOST_TEST(r.err.find("the message was dismissed: add --force to replay it") != std::string::npos);
  r = dlqctl({"replay", q, std::to_string(other), "--force"});
  REQUIRE_EXIT(r, 0);
}

BOOST_AUTO_TEST_CASE(tables_fit_80_columns) {
  std::string q = unique_name("ctlwide");
  for (int i = 0; i < 3; ++i) {
    auto id = enqueue(q, {{"payload", "x"}, {"max_retries", 1}, {"job_type", "a_rather_long_job_type_name"}});
    claim_and_fail(q, id, {{"error", std::string(150, 'e') + " the end"}, {"error_class", "throttled"}});
  }
  // A run at 0.5 per second shows RATE/S as 0.5, not 5E-1.
  REQUIRE_EXIT(dlqctl({"replay", "--dead", "--queue", q, "--rate", "0.5", "--delay", "3600", "--yes",
                       "--no-follow", "--reason", std::string(120, 'r')}),
               0);
  const std::regex timestamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  for (const std::string& command : std::vector<std::string>{
           "ls --queue " + q, "runs --limit 1", "ls --dead --queue " + q, "audit --queue " + q}) {
    auto r = dlqctl_on_terminal(command, 80);
    BOOST_TEST_CONTEXT(command << "\n" << r.out) {
      REQUIRE_EXIT(r, 0);
      std::size_t lines = 0;
      std::istringstream in(r.out);
      for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        BOOST_TEST(columns_of(line) <= 80u, "line of " << columns_of(line) << ": " << line);
        ++lines;
      }
      BOOST_TEST(lines >= 2u);
      BOOST_TEST(std::regex_search(r.out, timestamp));  // times are whole
    }
  }
  auto r = dlqctl_on_terminal("ls --queue " + q, 80);
  BOOST_TEST(r.out.find("…") != std::string::npos);
  BOOST_TEST(r.out.find(" the end") == std::string::npos);
  r = dlqctl_on_terminal("runs --limit 1", 80);
  BOOST_TEST(r.out.find("0.5 ") != std::string::npos);
  BOOST_TEST(r.out.find("5E-1") == std::string::npos);
  // Wider terminals cut less; COLUMNS serves when stdout is no terminal.
  r = dlqctl_on_terminal("ls --queue " + q, 300);
  BOOST_TEST(r.out.find(" the end") == std::string::npos);  // the table's own 60-column cut
  BOOST_TEST(r.out.find(std::string(50, 'e')) != std::string::npos);
  r = dlqctl_raw({"--url", server_url(), "--token", kAdminToken, "ls", "--queue", q}, {"COLUMNS=60"});
  REQUIRE_EXIT(r, 0);
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) BOOST_TEST(columns_of(line) <= 60u, line);
}

BOOST_AUTO_TEST_CASE(ctrl_c_says_the_run_goes_on) {
  std::string q = unique_name("ctlint");
  make_dead(q, "a");
  auto r = dlqctl({"replay", "--dead", "--queue", q, "--delay", "3600", "--yes", "--no-follow", "--json"});
  REQUIRE_EXIT(r, 0);
  auto id = std::to_string(json::parse(r.out).at("replay_id").as_int64());
  // timeout(1) sends SIGINT after 1.5 s, as Ctrl-C would; --preserve-status passes on dlqctl's.
  r = run_program("/usr/bin/timeout", {"--preserve-status", "-s", "INT", "1.5", DLQ_DLQCTL_PATH,
                                       "--url", server_url(), "--token", kAdminToken, "run", id, "--follow"});
  REQUIRE_EXIT(r, 130);
  BOOST_TEST(r.err.find("stopped following; run " + id + " goes on: dlqctl run " + id + " --follow") !=
             std::string::npos);
  r = dlqctl({"run", id, "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(str(json::parse(r.out), "status") == "scheduled");  // the run did not stop
  REQUIRE_EXIT(dlqctl({"run", id, "cancel"}), 0);
}

BOOST_AUTO_TEST_CASE(run_follow_reattaches) {
  std::string q = unique_name("ctlfollow");
  auto dead = make_dead(q, "a");
  auto r = dlqctl({"replay", "--dead", "--queue", q, "--delay", "1", "--yes", "--no-follow"});
  REQUIRE_EXIT(r, 0);
  std::smatch m;
  BOOST_REQUIRE(std::regex_search(r.out, m, std::regex(R"(follow it with: dlqctl run (\d+) --follow)")));
  std::string id = m[1];
  r = dlqctl({"run", id, "--follow"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("run " + id + ": scheduled") != std::string::npos);
  BOOST_TEST(r.out.find("run " + id + " done: 1 replayed") != std::string::npos);
  BOOST_TEST(str(get_message(q, dead), "status") == "pending");
  r = dlqctl({"run", id, "--follow", "pause"});
  REQUIRE_EXIT(r, 2);
}

BOOST_AUTO_TEST_CASE(unused_queue_is_named) {
  std::string typo = unique_name("emial");
  const std::string sentence = "No message has ever been in queue \"" + typo + "\" " + kUnused;
  auto r = dlqctl({"ls", "--queue", typo});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.err.find(sentence) != std::string::npos);
  r = dlqctl({"ls", "--dead", "--queue", typo});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.err.find(sentence) != std::string::npos);
  r = dlqctl({"show", typo, "1"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find(sentence) != std::string::npos);
  BOOST_TEST(r.err.find("404 message-not-found") != std::string::npos);
  r = dlqctl({"attempts", typo, "1"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find(sentence) != std::string::npos);
  r = dlqctl({"replay", "--dead", "--queue", typo, "--dry-run"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.err.find(sentence) != std::string::npos);
  // A queue that holds messages is never called unused, even when the list is empty.
  std::string q = unique_name("ctlused");
  make_dead(q, "a");
  r = dlqctl({"ls", "--queue", q, "--status", "pending"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.err.find(kUnused) == std::string::npos);
  r = dlqctl({"show", q, "999999"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find(kUnused) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(relative_times) {
  std::string q = unique_name("ctlago");
  auto id = make_dead(q, "a");
  auto r = dlqctl({"ls", "--dead", "--queue", q, "--since", "45s", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out) == std::vector<std::int64_t>{id});
  r = dlqctl({"ls", "--dead", "--queue", q, "--since", "30m", "--until", "1d", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out).empty());  // dead now, not before a day ago
  r = dlqctl({"ls", "--dead", "--queue", q, "--since", "2h", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out) == std::vector<std::int64_t>{id});
  r = dlqctl({"audit", "--queue", q, "--since", "1d", "--json"});
  REQUIRE_EXIT(r, 0);
  r = dlqctl({"purge", q, "--status", "dead", "--before", "1d", "--yes"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("purged 0 dead") == 0u);  // it died less than a day ago
  for (const char* bad : {"45", "2w", "h", "-2h", "1.5h"}) {
    r = dlqctl({"ls", "--dead", "--since", bad});
    BOOST_TEST_CONTEXT(bad) {
      REQUIRE_EXIT(r, 2);
      BOOST_TEST(r.err.find("45s, 30m, 2h, 1d") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(ls_queue_filters) {
  std::string q = unique_name("ctlqf");
  auto a = enqueue(q, {{"payload", "a"}, {"job_type", "email"}, {"max_retries", 3}});
  auto b = enqueue(q, {{"payload", "b"}, {"job_type", "sms"}, {"max_retries", 3}});
  auto c = enqueue(q, {{"payload", "c"}, {"job_type", "email"}});
  // a failed once (timeout) and waits for its retry: pending and retrying.
  BOOST_REQUIRE_EQUAL(claim_and_fail(q, a, {{"error", "slow"}, {"error_class", "timeout"},
                                            {"retry_in", 3600}}),
                      "pending");
  auto r = dlqctl({"ls", "--queue", q, "--retrying", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out) == std::vector<std::int64_t>{a});
  r = dlqctl({"ls", "--queue", q, "--job-type", "email", "--order", "desc", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out) == (std::vector<std::int64_t>{c, a}));
  r = dlqctl({"ls", "--queue", q, "--order", "asc", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out) == (std::vector<std::int64_t>{a, b, c}));
  r = dlqctl({"ls", "--queue", q, "--error-class", "timeout", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(ids_of(r.out) == std::vector<std::int64_t>{a});
  // For people: the total the queue's stats count, and what filters the list.
  r = dlqctl({"ls", "--queue", q, "--retrying", "--job-type", "email"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("3 pending in queue " + q + " (this list is filtered: retrying only, job type = email)") !=
             std::string::npos);
  r = dlqctl({"ls", "--queue", q});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("3 messages in queue " + q + "\n") != std::string::npos);
  r = dlqctl({"ls", "--queue", q, "--status", "pending", "--retrying"});
  REQUIRE_EXIT(r, 2);
  r = dlqctl({"ls", "--queue", q, "--order", "newest"});
  REQUIRE_EXIT(r, 2);
}

BOOST_AUTO_TEST_CASE(whoami) {
  auto r = dlqctl({"whoami"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "ops (admin)\n");
  r = dlqctl_raw({"--url", server_url(), "whoami"}, {"DLQ_TOKEN=" + kReaderToken});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "viewer (reader)\n");
  r = dlqctl({"whoami", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "{\"actor\":\"ops\",\"roles\":[\"admin\"],\"tokens_configured\":true}\n");
  r = dlqctl_raw({"--url", server_url(), "--token", "not-a-token-anyone-has", "whoami"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("token not accepted") != std::string::npos);
  BOOST_TEST(r.err.find("not-a-token-anyone-has") == std::string::npos);
  r = dlqctl_raw({"--url", server_url(), "whoami"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("401 unauthorized") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(edit_not_json) {
  std::string q = unique_name("ctledit");
  auto id = make_dead(q, R"({"to":"a@example.com"})");
  TempDir dir;
  const std::string file = dir.file("payload.json");
  {
    std::ofstream edit(file);
    edit << "{\n  \"to\": \"b@example.com\",\n  \"cc\": oops\n}\n";
  }
  auto r = dlqctl({"replay", q, std::to_string(id), "--edit", file});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("422 validation-failed") != std::string::npos);
  BOOST_TEST(r.err.find(file + ":3:9: ") != std::string::npos);
  BOOST_TEST(r.err.find("--not-json") != std::string::npos);
  BOOST_TEST(str(get_message(q, id), "status") == "dead");  // nothing changed
  r = dlqctl({"replay", q, std::to_string(id), "--edit", "-"}, "[1, 2,\n");
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("stdin:1:") != std::string::npos);

  r = dlqctl({"replay", q, std::to_string(id), "--edit", file, "--not-json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(str(get_message(q, id), "status") == "pending");
  // People's views withhold text that looks like JSON; the worker gets it as it was sent.
  auto claimed = setup_client().post("/queues/" + q + "/claim", json::object{}, admin_headers());
  auto answer = claimed.json();
  BOOST_TEST(str(answer.at("message"), "payload") == "{\n  \"to\": \"b@example.com\",\n  \"cc\": oops\n}");
  r = dlqctl({"replay", q, std::to_string(id), "--not-json"});
  REQUIRE_EXIT(r, 2);
}

BOOST_AUTO_TEST_CASE(timeout_zero_message) {
  for (const char* t : {"0", "-1", "3601"}) {
    auto r = dlqctl({"--timeout", t, "queues"});
    BOOST_TEST_CONTEXT(t) {
      REQUIRE_EXIT(r, 2);
      BOOST_TEST(r.err.find("more than 0 and at most 3600") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(non_numeric_id) {
  // A closed port: had anything been sent, the exit would be 3.
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "abc"}, {"show", "q", "abc"}, {"attempts", "q", "1x"}, {"replay", "q", "0"},
           {"dismiss", "q", "3a", "--reason", "r"}, {"run", "abc", "pause"}}) {
    std::vector<std::string> all{"--url", url};
    all.insert(all.end(), args.begin(), args.end());
    auto r = dlqctl_raw(all);
    BOOST_TEST_CONTEXT(args[0] << " " << args[1]) {
      REQUIRE_EXIT(r, 2);
      BOOST_TEST(r.err.find("must be a positive whole number") != std::string::npos);
    }
  }
}

// Side effects (issue 36): attempts lists them, a started one marked uncertain with what to do;
// --resolve-effect is checked before sending and sent as resolve_effects.
BOOST_AUTO_TEST_CASE(attempts_shows_effects_and_replay_resolves_them) {
  std::string q = unique_name("ctleff");
  auto id = enqueue(q, {{"payload", "x"}, {"max_retries", 1}, {"job_type", "charge"}});
  auto& c = setup_client();
  auto claimed = c.post("/queues/" + q + "/claim", json::object{}, admin_headers());
  BOOST_REQUIRE_EQUAL(claimed.status, 200);
  std::string lease(claimed.json().at("message").at("lease_id").as_string());
  const std::string base = "/queues/" + q + "/messages/" + std::to_string(id);
  BOOST_REQUIRE_EQUAL(c.post(base + "/effects", json::object{{"lease_id", lease}, {"key", "invoice"},
                                                             {"state", "done"}, {"result", "1234"}},
                             admin_headers()).status, 200);
  BOOST_REQUIRE_EQUAL(c.post(base + "/effects", json::object{{"lease_id", lease}, {"key", "charge"},
                                                             {"state", "started"},
                                                             {"description", "charge the card"}},
                             admin_headers()).status, 200);
  BOOST_REQUIRE_EQUAL(c.post(base + "/fail", json::object{{"lease_id", lease}, {"error", "killed"}},
                             admin_headers()).status, 200);

  auto r = dlqctl({"attempts", q, std::to_string(id)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("side effects:") != std::string::npos);
  BOOST_TEST(r.out.find("started (uncertain)") != std::string::npos);
  BOOST_TEST(r.out.find("charge the card") != std::string::npos);
  BOOST_TEST(r.out.find("--resolve-effect KEY=done") != std::string::npos);

  r = dlqctl({"replay", "--dead", "--queue", q, "--dry-run"});  // the preview names it
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("uncertain side effects: 1 message(s)") != std::string::npos);
  BOOST_TEST(r.out.find("[" + std::to_string(id) + "]") != std::string::npos);

  r = dlqctl({"replay", q, std::to_string(id), "--resolve-effect", "charge=maybe"});
  REQUIRE_EXIT(r, 2);
  BOOST_TEST(r.err.find("KEY=done or KEY=forget") != std::string::npos);
  r = dlqctl({"replay", q, std::to_string(id), "--resolve-effect", "invoice=done"});
  REQUIRE_EXIT(r, 1);  // done already: the server's 422 names the key
  BOOST_TEST(r.err.find("resolve_effects.invoice") != std::string::npos);
  r = dlqctl({"replay", q, std::to_string(id), "--resolve-effect", "charge=done", "--reason",
              "charged: checked with the provider"});
  REQUIRE_EXIT(r, 0);
  r = dlqctl({"attempts", q, std::to_string(id)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("started (uncertain)") == std::string::npos);
  BOOST_TEST(r.out.find("done by ") != std::string::npos);
}

// trial (issue 36): starts a trial run; --wait follows it to its end (exit 0 succeeded, 1
// failed) and prints what it would have caused; attempts shows its entry.
BOOST_AUTO_TEST_CASE(trial_waits_for_the_worker) {
  std::string q = unique_name("ctltrial");
  auto id = make_dead(q, R"({"amount":10})", "charge");
  const std::string sid = std::to_string(id);
  auto r = dlqctl({"trial", q, sid, "--reason", "does it work now?"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find(": pending") != std::string::npos);
  BOOST_TEST(dlqctl({"trial", q, "x1"}).exit_code == 2);

  // The worker: claims the trial, then answers while dlqctl waits.
  auto& c = setup_client();
  auto play = [&](const std::string& action, json::object answer) {
    auto claimed = c.post("/queues/" + q + "/claim",
                          json::object{{"trials", true}, {"job_types", {"charge"}}}, admin_headers());
    BOOST_REQUIRE_EQUAL(claimed.status, 200);
    auto m = claimed.json().at("message").as_object();
    BOOST_REQUIRE(m.contains("trial_id"));
    answer["lease_id"] = m.at("lease_id");
    const std::string path = "/queues/" + q + "/messages/" + sid + "/trials/" +
                             std::to_string(m.at("trial_id").as_int64()) + "/" + action;
    return std::async(std::launch::async, [&c, path, answer] {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      return c.post(path, answer, admin_headers()).status;
    });
  };
  auto answered = play("succeed", {{"would_effects", json::array{json::object{
                                        {"key", "charge:1"}, {"description", "charge 10 EUR"}}}}});
  r = dlqctl({"trial", q, sid, "--wait"});  // the open trial, followed
  BOOST_TEST(answered.get() == 200);
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find(": succeeded") != std::string::npos);
  BOOST_TEST(r.out.find("charge:1: charge 10 EUR") != std::string::npos);

  REQUIRE_EXIT(dlqctl({"trial", q, sid}), 0);  // a new one
  answered = play("fail", {{"error", "still declined"}});
  r = dlqctl({"trial", q, sid, "--wait"});
  BOOST_TEST(answered.get() == 200);
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.out.find("failed") != std::string::npos);
  BOOST_TEST(r.out.find("still declined") != std::string::npos);

  r = dlqctl({"attempts", q, sid});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("trial succeeded") != std::string::npos);
  BOOST_TEST(r.out.find("trial failed") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

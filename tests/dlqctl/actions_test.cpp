// dlqctl's commands that change things, against a live dlqd: what the server holds afterwards,
// the confirmation prompt (answered no: nothing happens), following a replay run.
#include <fstream>

#include <boost/test/unit_test.hpp>

#include "dlqctl/dlqctl_support.hpp"
#include "support/temp_dir.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::string status_of(const std::string& q, std::int64_t id) { return str(get_message(q, id), "status"); }

std::size_t replay_run_count() {
  auto res = setup_client().get("/dlq/replays?limit=100", admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().at("replays").as_array().size();
}

json::array audit_entries(const std::string& query) {
  auto res = setup_client().get("/audit?" + query, admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().at("entries").as_array();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(actions)

BOOST_AUTO_TEST_CASE(enqueue_from_argument_and_stdin) {
  std::string q = unique_name("ctlenq");
  auto r = dlqctl({"enqueue", q, R"({"n":1})", "--job-type", "email", "--idempotency-key", "k1"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("enqueued message ") == 0u);
  r = dlqctl({"enqueue", q, R"({"n":1})", "--idempotency-key", "k1"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("not enqueued") == 0u);
  BOOST_TEST(r.out.find("k1") != std::string::npos);

  r = dlqctl({"enqueue", q, "-", "--delay", "3600", "--json"}, "from stdin\n");
  REQUIRE_EXIT(r, 0);
  auto m = json::parse(r.out);
  BOOST_TEST(str(m, "payload") == "from stdin");
  BOOST_TEST(m.at("retry_after").is_string());  // scheduled an hour ahead
  r = dlqctl({"--json", "stats", q});
  BOOST_TEST(json::parse(r.out).at("ready").as_int64() == 1);
  BOOST_TEST(json::parse(r.out).at("scheduled").as_int64() == 1);
  r = dlqctl({"enqueue", q, ""});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("payload") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(replay_one_message) {
  std::string q = unique_name("ctlrep");
  auto id = make_dead(q, R"({"to":"a@example.com"})");
  auto sid = std::to_string(id);

  auto r = dlqctl({"replay", q, sid, "--dry-run"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("dry run: nothing changed") == 0u);
  BOOST_TEST(status_of(q, id) == "dead");

  TempDir dir;
  {
    std::ofstream edit(dir.file("payload.json"));
    edit << R"({"to":"b@example.com"})" << "\n";
  }
  r = dlqctl({"replay", q, sid, "--reason", "address fixed", "--edit", dir.file("payload.json"),
              "--delay", "3600"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("replayed message " + sid) == 0u);
  BOOST_TEST(r.out.find("due at") != std::string::npos);
  auto m = get_message(q, id);
  BOOST_TEST(str(m, "status") == "pending");
  BOOST_TEST(str(m, "payload") == R"({"to":"b@example.com"})");
  auto entries = audit_entries("action=payload_edit&queue=" + q);
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST(str(entries[0], "reason") == "address fixed");
  BOOST_TEST(str(entries[0], "actor") == "ops");

  // --edit - reads the new payload from stdin.
  auto id2 = make_dead(q, R"({"n":1})");
  r = dlqctl({"replay", q, std::to_string(id2), "--edit", "-", "--json"}, "{\"n\":2}\n");
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(str(json::parse(r.out), "payload") == R"({"n":2})");

  // Not dead any more: the server says no, in words, and dlqctl exits 1.
  r = dlqctl({"replay", q, sid});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("409 invalid-state") != std::string::npos);
  BOOST_TEST(r.err.find("only dead messages can be replayed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(batch_replay_answered_no_changes_nothing) {
  std::string q = unique_name("ctlno");
  auto a = make_dead(q, "a", "email");
  auto b = make_dead(q, "b", "email");
  auto runs_before = replay_run_count();
  for (std::string answer : {"n\n", "\n", "maybe\n", ""}) {
    auto r = dlqctl({"replay", "--dead", "--queue", q, "--delay", "0"}, answer);
    REQUIRE_EXIT(r, 1);
    BOOST_TEST(r.out.find("2 dead message(s) match queue=" + q) == 0u);
    BOOST_TEST(r.out.find("email") != std::string::npos);
    BOOST_TEST(r.err.find("Replay 2 message(s)? [y/N]") != std::string::npos);
    BOOST_TEST(r.err.find("cancelled: nothing was replayed") != std::string::npos);
  }
  BOOST_TEST(status_of(q, a) == "dead");
  BOOST_TEST(status_of(q, b) == "dead");
  BOOST_TEST(replay_run_count() == runs_before);
  for (const auto& e : audit_entries("action=batch_replay&limit=100")) {
    const auto& filter = e.at("filter");
    BOOST_TEST(!(filter.is_object() && filter.as_object().contains("queue") && str(filter, "queue") == q));
  }
}

BOOST_AUTO_TEST_CASE(batch_replay_answered_yes_follows_the_run) {
  std::string q = unique_name("ctlyes");
  auto a = make_dead(q, "a", "email", "timeout");
  auto b = make_dead(q, "b", "email", "timeout");
  auto other = make_dead(q, "c", "email", "transient");
  auto r = dlqctl({"replay", "--dead", "--queue", q, "--error-class", "timeout", "--delay", "0",
                   "--rate", "100", "--reason", "relay fixed"},
                  "y\n");
  REQUIRE_EXIT(r, 0);
  // stdout is not a terminal: plain progress lines, no bar.
  BOOST_TEST(r.out.find("\r") == std::string::npos);
  BOOST_TEST(r.out.find("replay run ") != std::string::npos);
  BOOST_TEST(r.out.find(": done, 2/2 replayed, 0 skipped") != std::string::npos);
  BOOST_TEST(status_of(q, a) == "pending");
  BOOST_TEST(status_of(q, b) == "pending");
  BOOST_TEST(status_of(q, other) == "dead");
  // A batch entry names no single queue: find it by its filter.
  std::size_t found = 0;
  for (const auto& e : audit_entries("action=batch_replay&actor=ops&limit=100")) {
    const auto& filter = e.at("filter");
    if (filter.is_object() && filter.as_object().contains("queue") && str(filter, "queue") == q) {
      ++found;
      BOOST_TEST(str(e, "reason") == "relay fixed");
    }
  }
  BOOST_TEST(found == 1u);

  // --yes --json: no question, one JSON document, the finished run.
  // (Another queue: a and b are pending in q, and would be claimed first.)
  std::string q2 = unique_name("ctlyes");
  auto c = make_dead(q2, "d", "sms", "timeout");
  r = dlqctl({"replay", "--dead", "--queue", q2, "--job-type", "sms", "--delay", "0", "--yes", "--json"});
  REQUIRE_EXIT(r, 0);
  auto run = json::parse(r.out);
  BOOST_TEST(str(run, "status") == "done");
  BOOST_TEST(run.at("replayed").as_int64() == 1);
  BOOST_TEST(r.err.find("[y/N]") == std::string::npos);
  BOOST_TEST(status_of(q2, c) == "pending");

  // --json with the question: the preview and the question on stderr, one JSON document on stdout.
  std::string q3 = unique_name("ctlyes");
  make_dead(q3, "e");
  r = dlqctl({"replay", "--dead", "--queue", q3, "--delay", "0", "--json"}, "y\n");
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(str(json::parse(r.out), "status") == "done");
  BOOST_TEST(r.err.find("1 dead message(s) match queue=" + q3) != std::string::npos);
  BOOST_TEST(r.err.find("Replay 1 message(s)? [y/N]") != std::string::npos);

  // --dry-run --json: the preview, nothing started.
  auto runs_before = replay_run_count();
  r = dlqctl({"replay", "--dead", "--queue", q, "--dry-run", "--json"});
  REQUIRE_EXIT(r, 0);
  auto preview = json::parse(r.out);
  BOOST_TEST(preview.at("matched").as_int64() == 1);
  BOOST_TEST(preview.at("confirm_token").is_string());
  BOOST_TEST(replay_run_count() == runs_before);

  // Nothing matches: nothing to ask.
  r = dlqctl({"replay", "--dead", "--queue", q, "--job-type", "none-such"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("nothing to replay") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(progress_bar_on_a_terminal) {
  std::string q = unique_name("ctltty");
  make_dead(q, "a");
  make_dead(q, "b");
  // script(1) gives dlqctl a pseudo-terminal as stdout.
  std::string command = std::string(DLQ_DLQCTL_PATH) + " --url " + server_url() + " --token " +
                        kAdminToken + " replay --dead --queue " + q + " --delay 0 --yes";
  auto r = run_program("/usr/bin/script", {"-qefc", command, "/dev/null"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("\r[") != std::string::npos);
  BOOST_TEST(r.out.find("##############################] run ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(runs_and_run_actions) {
  std::string q = unique_name("ctlrun");
  auto id = make_dead(q, "a");
  auto r = dlqctl({"replay", "--dead", "--queue", q, "--delay", "3600", "--yes", "--no-follow", "--json"});
  REQUIRE_EXIT(r, 0);
  auto started = json::parse(r.out);
  std::string run = std::to_string(started.at("replay_id").as_int64());
  BOOST_TEST(str(started, "status") == "scheduled");

  r = dlqctl({"runs"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("DEAD AGAIN") != std::string::npos);
  BOOST_TEST(r.out.find("scheduled") != std::string::npos);
  r = dlqctl({"runs", "--json", "--limit", "1"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out).at("replays").at(0).at("replay_id").as_int64() == std::stoll(run));

  r = dlqctl({"run", run});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("status:") != std::string::npos);
  r = dlqctl({"run", run, "pause"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "run " + run + ": paused, 0/1 replayed, 0 skipped\n");
  r = dlqctl({"run", run, "pause"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("409 invalid-state") != std::string::npos);
  r = dlqctl({"run", run, "resume", "--json"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(str(json::parse(r.out), "status") == "scheduled");
  r = dlqctl({"run", run, "cancel"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("cancelled") != std::string::npos);
  BOOST_TEST(status_of(q, id) == "dead");
  r = dlqctl({"run", "999999999"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("404 replay-not-found") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dismiss_one_and_batch) {
  std::string q = unique_name("ctldis");
  auto a = make_dead(q, "a");
  auto b = make_dead(q, "b");
  auto c = make_dead(q, "c");
  auto r = dlqctl({"dismiss", q, std::to_string(a), "--reason", "customer gone"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "dismissed message " + std::to_string(a) + " of " + q + "\n");
  BOOST_TEST(status_of(q, a) == "dismissed");

  r = dlqctl({"dismiss", "--dead", "--queue", q, "--reason", "obsolete"}, "no\n");
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("cancelled: nothing was dismissed") != std::string::npos);
  BOOST_TEST(status_of(q, b) == "dead");
  BOOST_TEST(status_of(q, c) == "dead");

  r = dlqctl({"dismiss", "--dead", "--queue", q, "--reason", "obsolete"}, "yes\n");
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("dismissed 2 message(s); 0 skipped") != std::string::npos);
  BOOST_TEST(status_of(q, b) == "dismissed");
  BOOST_TEST(status_of(q, c) == "dismissed");

  r = dlqctl({"dismiss", q, std::to_string(a), "--reason", "again", "--json"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(r.err.find("only dead messages can be dismissed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(purge_asks_then_deletes) {
  std::string q = unique_name("ctlpurge");
  auto a = make_dead(q, "a");
  make_dead(q, "b");
  auto r = dlqctl({"purge", q, "--status", "dead"}, "n\n");
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("Delete every dead message of queue " + q + " (2 dead now)?") != std::string::npos);
  BOOST_TEST(status_of(q, a) == "dead");

  r = dlqctl({"purge", q, "--status", "dead", "--before", "2000-01-01T00:00:00Z", "--yes"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "purged 0 dead message(s) of " + q + "\n");

  r = dlqctl({"purge", q, "--status", "dead", "--json"}, "y\n");
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out).at("purged").as_int64() == 2);
  auto res = setup_client().get("/queues/" + q + "/messages/" + std::to_string(a), admin_headers());
  BOOST_TEST(res.status == 404);
}

BOOST_AUTO_TEST_CASE(audit_lists_what_dlqctl_did) {
  std::string q = unique_name("ctlaudit");
  auto id = make_dead(q, "a");
  REQUIRE_EXIT(dlqctl({"replay", q, std::to_string(id), "--reason", "audited"}), 0);
  auto r = dlqctl({"audit", "--action", "replay", "--actor", "ops", "--queue", q});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.starts_with("ID"));
  BOOST_TEST(r.out.find("audited") != std::string::npos);
  BOOST_TEST(r.out.find("[" + std::to_string(id) + "]") != std::string::npos);
  r = dlqctl({"audit", "--queue", q, "--since", "2000-01-01T00:00:00Z", "--json"});
  REQUIRE_EXIT(r, 0);
  auto entries = json::parse(r.out).at("entries").as_array();
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST(str(entries[0], "action") == "replay");
  r = dlqctl({"audit", "--action", "explode"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("action:") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// dlqctl's incident commands against a live dlqd: the incidents table, its --json (the answer
// unchanged) and the paging hint, one incident, the batch actions by --incident (which implies
// --dead), and mute. Each test's incidents are its own: a job type of its own.
#include <boost/test/unit_test.hpp>

#include "dlqctl/dlqctl_support.hpp"
#include "support/temp_dir.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

json::value server_incidents(const std::string& job_type) {
  auto res = setup_client().get("/dlq/incidents?job_type=" + job_type, admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json();
}

// The fingerprint of the incident with the most dead of `job_type`.
std::string largest(const std::string& job_type) {
  return str(server_incidents(job_type).at("incidents").at(0), "fingerprint");
}

std::string status_of(const std::string& q, std::int64_t id) { return str(get_message(q, id), "status"); }

}  // namespace

BOOST_AUTO_TEST_SUITE(incidents)

BOOST_AUTO_TEST_CASE(incidents_table_json_paging_and_one_incident) {
  const std::string q = unique_name("ctlinc"), jt = unique_name("jt");
  for (int i = 0; i < 3; ++i) make_dead(q, "a", jt, "timeout");
  make_dead(q, "b", jt, "invalid_input");
  auto r = dlqctl({"incidents", "--job-type", jt});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.starts_with("FINGERPRINT       DEAD  CLASS          JOB TYPE"));
  const std::string fp = largest(jt);
  std::string first = r.out.substr(r.out.find('\n') + 1);
  BOOST_TEST(first.starts_with(fp + "  3     timeout"));
  BOOST_TEST(first.find(q + ":3") != std::string::npos);
  BOOST_TEST(first.find("smtp timeout") != std::string::npos);
  BOOST_TEST(r.out.find("invalid_input") != std::string::npos);
  BOOST_TEST(r.err.empty());

  r = dlqctl({"--json", "incidents", "--job-type", jt});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(json::parse(r.out) == server_incidents(jt));

  r = dlqctl({"incidents", "--job-type", jt, "--limit", "1"});
  REQUIRE_EXIT(r, 0);
  const std::string hint = "(more: --cursor ";
  BOOST_REQUIRE(r.err.starts_with(hint));
  std::string cursor = r.err.substr(hint.size(), r.err.find(')') - hint.size());
  r = dlqctl({"incidents", "--job-type", jt, "--limit", "1", "--cursor", cursor});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("invalid_input") != std::string::npos);
  BOOST_TEST(r.out.find(fp) == std::string::npos);
  BOOST_TEST(r.err.empty());  // the last page

  r = dlqctl({"incident", fp});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.starts_with("fingerprint:       " + fp + "\n"));
  BOOST_TEST(r.out.find("\ndead:              3\n") != std::string::npos);
  BOOST_TEST(r.out.find("\ndead_lettered_48h: 3\n") != std::string::npos);
  r = dlqctl({"incident", "0000000000000000"});
  REQUIRE_EXIT(r, 1);
  BOOST_TEST(r.err.find("404 incident-not-found") != std::string::npos);
  REQUIRE_EXIT(dlqctl({"incidents", "--sort", "newest"}), 2);
}

BOOST_AUTO_TEST_CASE(replay_and_dismiss_by_incident) {
  const std::string q = unique_name("ctlinc"), jt = unique_name("jt");
  auto a = make_dead(q, "a", jt, "timeout");
  auto b = make_dead(q, "b", jt, "timeout");
  auto other = make_dead(q, "c", jt, "auth");
  const std::string fp = largest(jt);
  auto r = dlqctl({"ls", "--incident", fp});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find("\n" + std::to_string(a) + " ") != std::string::npos);
  BOOST_TEST(r.out.find("\n" + std::to_string(other) + " ") == std::string::npos);

  r = dlqctl({"dismiss", "--incident", fp, "--reason", "duplicate", "--dry-run"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.starts_with("2 dead message(s) match fingerprint=" + fp + "\n"));
  BOOST_TEST(status_of(q, a) == "dead");

  r = dlqctl({"replay", "--incident", fp, "--yes", "--delay", "0", "--rate", "100"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.find(": done, 2/2 replayed, 0 skipped") != std::string::npos);
  BOOST_TEST(status_of(q, a) == "pending");
  BOOST_TEST(status_of(q, b) == "pending");
  BOOST_TEST(status_of(q, other) == "dead");
  REQUIRE_EXIT(dlqctl({"replay", "--incident", "XYZ", "--yes"}), 1);  // 422 filter.fingerprint
}

BOOST_AUTO_TEST_CASE(mute_and_unmute) {
  const std::string q = unique_name("ctlinc"), jt = unique_name("jt");
  make_dead(q, "a", jt, "timeout");
  const std::string fp = largest(jt);
  auto r = dlqctl({"mute", fp, "--until", "2099-01-01 00:00:00", "--reason", "relay fix at 06:00"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "incident " + fp + " muted until 2099-01-01T00:00:00.000Z: no incident alerts for it until then\n");
  auto entry = server_incidents(jt).at("incidents").at(0);
  BOOST_TEST(str(entry, "mute_reason") == "relay fix at 06:00");
  r = dlqctl({"incidents", "--job-type", jt});
  BOOST_TEST(r.out.find("[muted] smtp timeout") != std::string::npos);
  r = dlqctl({"mute", fp, "--until", "now"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "incident " + fp + " un-muted: its alerts go out again\n");
  BOOST_TEST(server_incidents(jt).at("incidents").at(0).at("muted_until").is_null());
  REQUIRE_EXIT(dlqctl({"mute", "0000000000000000", "--until", "now"}), 1);
  REQUIRE_EXIT(dlqctl({"mute", fp}), 2);
  REQUIRE_EXIT(dlqctl({"mute", fp, "--until", "soon"}), 2);
}

BOOST_AUTO_TEST_SUITE_END()

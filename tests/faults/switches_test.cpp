// The switches (testing.faults.*): refused without --allow-testing-faults, --check-config too;
// SQLite's refused with a PostgreSQL URL; armed ones logged at error level; a printed
// configuration without faults loads without the flag.
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "faults/fault_support.hpp"
#include "support/temp_dir.hpp"

using namespace dlq::test;

namespace {

std::string write_config(const TempDir& dir, const std::string& json) {
  std::string path = dir.file("dlqd.json");
  std::ofstream(path) << json;
  return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(switches)

BOOST_AUTO_TEST_CASE(fault_keys_need_the_flag) {
  TempDir dir;
  std::string config = write_config(dir, R"({"testing": {"faults": {"sqlite_power_loss": true}}})");
  for (const char* mode : {"--check-config", "--print-config"}) {
    auto refused = run_dlqd({"--config", config, "--db", "sqlite:" + dir.file("a.db"), mode});
    BOOST_TEST(refused.exit_code == 2);
    BOOST_TEST(refused.err.find("config key \"testing.faults.sqlite_power_loss\": only with "
                                "--allow-testing-faults") != std::string::npos, refused.err);
  }
  auto allowed = run_dlqd({"--config", config, "--db", "sqlite:" + dir.file("a.db"),
                           "--check-config", "--allow-testing-faults"});
  BOOST_TEST(allowed.exit_code == 0, allowed.err);
  // No environment variable arms them: DLQ_ variables are read, none of them is a flag.
  auto env = run_dlqd({"--config", config, "--check-config"}, {"DLQ_ALLOW_TESTING_FAULTS=1"});
  BOOST_TEST(env.exit_code == 2);
}

BOOST_AUTO_TEST_CASE(sqlite_faults_are_refused_on_postgresql) {
  TempDir dir;
  std::string config = write_config(
      dir, R"({"testing": {"faults": {"fail_call": 3, "answer_before_commit": true}}})");
  auto r = run_dlqd({"--config", config, "--db", "postgresql://dlq@127.0.0.1:1/dlq",
                     "--check-config", "--allow-testing-faults"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("\"testing.faults.fail_call\": SQLite's only") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("answer_before_commit") == std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(armed_keys_are_logged_as_errors_and_printed_configs_load) {
  TempDir dir;
  DlqdProcess dlqd(faulty_dlqd(R"({"fail_call": 1000000})", "sqlite:" + dir.file("a.db")));
  BOOST_TEST(dlqd.terminate() == 0);
  const std::string log = dlqd.log();
  BOOST_TEST(log.find("\"level\":\"error\",\"event\":\"testing fault armed") != std::string::npos,
             log);
  BOOST_TEST(log.find("testing.faults.fail_call") != std::string::npos, log);

  auto printed = run_dlqd({"--db", "sqlite:" + dir.file("b.db"), "--print-config"});
  BOOST_TEST(printed.exit_code == 0);
  BOOST_TEST(printed.out.find("\"faults\"") == std::string::npos, printed.out);
  std::string config = write_config(dir, printed.out);
  BOOST_TEST(run_dlqd({"--config", config, "--check-config"}).exit_code == 0);
}

BOOST_AUTO_TEST_SUITE_END()

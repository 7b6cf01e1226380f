// The dlqctl tests' server (tokens for an admin and a reader), dlqctl as a subprocess, and the
// HTTP calls that make dead messages for it to work on.
#include "dlqctl/dlqctl_support.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "model/token_hash.hpp"

namespace dlq::test {

DlqdProcess& ctl_server() {
  static DlqdProcess server(DlqdOptions{R"({"auth": {"tokens": [
      {"name": "ops", "token_sha256": ")" + sha256_hex(kAdminToken) + R"(", "roles": ["admin"]},
      {"name": "viewer", "token_sha256": ")" + sha256_hex(kReaderToken) + R"(", "roles": ["reader"]}]},
      "job_types": {")" + std::string(kNotIdempotentType) + R"(": {"idempotent": false}}})"});
  return server;
}

std::string server_url() { return "http://127.0.0.1:" + std::to_string(ctl_server().port()); }

HttpClient& setup_client() {
  static HttpClient client(ctl_server().port());
  return client;
}

Headers admin_headers() { return {{"Authorization", "Bearer " + kAdminToken}}; }

CommandResult dlqctl_raw(const std::vector<std::string>& args, const std::vector<std::string>& env,
                         const std::string& input) {
  return run_program(DLQ_DLQCTL_PATH, args, env, std::chrono::seconds(60), input);
}

CommandResult dlqctl(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> all{"--url", server_url(), "--token", kAdminToken};
  all.insert(all.end(), args.begin(), args.end());
  return dlqctl_raw(all, {}, input);
}

std::int64_t make_dead(const std::string& queue, const std::string& payload,
                       const std::string& job_type, const std::string& error_class) {
  auto& c = setup_client();
  boost::json::object body{{"payload", payload}, {"max_retries", 1}};
  if (!job_type.empty()) body["job_type"] = job_type;
  auto res = c.post("/queues/" + queue + "/messages", body, admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 201);
  std::int64_t id = res.json().at("id").as_int64();
  auto claimed = c.post("/queues/" + queue + "/claim", boost::json::object{}, admin_headers());
  BOOST_REQUIRE_EQUAL(claimed.status, 200);
  BOOST_REQUIRE_EQUAL(claimed.json().at("message").at("id").as_int64(), id);
  auto failed = c.post("/queues/" + queue + "/messages/" + std::to_string(id) + "/fail",
                       boost::json::object{{"error", "smtp timeout"}, {"error_class", error_class}},
                       admin_headers());
  BOOST_REQUIRE_EQUAL(failed.status, 200);
  BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
  return id;
}

boost::json::object get_message(const std::string& queue, std::int64_t id) {
  auto res = setup_client().get("/queues/" + queue + "/messages/" + std::to_string(id), admin_headers());
  BOOST_REQUIRE_EQUAL(res.status, 200);
  return res.json().as_object();
}

CommandResult dlqctl_on_terminal(const std::string& args, int columns) {
  std::string command = "stty cols " + std::to_string(columns) + " rows 40; " +
                        std::string(DLQ_DLQCTL_PATH) + " --url " + server_url() + " --token " +
                        kAdminToken + " " + args;
  return run_program("/usr/bin/script", {"-qefc", command, "/dev/null"});
}

unsigned short closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);  // bound, never listened on: connections are refused
  return ntohs(addr.sin_port);
}

}  // namespace dlq::test

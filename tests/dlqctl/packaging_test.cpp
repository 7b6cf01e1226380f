// How dlqctl reaches dlqd (https through a TLS proxy; exit status 3 when there is no usable
// answer) and what the packaging relies on: the Docker image's HEALTHCHECK command against a
// live dlqd, and the image's config refusing to start until its token placeholder is replaced.
// (No Docker daemon here: the image itself is not built.)
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "dlqctl/dlqctl_support.hpp"
#include "model/token_hash.hpp"
#include "support/temp_dir.hpp"
#include "support/webhook_receiver.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(DLQ_SOURCE_DIR) + "/" + relative);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A listening socket on 127.0.0.1 (port in *port); the caller accepts or not.
int listen_socket(unsigned short* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  BOOST_REQUIRE(listen(fd, 8) == 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// Serves one request with `answer` (raw HTTP), then closes.
std::thread answer_once(int listener, std::string answer) {
  return std::thread([listener, answer] {
    int c = accept(listener, nullptr, nullptr);
    if (c < 0) return;
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = read(c, buf, sizeof buf);
      if (n <= 0) break;
      request.append(buf, static_cast<std::size_t>(n));
    }
    ssize_t ignored = write(c, answer.data(), answer.size());
    (void)ignored;
    close(c);
  });
}

// The HEALTHCHECK's exec-form command from the Dockerfile, as argv.
std::vector<std::string> healthcheck_argv() {
  std::string dockerfile = std::regex_replace(read_source("Dockerfile"), std::regex("\\\\\n"), " ");
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(dockerfile, m, std::regex(R"(HEALTHCHECK[^\n]*CMD (\[[^\n]*\]))")),
                        "the Dockerfile has no exec-form HEALTHCHECK CMD [...]");
  std::vector<std::string> argv;
  json::value command = json::parse(m[1].str());  // a range-for over a temporary's member dangles
  for (const auto& v : command.as_array()) argv.emplace_back(v.as_string());
  return argv;
}

// `openssl s_server -WWW` serving the files of `dir` over TLS on 127.0.0.1:`port`: a stand-in
// for the TLS proxy in front of dlqd.
class TlsFileServer {
 public:
  TlsFileServer(const std::string& dir, const TestCertificates& certs, unsigned short port) {
    pid_ = fork();
    if (pid_ == 0) {
      if (chdir(dir.c_str()) != 0) _exit(127);
      int null = open("/dev/null", O_RDWR);
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      std::string accept = "127.0.0.1:" + std::to_string(port);
      execlp("openssl", "openssl", "s_server", "-quiet", "-WWW", "-accept", accept.c_str(), "-cert",
             certs.cert_file.c_str(), "-key", certs.key_file.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Ready once it accepts connections.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(port);
      bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      close(fd);
      if (up) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    BOOST_FAIL("openssl s_server did not start");
  }
  ~TlsFileServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tls)

BOOST_AUTO_TEST_CASE(https_verifies_the_server_certificate) {
  TempDir dir;
  TestCertificates certs(dir.path().string());
  std::ofstream(dir.file("healthz")) << R"({"status":"ok"})";
  unsigned short port = closed_port();
  TlsFileServer server(dir.path().string(), certs, port);
  const std::string url = "https://127.0.0.1:" + std::to_string(port);
  auto r = dlqctl_raw({"--url", url, "--ca-file", certs.ca_file, "health"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == "ok\n");
  // Not signed by a CA we trust: no request is sent, exit 3.
  r = dlqctl_raw({"--url", url, "health"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("TLS with 127.0.0.1:") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("certificate verify failed") != std::string::npos, r.err);
  r = dlqctl_raw({"--url", url, "--ca-file", dir.file("missing.pem"), "health"});
  BOOST_TEST(r.exit_code == 2);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(no_answer)

BOOST_AUTO_TEST_CASE(closed_port_exits_3) {
  auto r = dlqctl_raw({"--url", "http://127.0.0.1:" + std::to_string(closed_port()), "queues"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("cannot connect to 127.0.0.1:") != std::string::npos);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_CASE(silent_server_times_out_with_3) {
  unsigned short port = 0;
  int fd = listen_socket(&port);  // the kernel completes the handshake; nobody ever answers
  auto start = std::chrono::steady_clock::now();
  auto r = dlqctl_raw({"--url", "http://127.0.0.1:" + std::to_string(port), "--timeout", "0.5", "queues"});
  auto took = std::chrono::steady_clock::now() - start;
  close(fd);
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("no answer from 127.0.0.1:") != std::string::npos);
  BOOST_TEST(took < std::chrono::seconds(5));
}

BOOST_AUTO_TEST_CASE(server_error_exits_3) {
  unsigned short port = 0;
  int fd = listen_socket(&port);
  std::string body = R"({"type":"https://dlq.dev/problems/database-unavailable","title":"Database unavailable","status":503,"detail":"the database cannot be reached; retry later"})";
  auto server = answer_once(fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n"
                                "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  auto r = dlqctl_raw({"--url", "http://127.0.0.1:" + std::to_string(port), "queues"});
  server.join();
  close(fd);
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("503 database-unavailable: the database cannot be reached") != std::string::npos);
}

// A 4xx that is not dlq's (a proxy's HTML 404: --url points elsewhere) is no answer from dlq.
BOOST_AUTO_TEST_CASE(not_json_answer_is_exit_3) {
  unsigned short port = 0;
  int fd = listen_socket(&port);
  std::string body = "<html><body><h1>404 Not Found</h1></body></html>";
  auto server = answer_once(fd, "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: " +
                                    std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  auto r = dlqctl_raw({"--url", "http://127.0.0.1:" + std::to_string(port), "show", "q", "1"});
  server.join();
  close(fd);
  REQUIRE_EXIT(r, 3);
  BOOST_TEST(r.err.find("the answer (404) is not dlq's: is --url dlqd's address?") != std::string::npos);
  BOOST_TEST(r.err.find("<h1>404 Not Found</h1>") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(packaging)

BOOST_AUTO_TEST_CASE(dockerfile_healthcheck_works_against_dlqd) {
  auto argv = healthcheck_argv();
  BOOST_REQUIRE(!argv.empty());
  BOOST_TEST(argv[0] == "/usr/local/bin/dlqctl");
  BOOST_TEST(read_source("Dockerfile").find("COPY --from=build /src/build/app/dlqctl /usr/local/bin/dlqctl") !=
             std::string::npos);
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  // The image sets DLQ_URL to its own listener; here it points at the test's dlqd.
  auto r = run_program(DLQ_DLQCTL_PATH, args, {"DLQ_URL=" + server_url()});
  BOOST_TEST(r.exit_code == 0, r.err);
  r = run_program(DLQ_DLQCTL_PATH, args, {"DLQ_URL=http://127.0.0.1:" + std::to_string(closed_port())});
  BOOST_TEST(r.exit_code != 0);
}

BOOST_AUTO_TEST_CASE(docker_config_refuses_until_the_token_is_replaced) {
  std::string config = read_source("config/docker.json");
  auto r = run_dlqd({"--config", std::string(DLQ_SOURCE_DIR) + "/config/docker.json", "--check-config"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("token_sha256") != std::string::npos, r.err);

  // The documented step: replace the placeholder with `dlqd hash-token`'s output.
  const std::string placeholder = "REPLACE-with-the-output-of-dlqd-hash-token";
  auto at = config.find(placeholder);
  BOOST_REQUIRE(at != std::string::npos);
  config.replace(at, placeholder.size(), dlq::sha256_hex("a-real-token-from-openssl-rand"));
  TempDir dir;
  {
    std::ofstream out(dir.file("dlqd.json"));
    out << config;
  }
  r = run_dlqd({"--config", dir.file("dlqd.json"), "--check-config"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == "config OK\n");
}

BOOST_AUTO_TEST_CASE(run_sh_builds_dlqctl) {
  // The README's dlqctl lines run the dlqctl built beside the dlqd that scripts/run.sh starts.
  std::string script = read_source("scripts/run.sh");
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(script, m, std::regex(R"(cmake --build [^\n]*--target([^\n#]*))")),
                        "scripts/run.sh has no `cmake --build ... --target ...` line");
  const std::string targets = m[1].str() + " ";
  BOOST_TEST(std::regex_search(targets, std::regex(R"(\sdlqd\s)")), "run.sh builds no dlqd: " << m[0]);
  BOOST_TEST(std::regex_search(targets, std::regex(R"(\sdlqctl\s)")), "run.sh builds no dlqctl: " << m[0]);
}

BOOST_AUTO_TEST_SUITE_END()

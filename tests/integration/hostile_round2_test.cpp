// Issue 31, hostile input round two: what an adversary found on the operator's side after the
// first round (issue 16). Each section below is one group of the issue's items; each keeps its
// helpers in a namespace of its own and its cases in a suite of its own. Raw sockets where the
// bytes matter, the real dlqd throughout, both databases where the store is involved.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

// ---------------------------------------------------------------------------------------------
// Items 1, 2 and 14: the method label, Host and Origin, two Authorization headers.
// ---------------------------------------------------------------------------------------------

// (end of items 1, 2 and 14)

// ---------------------------------------------------------------------------------------------
// Item 3: slow readers of /dlq, batch claims and /audit.
// ---------------------------------------------------------------------------------------------

// (end of item 3)

// ---------------------------------------------------------------------------------------------
// Item 5: folded releases and paged attempts.
// ---------------------------------------------------------------------------------------------

// (end of item 5)

// ---------------------------------------------------------------------------------------------
// Items 6 and 15: the number of queues and of previews.
// ---------------------------------------------------------------------------------------------

// (end of items 6 and 15)

// ---------------------------------------------------------------------------------------------
// Items 7 to 11: signals at start-up, reloads, logs and file modes.
// ---------------------------------------------------------------------------------------------

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "model/token_hash.hpp"
#include "support/preconditions.hpp"

extern char** environ;

namespace round2_process {

using namespace std::chrono_literals;

// A PostgreSQL server that never answers: the kernel completes the handshake on this socket's
// backlog and nothing ever reads what libpq sends, so dlqd waits on its connect timeout.
class SilentListener {
 public:
  SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    BOOST_REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof addr;
    BOOST_REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    BOOST_REQUIRE(::listen(fd_, 16) == 0);
    BOOST_REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  unsigned short port() const { return port_; }

 private:
  int fd_;
  unsigned short port_ = 0;
};

// dlqd started with `args` and nothing awaited (DlqdProcess waits for the readiness line);
// its output goes to files in `dir`, and the environment's DLQ_ variables are left out.
pid_t spawn_dlqd(const std::vector<std::string>& args, const TempDir& dir) {
  std::vector<std::string> argv_text{DLQ_DLQD_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    if (std::string_view(*e).substr(0, 4) != "DLQ_") envp.push_back(*e);
  }
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, dir.file("stdout.txt").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, dir.file("stderr.txt").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  BOOST_REQUIRE_EQUAL(rc, 0);
  return pid;
}

// Polls `done` every 10 ms for up to `limit`; true once it held.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::size_t occurrences(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Well-formed UTF-8 (Unicode table 3-7), written here independently of dlqd's own check.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                  : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    auto c1 = static_cast<unsigned char>(n > 1 ? s[i + 1] : 0);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
        (c == 0xF4 && c1 > 0x8F)) {
      return false;
    }
    i += n;
  }
  return true;
}

json::object token_entry(const std::string& name, const std::string& secret) {
  return json::object{{"name", name},
                      {"token_sha256", dlq::sha256_hex(secret)},
                      {"roles", json::array{"admin"}}};
}

std::string auth_config(json::array tokens, bool allow_anonymous = false) {
  json::object auth{{"tokens", std::move(tokens)}};
  if (allow_anonymous) auth["allow_anonymous"] = true;
  return json::serialize(json::object{{"auth", std::move(auth)}});
}

Headers bearer(const std::string& secret) { return {{"Authorization", "Bearer " + secret}}; }

// Sends SIGHUP and waits until the log shows the reload's outcome (either one).
bool reload(DlqdProcess& node) {
  const std::string before = node.log();
  const std::size_t outcomes = occurrences(before, "access tokens reloaded") +
                               occurrences(before, "keeping the old tokens");
  node.signal(SIGHUP);
  return eventually([&] {
    const std::string log = node.log();
    return occurrences(log, "access tokens reloaded") + occurrences(log, "keeping the old tokens") >
           outcomes;
  });
}

unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

}  // namespace round2_process

BOOST_AUTO_TEST_SUITE(hostile_round2_process)

// Item 7. Before the fix, the SIGHUP at 0.3 s ended dlqd (its default action) while the store
// still waited for the database.
BOOST_AUTO_TEST_CASE(a_sighup_while_the_database_connects_does_not_kill_dlqd) {
  using namespace round2_process;
  SilentListener postgres;
  TempDir dir;
  {
    std::ofstream config(dir.file("dlqd.json"));
    config << json::serialize(json::object{
        {"database", json::object{{"url", "postgresql://dlq@127.0.0.1:" +
                                              std::to_string(postgres.port()) + "/dlq"},
                                  {"connect_timeout_seconds", 2}}}});
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = spawn_dlqd({"--config", dir.file("dlqd.json"), "--listen", "127.0.0.1:0"}, dir);
  int status = 0;
  bool ended = false;
  for (auto at : {300ms, 1000ms}) {
    std::this_thread::sleep_until(start + at);
    if (!ended) ended = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) ::kill(pid, SIGHUP);
  }
  std::this_thread::sleep_until(start + 1300ms);
  if (!ended) ended = ::waitpid(pid, &status, WNOHANG) == pid;
  BOOST_TEST(!ended, "dlqd ended within 1.3 s while its database kept silent");
  BOOST_TEST(!(ended && WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP),
             "dlqd was killed by SIGHUP");
  // It gives up once connect_timeout_seconds pass, with an error of its own and not by a signal.
  if (!ended) {
    ended = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 20s);
    if (!ended) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  BOOST_TEST(ended);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(read_file(dir.file("stdout.txt")).empty());  // never ready
}

// Item 8. Before the fix every table ever loaded stayed: 5,000 entries a reload.
BOOST_AUTO_TEST_CASE(reloads_free_the_token_tables_they_replace) {
  using namespace round2_process;
  // Two files that differ in their last token, so each reload shows in what a request may do
  // (sooner than the log line, which the sink holds up to 50 ms).
  std::string files[2];
  for (int f = 0; f < 2; ++f) {
    json::array tokens;
    for (int i = 0; i < 4999; ++i) {
      tokens.push_back(token_entry("holder-" + std::to_string(i), "secret-" + std::to_string(i)));
    }
    tokens.push_back(token_entry("rotating", "rotating-" + std::to_string(f)));
    files[f] = json::serialize(json::object{{"auth", json::object{{"tokens", tokens}}},
                                            {"log", json::object{{"access", false}}}});
  }
  DlqdProcess node{DlqdOptions(files[0])};
  HttpClient c(node.port());
  BOOST_TEST(c.get("/queues", bearer("secret-4998")).status == 200);
  auto reload_to = [&](int f) {
    node.rewrite_config(files[f]);
    node.signal(SIGHUP);
    const std::string secret = "rotating-" + std::to_string(f);
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (c.get("/queues", bearer(secret)).status != 200) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(2ms);
    }
    return true;
  };
  for (int i = 1; i <= 6; ++i) BOOST_REQUIRE(reload_to(i % 2));  // the allocator settles
  long before = resident_mib(node.pid());
  for (int i = 1; i <= 100; ++i) BOOST_REQUIRE(reload_to(i % 2));
  long grown = resident_mib(node.pid()) - before;
  BOOST_TEST_MESSAGE("RSS grew by " << grown << " MiB over 100 reloads of 5,000 tokens");
  if (!kSanitized) BOOST_TEST(grown <= 8);
  BOOST_TEST(c.get("/queues", bearer("secret-0")).status == 200);
  BOOST_TEST(c.get("/queues", bearer("rotating-1")).status == 401);
}

// Item 9. Before the fix a reload to no tokens on loopback opened every route to anyone.
BOOST_AUTO_TEST_CASE(a_reload_to_no_tokens_keeps_the_old_ones_unless_anonymous_is_allowed) {
  using namespace round2_process;
  {
    DlqdProcess node{DlqdOptions(auth_config(json::array{token_entry("ops", "ops-secret")}))};
    HttpClient c(node.port());
    BOOST_TEST(c.get("/audit").status == 401);
    node.rewrite_config(auth_config(json::array{}));
    BOOST_REQUIRE(reload(node));
    BOOST_TEST(c.get("/audit").status == 401);
    BOOST_TEST(c.get("/audit", bearer("ops-secret")).status == 200);
    BOOST_TEST(node.log().find("keeping the old tokens") != std::string::npos);
    // The key in the reloaded file alone is not enough: it needs a restart like every other key.
    node.rewrite_config(auth_config(json::array{}, true));
    BOOST_REQUIRE(reload(node));
    BOOST_TEST(c.get("/audit").status == 401);
  }
  {
    DlqdProcess node{
        DlqdOptions(auth_config(json::array{token_entry("ops", "ops-secret")}, true))};
    HttpClient c(node.port());
    BOOST_TEST(c.get("/audit").status == 401);
    node.rewrite_config(auth_config(json::array{}, true));
    BOOST_REQUIRE(reload(node));
    BOOST_TEST(c.get("/audit").status == 200);
  }
}

// Item 10. Before the fix the decoded queue went into the line as it was: %0a began a line of
// the client's making, and %ff%fe wrote bytes that are not UTF-8.
BOOST_AUTO_TEST_CASE(a_queue_segment_cannot_forge_a_text_log_line) {
  using namespace round2_process;
  DlqdProcess node{DlqdOptions(R"({"log": {"format": "text"}})")};
  HttpClient c(node.port());
  auto res = c.get("/queues/x%20actor=ops%0a2026-01-01T00:00:00.000Z%20info%20%20forged%20"
                   "queue=admin/messages",
                   {{"X-Request-Id", "round2-forge"}});
  BOOST_TEST(res.status == 404);
  BOOST_REQUIRE(eventually([&] { return node.log().find("round2-forge") != std::string::npos; }));
  std::vector<std::string> mine;
  for (const auto& line : lines_of(node.log())) {
    if (line.find("round2-forge") != std::string::npos) mine.push_back(line);
    BOOST_CHECK_MESSAGE(line.find("forged") == std::string::npos, "a forged line: " << line);
  }
  BOOST_REQUIRE_EQUAL(mine.size(), 1u);
  BOOST_CHECK_MESSAGE(mine[0].find(" queue=- ") != std::string::npos, mine[0]);
}

BOOST_AUTO_TEST_CASE(every_log_line_is_utf8_after_a_client_sends_bytes_that_are_not) {
  using namespace round2_process;
  for (std::string format : {"text", "json"}) {
    BOOST_TEST_CONTEXT("log.format " << format) {
      DlqdProcess node{DlqdOptions(R"({"log": {"format": ")" + format + R"(", "level": "debug"}})")};
      HttpClient c(node.port());
      BOOST_TEST(c.get("/queues/%ff%fe/messages", {{"X-Request-Id", "round2-utf8"}}).status ==
                 404);
      // The same bytes raw in the target (the debug line logs the path as it came).
      RawConnection raw(node.port());
      raw.send("GET /queues/\xff\xfe/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "X-Request-Id: round2-raw\r\nConnection: close\r\n\r\n");
      raw.read(1000);
      BOOST_REQUIRE(eventually([&] {
        std::string log = node.log();
        return log.find("round2-utf8") != std::string::npos;
      }));
      std::this_thread::sleep_for(100ms);  // the raw request's lines, if any, are written too
      for (const auto& line : lines_of(node.log())) {
        BOOST_CHECK_MESSAGE(valid_utf8(line), "not UTF-8: " << line);
        if (format == "json") {
          boost::system::error_code ec;
          json::parse(line, ec);
          BOOST_CHECK_MESSAGE(!ec, "not JSON: " << line);
        }
        if (line.find("round2-utf8") != std::string::npos && line.find("access") != std::string::npos) {
          BOOST_CHECK_MESSAGE(
              (format == "text" ? line.find(" queue=- ") : line.find(R"("queue":"-")")) !=
                  std::string::npos,
              line);
        }
      }
    }
  }
}

// Item 11 (SQLite: PostgreSQL keeps its own files). Before the fix they followed the umask:
// folders 0755, files 0644.
BOOST_AUTO_TEST_CASE(the_files_and_folders_dlqd_creates_are_its_owners_alone,
                     *boost::unit_test::precondition(on_sqlite)) {
  using namespace round2_process;
  TempDir dir;
  const std::filesystem::path db = dir.path() / "data" / "dlq" / "dlq.db";
  const std::string url = "sqlite:" + db.string();
  {
    mode_t saved = ::umask(022);
    DlqdProcess node{DlqdOptions("{}", url)};
    ::umask(saved);
    HttpClient c(node.port());
    enqueue(c, fresh_queue("modes"), "{}");
    BOOST_TEST(mode_of(dir.path() / "data") == 0700u);
    BOOST_TEST(mode_of(dir.path() / "data" / "dlq") == 0700u);
    for (std::string suffix : {"", "-wal", "-shm"}) {
      BOOST_CHECK_MESSAGE(mode_of(db.string() + suffix) == 0600u,
                          "dlq.db" << suffix << " is " << std::oct << mode_of(db.string() + suffix));
    }
    BOOST_TEST(node.log().find("open to other users") == std::string::npos);
    BOOST_TEST(node.terminate() == 0);
  }
  // A database file that others may read is kept as it is, with a warning at start.
  BOOST_REQUIRE(::chmod(db.c_str(), 0644) == 0);
  DlqdProcess node{DlqdOptions("{}", url)};
  BOOST_CHECK_MESSAGE(node.log().find("open to other users") != std::string::npos, node.log());
  BOOST_TEST(mode_of(db) == 0644u);
}

BOOST_AUTO_TEST_SUITE_END()


// (end of items 7 to 11)

// ---------------------------------------------------------------------------------------------
// Items 12 and 13: what the server returns for the UI and dlqctl to show (redaction).
// ---------------------------------------------------------------------------------------------

// (end of items 12 and 13)

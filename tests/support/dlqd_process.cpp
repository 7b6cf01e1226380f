#include "support/dlqd_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "support/pg_admin.hpp"
#include "support/temp_dir.hpp"

extern char** environ;

namespace dlq::test {
namespace {

std::string make_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "dlqd-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

std::vector<std::string> merged_env(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    // The test decides these; never inherit them from the developer's shell.
    if (entry.starts_with("DLQ_LISTEN=") || entry.starts_with("DLQ_DATABASE_URL=") ||
        entry.starts_with("DLQ_LOG_LEVEL=") || entry.starts_with("DLQ_URL=") ||
        entry.starts_with("DLQ_TOKEN=") || entry.starts_with("DLQ_CA_FILE=")) {
      continue;
    }
    env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Forks and execs `program`; stdout goes to `stdout_fd` (a pipe end or file), stderr to a file.
pid_t spawn(const std::string& program, const std::vector<std::string>& args,
            const std::vector<std::string>& env, int stdout_fd, const std::string& stderr_path,
            int stdin_fd = -1) {
  std::vector<std::string> argv_storage{program};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = merged_env(env);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    dup2(stdout_fd, STDOUT_FILENO);
    if (stdin_fd >= 0) dup2(stdin_fd, STDIN_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

}  // namespace

const char* dlqd_path() {
  static const char* path = [] {
    const char* chosen = std::getenv("DLQ_TEST_DLQD");
    return chosen != nullptr && *chosen != '\0' ? chosen : DLQ_DLQD_PATH;
  }();
  return path;
}

std::string fresh_database_url(const std::string& dir) {
  if (test_backend() == Backend::postgresql) return create_pg_database("dlq_it");
  return "sqlite:" + dir + "/dlq.db";
}

DlqdProcess::DlqdProcess(DlqdOptions options) : options_(std::move(options)) {
  dir_ = make_dir();
  database_url_ = options_.database_url.empty() ? fresh_database_url(dir_) : options_.database_url;
  {
    std::ofstream config(dir_ + "/dlqd.json");
    config << options_.config_json;
  }
  std::vector<std::string> args{"--config", dir_ + "/dlqd.json", "--listen", "127.0.0.1:0",
                                "--db", database_url_};
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  int pipefd[2];
  if (pipe(pipefd) != 0) throw std::runtime_error("pipe failed");
  pid_ = spawn(dlqd_path(), args, options_.env, pipefd[1], dir_ + "/stderr.log");
  close(pipefd[1]);

  // Read the readiness line: "dlqd listening on http://127.0.0.1:PORT".
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (out.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{pipefd[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[256];
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(pipefd[0]);
  auto at = out.find("http://");
  auto colon = out.rfind(':');
  if (at == std::string::npos || colon == std::string::npos || colon < at) {
    std::string log_text = log();
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw std::runtime_error("dlqd did not become ready; stdout: " + out + " stderr: " + log_text);
  }
  port_ = static_cast<unsigned short>(std::stoi(out.substr(colon + 1)));
}

DlqdProcess::~DlqdProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool DlqdProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int DlqdProcess::wait_exit(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return decode_status(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("dlqd did not exit in time");
}

int DlqdProcess::terminate(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) throw std::runtime_error("dlqd is not running");
  kill(pid_, SIGTERM);
  return wait_exit(timeout);
}

void DlqdProcess::kill9() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string DlqdProcess::log() const { return read_file(dir_ + "/stderr.log"); }

void DlqdProcess::rewrite_config(const std::string& config_json) {
  std::ofstream config(dir_ + "/dlqd.json", std::ios::trunc);
  config << config_json;
}

void DlqdProcess::signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

CommandResult run_dlqd(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       std::chrono::milliseconds timeout, const std::string& input) {
  return run_program(dlqd_path(), args, env, timeout, input);
}

CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env, std::chrono::milliseconds timeout,
                          const std::string& input) {
  TempDir dir;
  std::string out_path = dir.file("stdout.txt");
  int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) throw std::runtime_error("cannot create stdout file");
  std::string in_path = dir.file("stdin.txt");
  {
    std::ofstream in_file(in_path, std::ios::binary);
    in_file << input;
  }
  int in = open(in_path.c_str(), O_RDONLY);
  if (in < 0) throw std::runtime_error("cannot open stdin file");
  pid_t pid = spawn(program, args, env, out, dir.file("stderr.txt"), in);
  close(out);
  close(in);
  CommandResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      result.exit_code = decode_status(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      throw std::runtime_error(program + " did not finish in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.out = read_file(out_path);
  result.err = read_file(dir.file("stderr.txt"));
  return result;
}

}  // namespace dlq::test

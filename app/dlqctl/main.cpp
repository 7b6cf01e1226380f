// dlqctl: the operators' command-line client of dlqd's HTTP API. This file reads the command line
// (command_line.cpp knows the flags), builds the session and maps outcomes to exit statuses:
// 0 ok, 1 the server said no (or the operator answered no), 2 bad usage, 3 no usable answer.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <boost/program_options/errors.hpp>

#include "command_line.hpp"
#include "model/token_hash.hpp"
#include "output.hpp"
#include "session.hpp"

namespace po = boost::program_options;
using namespace dlq::ctl;

namespace {

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// How wide tables may be: the terminal's width, else $COLUMNS, else no limit (0).
std::size_t output_columns() {
  winsize ws{};
  if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  const std::string columns = env_or("COLUMNS", "");
  char* end = nullptr;
  long n = std::strtol(columns.c_str(), &end, 10);
  return !columns.empty() && *end == '\0' && n > 0 && n < 10000 ? static_cast<std::size_t>(n) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CommandLine line = parse_command_line(argc, argv);
    if (line.help) {
      std::cout << usage(line.help_command) << "\n";
      return kExitOk;
    }
    Global& g = line.global;
    const Invocation& inv = line.invocation;
    if (inv.command == "hash-token") return dlq::hash_token_command(std::cin, std::cout, std::cerr, "dlqctl");
    if (g.url.empty()) g.url = env_or("DLQ_URL", "http://127.0.0.1:8080");
    if (g.token.empty()) g.token = env_or("DLQ_TOKEN", "");
    if (g.ca_file.empty()) g.ca_file = env_or("DLQ_CA_FILE", "");
    Client client(ServerUrl::parse(g.url), g.token,
                  std::chrono::milliseconds(static_cast<long long>(g.timeout_s * 1000)), g.ca_file);
    Session session{client, g.json, isatty(STDOUT_FILENO) == 1, std::cin, std::cout, std::cerr};
    session.columns = output_columns();
    const bool acts = inv.command == "replay" || inv.command == "dismiss" || inv.command == "purge" ||
                      inv.command == "enqueue" || inv.command == "trial" || (inv.command == "run" && (inv.args.size() == 2 || inv.flags.follow));
    if (inv.command == "incidents" || inv.command == "incident" || inv.command == "mute") {
      return run_incident_command(session, inv);
    }
    return acts ? run_action_command(session, inv) : run_view_command(session, inv);
  } catch (const po::error& e) {
    std::cerr << "dlqctl: " << shown(e.what()) << " (see dlqctl --help)\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "dlqctl: " << shown(e.what()) << " (see dlqctl --help)\n";
    return kExitUsage;
  } catch (const ServerRefused& e) {  // describe_problem's lines: their pieces are shown() already
    std::cerr << "dlqctl: the server refused: " << e.what() << "\n";
    return kExitRefused;
  } catch (const ServerFailed& e) {
    std::cerr << "dlqctl: the server failed: " << e.what() << "\n";
    return kExitUnreachable;
  } catch (const Unreachable& e) {
    std::cerr << "dlqctl: " << shown(e.what()) << "\n";
    return kExitUnreachable;
  } catch (const std::exception& e) {
    std::cerr << "dlqctl: unexpected answer: " << shown(e.what()) << "\n";
    return kExitUnreachable;
  }
}

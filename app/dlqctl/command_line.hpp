// dlqctl's command line: every flag declared once (its name, where its value goes, its help) in a
// table that the parser, the usage text and the check of which flags a command takes all read,
// and the parse of argv into the Invocation the commands run.
#pragma once

#include <string>

#include "session.hpp"

namespace dlq::ctl {

// The flags every command takes: where the server is and how to talk to it.
struct Global {
  std::string url, token, ca_file;
  bool json = false;
  double timeout_s = 30;
};

struct CommandLine {
  // --help or `help`: print usage(help_command) and exit 0; nothing else was checked.
  bool help = false;
  std::string help_command;  // `dlqctl help CMD`, `dlqctl CMD --help`; empty: every command
  Global global;
  Invocation invocation;
};

// Throws UsageError (or boost::program_options::error) for bad usage.
CommandLine parse_command_line(int argc, char** argv);
// What --help prints: the synopsis and every flag with its help; for one command, its usage,
// the flags it takes and an example (throws UsageError for an unknown command).
std::string usage(const std::string& command = "");

}  // namespace dlq::ctl

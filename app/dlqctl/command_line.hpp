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
  bool help = false;  // --help: print usage() and exit 0; nothing else was checked
  Global global;
  Invocation invocation;
};

// Throws UsageError (or boost::program_options::error) for bad usage.
CommandLine parse_command_line(int argc, char** argv);
// What --help prints: the synopsis and every flag with its help.
std::string usage();

}  // namespace dlq::ctl

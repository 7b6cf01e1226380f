// dlqctl's help page per command (`dlqctl help CMD`, `dlqctl CMD --help`): how it is called,
// what it does, an example. The flags a page lists come from command_line.cpp's tables.
#pragma once

#include <string_view>

namespace dlq::ctl {

struct CommandHelp {
  const char* command;
  const char* synopsis;  // after "dlqctl "; a second form on its own line
  const char* what;
  const char* example;
};

// The page of `command`; nullptr for a command that has none.
const CommandHelp* command_help(std::string_view command);

}  // namespace dlq::ctl

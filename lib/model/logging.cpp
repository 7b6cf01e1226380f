// spdlog does the I/O, time stamps and levels; this file only shapes the line.
#include "model/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "model/json_text.hpp"

namespace dlq::log {
namespace {

Format g_format = Format::json;

spdlog::level::level_enum to_spdlog(Level l) {
  switch (l) {
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

}  // namespace

void setup(Level level, Format format) {
  g_format = format;
  auto logger = spdlog::stderr_logger_mt("dlq");
  logger->set_level(to_spdlog(level));
  if (format == Format::json) {
    logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})",
                        spdlog::pattern_time_type::utc);
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %-5l %v", spdlog::pattern_time_type::utc);
  }
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

bool enabled(Level level) { return spdlog::default_logger_raw()->should_log(to_spdlog(level)); }

void write(Level level, std::string_view event, std::initializer_list<Field> fields) {
  auto* logger = spdlog::default_logger_raw();
  if (!logger->should_log(to_spdlog(level))) return;
  // One buffer, escaped in place: the access log writes a line per request.
  std::string line;
  line.reserve(256);
  if (g_format == Format::json) {
    line += "\"event\":";
    append_json_string(line, event);
    for (const auto& [key, value] : fields) {
      line += ',';
      append_json_string(line, key);
      line += ':';
      append_json_string(line, value);
    }
  } else {
    line += event;
    for (const auto& [key, value] : fields) {
      line += ' ';
      line += key;
      line += '=';
      line += value;
    }
  }
  logger->log(to_spdlog(level), spdlog::string_view_t(line.data(), line.size()));
}

}  // namespace dlq::log

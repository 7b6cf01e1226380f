// spdlog does the I/O, time stamps and levels; this file only shapes the line.
#include "model/logging.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

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

std::string quoted(std::string_view s) { return boost::json::serialize(boost::json::string(s)); }

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
  std::string line;
  if (g_format == Format::json) {
    line = "\"event\":" + quoted(event);
    for (const auto& [key, value] : fields) {
      line += ',';
      line += quoted(key);
      line += ':';
      line += quoted(value);
    }
  } else {
    line = std::string(event);
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

// spdlog does the I/O, time stamps and levels; this file only shapes the line.
#include "model/logging.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <thread>

#include <spdlog/sinks/base_sink.h>
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

// Standard error, gathered. spdlog's stderr sink makes a write() per line, and the access log
// writes a line per request: about a quarter of dlqd's CPU per /healthz request went there
// (docs/performance.md). Here lines wait in memory and go out together: at once with the first
// warning or error (after every line before it), when 64 KiB wait, otherwise at most 50 ms after
// the first waiting line; and when the logger goes away (exit). A kill -9 can lose those 50 ms.
class GatheredStderr final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  GatheredStderr() : flusher_([this] { run(); }) {}

  ~GatheredStderr() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    flusher_.join();
    std::lock_guard lock(mutex_);
    write_pending();
  }

  GatheredStderr(const GatheredStderr&) = delete;
  GatheredStderr& operator=(const GatheredStderr&) = delete;

 protected:
  // Both run with the sink's mutex held (base_sink).
  void sink_it_(const spdlog::details::log_msg& msg) override {
    bool was_empty = pending_.size() == 0;
    formatter_->format(msg, pending_);  // appends the line
    if (pending_.size() >= kMaxPending) {
      write_pending();
    } else if (was_empty) {
      wake_.notify_one();
    }
  }

  void flush_() override { write_pending(); }

 private:
  static constexpr std::size_t kMaxPending = 64 * 1024;
  static constexpr std::chrono::milliseconds kMaxDelay{50};

  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait(lock, [this] { return stopping_ || pending_.size() > 0; });
      // Let more lines join for a moment (a warning or a full buffer writes them sooner).
      wake_.wait_for(lock, kMaxDelay, [this] { return stopping_; });
      write_pending();
    }
  }

  void write_pending() {
    std::size_t done = 0;
    while (done < pending_.size()) {
      ssize_t n = ::write(STDERR_FILENO, pending_.data() + done, pending_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // nowhere to write: the lines are dropped, as a failed fwrite would
      done += static_cast<std::size_t>(n);
    }
    pending_.clear();
  }

  spdlog::memory_buf_t pending_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread flusher_;  // last: it starts once the members it uses exist
};

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
constexpr char kHex[] = "0123456789abcdef";

// The length of the well-formed UTF-8 sequence that starts at s[i] (Unicode table 3-7: no
// overlong forms, surrogates or code points past U+10FFFF), or 0 when there is none.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto byte = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

bool needs_text_quotes(std::string_view value) {
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == '=' || c == '"' || c == 0x7F) return true;
  }
  return false;
}

// Appends s[i...] up to the next ASCII byte that `escape` wants, replacing every byte that does
// not start a well-formed sequence with U+FFFD; returns where it stopped.
template <typename Escape>
std::size_t append_utf8_run(std::string& out, std::string_view s, std::size_t i, Escape escape) {
  std::size_t run = i;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (escape(c)) break;
      ++i;
      continue;
    }
    std::size_t length = utf8_sequence(s, i);
    if (length > 0) {
      i += length;
      continue;
    }
    out.append(s.data() + run, i - run);
    out += kReplacement;
    run = ++i;
  }
  out.append(s.data() + run, i - run);
  return i;
}

}  // namespace

void append_json_value(std::string& out, std::string_view value) {
  out += '"';
  auto escaped = [](unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; };
  for (std::size_t i = append_utf8_run(out, value, 0, escaped); i < value.size();
       i = append_utf8_run(out, value, i + 1, escaped)) {
    auto c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out += '"';
}

void append_text_value(std::string& out, std::string_view value) {
  if (!needs_text_quotes(value)) {
    append_utf8_run(out, value, 0, [](unsigned char) { return false; });
    return;
  }
  out += '"';
  auto escaped = [](unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c == 0x7F; };
  for (std::size_t i = append_utf8_run(out, value, 0, escaped); i < value.size();
       i = append_utf8_run(out, value, i + 1, escaped)) {
    auto c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out += '"';
}

void setup(Level level, Format format) {
  g_format = format;
  auto logger = std::make_shared<spdlog::logger>("dlq", std::make_shared<GatheredStderr>());
  logger->set_level(to_spdlog(level));
  if (format == Format::json) {
    logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})",
                        spdlog::pattern_time_type::utc);
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %-5l %v", spdlog::pattern_time_type::utc);
  }
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

void flush() { spdlog::default_logger_raw()->flush(); }

bool enabled(Level level) { return spdlog::default_logger_raw()->should_log(to_spdlog(level)); }

void write(Level level, std::string_view event, std::initializer_list<Field> fields) {
  auto* logger = spdlog::default_logger_raw();
  if (!logger->should_log(to_spdlog(level))) return;
  // One buffer, escaped in place: the access log writes a line per request.
  std::string line;
  line.reserve(256);
  if (g_format == Format::json) {
    line += "\"event\":";
    append_json_value(line, event);
    for (const auto& f : fields) {
      line += ',';
      append_json_string(line, f.key);  // keys are names in dlqd's code
      line += ':';
      if (f.flag) {
        line += f.value;
      } else {
        append_json_value(line, f.value);
      }
    }
  } else {
    line += event;  // events are dlqd's own words, spaces and all
    for (const auto& f : fields) {
      line += ' ';
      line += f.key;
      line += '=';
      append_text_value(line, f.value);
    }
  }
  logger->log(to_spdlog(level), spdlog::string_view_t(line.data(), line.size()));
}

}  // namespace dlq::log

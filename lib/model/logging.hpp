// Structured logging on spdlog: one line per event, JSON (default) or plain text, to stderr
// (stdout carries only the readiness line). Never pass payloads here.
#pragma once

#include <concepts>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace dlq::log {

enum class Level { debug, info, warn, error };
enum class Format { json, text };

// One field of a line: a text value (a JSON string), or a flag (a JSON boolean: `"ambiguous":
// true`; `true` in text lines).
struct Field {
  Field(std::string_view k, std::string v) : key(k), value(std::move(v)) {}
  template <class B>
    requires std::same_as<B, bool>
  Field(std::string_view k, B flag) : key(k), value(flag ? "true" : "false"), flag(true) {}
  std::string_view key;
  std::string value;
  bool flag = false;
};

void setup(Level level, Format format);
bool enabled(Level level);
void write(Level level, std::string_view event, std::initializer_list<Field> fields = {});
// Writes out the lines that wait (the sink gathers them for up to 50 ms; warnings and errors go
// out at once): before anything else writes to stderr, such as a fatal error on exit.
void flush();

// How write() puts a value in the line (exposed for the tests). Both write invalid UTF-8 as
// U+FFFD, so every line is valid UTF-8 whatever a client sent. JSON: a string literal. Text: the
// value as it is, or quoted when it holds a space, `=`, `"` or a control (C0 or DEL), with `\"`,
// `\\`, `\n` and `\xNN` inside, so a value can never end its field or its line.
void append_json_value(std::string& out, std::string_view value);
void append_text_value(std::string& out, std::string_view value);

inline void debug(std::string_view event, std::initializer_list<Field> fields = {}) {
  if (enabled(Level::debug)) write(Level::debug, event, fields);
}
inline void info(std::string_view event, std::initializer_list<Field> fields = {}) {
  write(Level::info, event, fields);
}
inline void warn(std::string_view event, std::initializer_list<Field> fields = {}) {
  write(Level::warn, event, fields);
}
inline void error(std::string_view event, std::initializer_list<Field> fields = {}) {
  write(Level::error, event, fields);
}

}  // namespace dlq::log

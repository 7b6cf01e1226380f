// Reading typed, validated members out of a JSON request body (FieldReader) and plain-digit
// query parameters (query_integer), each problem recorded as a FieldError in the order checked.
// Shared by every request decoder in lib/core.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/requests.hpp"
#include "model/error.hpp"
#include "model/time.hpp"

namespace dlq::core {

// Reads typed members out of one JSON object, recording a FieldError for each problem.
class FieldReader {
 public:
  FieldReader(const boost::json::object& body, FieldErrors& errors, std::string prefix = "")
      : body_(body), errors_(errors), prefix_(std::move(prefix)) {}

  const boost::json::value* get(std::string_view key) const {
    const boost::json::value* v = body_.if_contains(key);
    return v;
  }

  void add(std::string_view key, std::string message, std::string code) {
    errors_.push_back({prefix_ + std::string(key), std::move(message), std::move(code)});
  }

  // A string member. `required`: absent is an error. NUL bytes are refused (identity fields).
  std::optional<std::string> string(std::string_view key, std::size_t max_bytes, bool required,
                                    bool allow_empty = true) {
    const boost::json::value* v = get(key);
    if (!v) {
      if (required) add(key, std::string(key) + " is required", "required");
      return std::nullopt;
    }
    if (!v->is_string()) {
      add(key, std::string(key) + " must be a string", "invalid");
      return std::nullopt;
    }
    std::string_view s = v->get_string();
    if (!allow_empty && s.empty()) {
      add(key, std::string(key) + " must not be empty", "invalid");
      return std::nullopt;
    }
    if (s.size() > max_bytes) {
      add(key, std::string(key) + " must be at most " + std::to_string(max_bytes) + " bytes",
          "too_long");
      return std::nullopt;
    }
    if (s.find('\0') != std::string_view::npos) {
      add(key, std::string(key) + " must not contain NUL characters", "invalid");
      return std::nullopt;
    }
    return std::string(s);
  }

  // Free text (errors, stacks, reasons): NUL bytes are replaced instead of refused.
  std::optional<std::string> text(std::string_view key, std::size_t max_bytes) {
    const boost::json::value* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      add(key, std::string(key) + " must be a string", "invalid");
      return std::nullopt;
    }
    if (v->get_string().size() > max_bytes) {
      add(key, std::string(key) + " must be at most " + std::to_string(max_bytes) + " bytes",
          "too_long");
      return std::nullopt;
    }
    return sanitize_text(v->get_string());
  }

  // A JSON integer in [min, max]; strings, floats, null and booleans are invalid.
  std::optional<long long> integer(std::string_view key, long long min, long long max) {
    const boost::json::value* v = get(key);
    if (!v) return std::nullopt;
    std::string range = std::string(key) + " must be an integer between " + std::to_string(min) +
                        " and " + std::to_string(max);
    if (!v->is_int64() && !v->is_uint64()) {
      add(key, range, "invalid");
      return std::nullopt;
    }
    if (v->is_uint64() || v->get_int64() < min || v->get_int64() > max) {
      add(key, range, "invalid");
      return std::nullopt;
    }
    return v->get_int64();
  }

  std::optional<bool> boolean(std::string_view key) {
    const boost::json::value* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_bool()) {
      add(key, std::string(key) + " must be true or false", "invalid");
      return std::nullopt;
    }
    return v->get_bool();
  }

  // A JSON number (integer or not) in [min, max].
  std::optional<double> number(std::string_view key, double min, double max) {
    const boost::json::value* v = get(key);
    if (!v) return std::nullopt;
    std::optional<double> n;
    if (v->is_int64()) n = static_cast<double>(v->get_int64());
    if (v->is_uint64()) n = static_cast<double>(v->get_uint64());
    if (v->is_double()) n = v->get_double();
    // Written so that NaN is out of range: Boost.JSON 1.81 reads 0e400 as NaN.
    if (!n || !(*n >= min && *n <= max)) {
      std::ostringstream range;
      range << key << " must be a number between " << min << " and " << max;
      add(key, range.str(), "invalid");
      return std::nullopt;
    }
    return n;
  }

  std::optional<TimeMs> timestamp(std::string_view key) {
    const boost::json::value* v = get(key);
    if (!v) return std::nullopt;
    std::optional<TimeMs> t;
    if (v->is_string()) t = parse_timestamp(v->get_string());
    if (!t) {
      add(key, std::string(key) + " must be an RFC 3339 timestamp", "invalid");
      return std::nullopt;
    }
    return t;
  }

 private:
  const boost::json::object& body_;
  FieldErrors& errors_;
  std::string prefix_;  // "messages[3]." for a batch item, "filter." for a batch filter
};

// Query parameters are plain digits (leading zeros allowed) within [min, max].
std::optional<long long> query_integer(const QueryParams& query, std::string_view key,
                                       std::string_view field, long long min, long long max,
                                       FieldErrors& errors);

// A query parameter naming a queue, or holding an RFC 3339 time; a bad one is recorded under
// `key`.
std::optional<std::string> query_queue(const QueryParams& query, std::string_view key,
                                       FieldErrors& errors);
std::optional<TimeMs> query_time(const QueryParams& query, std::string_view key,
                                 FieldErrors& errors);

}  // namespace dlq::core

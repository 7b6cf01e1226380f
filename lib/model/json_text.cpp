// JSON string literals, escaped in one pass over the bytes, and values with plain numbers.
#include "model/json_text.hpp"

#include <charconv>
#include <cmath>

#include <boost/json/parse.hpp>
#include <boost/json/stream_parser.hpp>

namespace dlq {

namespace {

// The length of the well-formed UTF-8 sequence starting at s[i] (a byte >= 0x80), 0 when it is
// not one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto at = [&s](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  const unsigned char c = at(i);
  auto cont = [&at](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return at(k) >= lo && at(k) <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the current run of characters that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Bytes that are not UTF-8 (a damaged database page, say) would make the whole answer
      // invalid JSON: each becomes U+FFFD, as a decoder would show it.
      if (std::size_t n = utf8_sequence(s, i); n > 0) {
        i += n - 1;
        continue;
      }
      out.append(s.data() + run, i - run);
      run = i + 1;
      out += "\\ufffd";
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void append_json(std::string& out, const boost::json::value& v) {
  char buf[32];
  switch (v.kind()) {
    case boost::json::kind::null: out += "null"; return;
    case boost::json::kind::bool_: out += v.get_bool() ? "true" : "false"; return;
    case boost::json::kind::int64: {
      auto end = std::to_chars(buf, buf + sizeof buf, v.get_int64()).ptr;
      out.append(buf, end);
      return;
    }
    case boost::json::kind::uint64: {
      auto end = std::to_chars(buf, buf + sizeof buf, v.get_uint64()).ptr;
      out.append(buf, end);
      return;
    }
    case boost::json::kind::double_: {
      double d = v.get_double();
      if (!std::isfinite(d)) {
        out += "null";
        return;
      }
      auto end = std::to_chars(buf, buf + sizeof buf, d).ptr;  // shortest round trip
      out.append(buf, end);
      return;
    }
    case boost::json::kind::string: append_json_string(out, v.get_string()); return;
    case boost::json::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v.get_array()) {
        if (!first) out += ',';
        first = false;
        append_json(out, e);
      }
      out += ']';
      return;
    }
    case boost::json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& kv : v.get_object()) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, kv.key());
        out += ':';
        append_json(out, kv.value());
      }
      out += '}';
      return;
    }
  }
}

std::string json_text(const boost::json::value& v) {
  std::string out;
  append_json(out, v);
  return out;
}

std::optional<JsonSyntaxError> json_syntax_error(std::string_view text) {
  boost::json::stream_parser p;
  boost::system::error_code ec;
  std::size_t used = p.write(text.data(), text.size(), ec);
  if (!ec) {
    p.finish(ec);
    used = text.size();
  }
  if (!ec) return std::nullopt;
  return JsonSyntaxError{used, ec.message()};
}

bool is_json_structure(std::string_view text) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  return !ec && (v.is_object() || v.is_array());
}

}  // namespace dlq

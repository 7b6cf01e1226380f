// JSON string literals, escaped in one pass over the bytes, and values with plain numbers.
#include "model/json_text.hpp"

#include <charconv>
#include <cmath>

namespace dlq {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the current run of characters that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
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

}  // namespace dlq

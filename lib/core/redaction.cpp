// Masking secrets for people: JSON keys by name at any depth, credentials in free text.
#include "core/redaction.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <system_error>

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

namespace dlq::core {
namespace json = boost::json;

namespace {

constexpr std::string_view kMask = "***";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string> lower_all(const std::vector<std::string>& fields) {
  std::vector<std::string> out;
  for (const auto& f : fields) out.push_back(lower(f));
  return out;
}

// Builds the tree json::parse builds, but reads each non-integer number again from its text
// with std::from_chars, which rounds correctly. Boost.JSON 1.81's own reading can be a unit off
// in the last place (12e63 became 1.2000000000000001E64, and about a tenth of 17-digit numbers
// do not read back as written) and reads 0e400 as NaN: a masked payload showed numbers the
// producer never wrote, and each replay of a masked view moved them again.
class ExactNumbers {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack st;

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(std::size_t n, json::error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t n, json::error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    st.push_string(s);
    return true;
  }
  // A number's text comes in parts only when it spans two writes; kept for on_double.
  bool on_number_part(json::string_view s, json::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    number_.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    number_.clear();
    st.push_uint64(u);
    return true;
  }
  // Beyond a double's range from_chars refuses, and the parser's infinity (or 0) stays.
  bool on_double(double d, json::string_view s, json::error_code&) {
    number_.append(s.data(), s.size());
    double exact = 0;
    auto read = std::from_chars(number_.data(), number_.data() + number_.size(), exact);
    number_.clear();
    st.push_double(read.ec == std::errc() ? exact : d);
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(json::error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  std::string number_;
};

// Parses with the redactor's depth limit into `resource`: a monotonic resource frees the tree
// at once, without a destructor call per level.
json::value parse_deep(std::string_view text, json::monotonic_resource& resource,
                       std::error_code& ec) {
  json::parse_options options;
  options.max_depth = Redactor::kMaxDepth;
  json::basic_parser<ExactNumbers> parser(options);
  parser.handler().st.reset(&resource);
  json::error_code error;
  std::size_t used = parser.write_some(false, text.data(), text.size(), error);
  if (!error && used < text.size()) error = json::error::extra_data;
  ec = error;
  if (ec) return nullptr;
  return parser.handler().st.release();
}

// Where a payload's JSON would start: past whitespace and byte-order marks (U+FEFF, which some
// encoders put first and the JSON parser refuses), or the payload's size.
std::size_t json_start(std::string_view payload) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  std::size_t i = 0;
  while (i < payload.size()) {
    if (payload.substr(i, kByteOrderMark.size()) == kByteOrderMark) {
      i += kByteOrderMark.size();
    } else if (std::string_view(" \t\r\n").find(payload[i]) != std::string_view::npos) {
      ++i;
    } else {
      break;
    }
  }
  return i;
}

// The tree as JSON text. A number beyond a double's range (1e400) is read as infinity, which
// json::serialize writes as `Infinity`, not JSON: people's view would show it and a replay would
// store it. Outside strings it is written as 1e999, which reads back as the same infinity.
std::string to_json(const json::value& v) {
  std::string text = json::serialize(v);
  constexpr std::string_view kInfinity = "Infinity";
  if (text.find(kInfinity) == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      if (text[i] == '\\') {
        out += text[i++];  // and the escaped character after it
      } else if (text[i] == '"') {
        in_string = false;
      }
    } else if (text[i] == '"') {
      in_string = true;
    } else if (text.compare(i, kInfinity.size(), kInfinity) == 0) {
      out += "1e999";
      i += kInfinity.size() - 1;
      continue;
    }
    out += text[i];
  }
  return out;
}

// The recursion is bounded by kMaxDepth: the parser refuses anything deeper.
bool mask_in_place(json::value& v, const std::vector<std::string>& fields) {
  bool changed = false;
  if (v.is_object()) {
    for (auto& [key, member] : v.get_object()) {
      if (std::find(fields.begin(), fields.end(), lower(key)) != fields.end()) {
        member = kMask;
        changed = true;
      } else {
        changed = mask_in_place(member, fields) || changed;
      }
    }
  } else if (v.is_array()) {
    for (auto& item : v.get_array()) changed = mask_in_place(item, fields) || changed;
  }
  return changed;
}

void merge_in_place(json::value& edited, const json::value& original) {
  if (edited.is_object() && original.is_object()) {
    for (auto& [key, member] : edited.get_object()) {
      const json::value* before = original.get_object().if_contains(key);
      if (!before) continue;
      if (member.is_string() && member.get_string() == kMask) {
        member = *before;
      } else {
        merge_in_place(member, *before);
      }
    }
  } else if (edited.is_array() && original.is_array()) {
    auto& items = edited.get_array();
    const auto& before = original.get_array();
    for (std::size_t i = 0; i < items.size() && i < before.size(); ++i) {
      if (items[i].is_string() && items[i].get_string() == kMask) {
        items[i] = before[i];
      } else {
        merge_in_place(items[i], before[i]);
      }
    }
  }
}

}  // namespace

Redactor::Redactor(const std::vector<std::string>& fields)
    : fields_(lower_all(fields)), text_(fields_) {}

// A leading byte-order mark counts as whitespace: such a payload is read as JSON, and written
// without the mark once masked.
std::string Redactor::payload(const std::string& payload) const {
  if (fields_.empty()) return payload;
  const std::size_t first = json_start(payload);
  if (first == payload.size() || (payload[first] != '{' && payload[first] != '[')) {
    return payload;
  }
  // It is meant to be JSON: a payload whose keys cannot be read may hold secrets anywhere.
  json::monotonic_resource resource;
  std::error_code ec;
  json::value v = parse_deep(std::string_view(payload).substr(first), resource, ec);
  if (ec) return std::string(kWithheld);
  if (!mask_in_place(v, fields_)) return payload;
  return to_json(v);
}

// URL userinfo is masked too, and "<field>%3D…" like "<field>=…" (TextMasker::mask).
std::string Redactor::text(const std::string& text) const {
  if (fields_.empty() || text.empty()) return text;
  return text_.mask(text);
}

std::string Redactor::merge_masks(const std::string& original, const std::string& edited) const {
  if (edited.find(kMask) == std::string::npos) return edited;
  json::monotonic_resource resource;
  std::error_code ec;
  json::value e = parse_deep(std::string_view(edited).substr(json_start(edited)), resource, ec);
  if (ec || (!e.is_object() && !e.is_array())) return edited;
  json::value o = parse_deep(std::string_view(original).substr(json_start(original)), resource, ec);
  if (ec) return edited;
  merge_in_place(e, o);
  return to_json(e);
}

}  // namespace dlq::core

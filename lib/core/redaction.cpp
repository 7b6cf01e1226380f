// Masking secrets for people: JSON keys by name at any depth, credentials in free text.
#include "core/redaction.hpp"

#include <algorithm>
#include <cctype>

#include <boost/json.hpp>

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

// Parses with the redactor's depth limit into `resource`: a monotonic resource frees the tree
// at once, without a destructor call per level.
json::value parse_deep(std::string_view text, json::monotonic_resource& resource,
                       std::error_code& ec) {
  json::parse_options options;
  options.max_depth = Redactor::kMaxDepth;
  return json::parse(text, ec, &resource, options);
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

// The tree as JSON text. Boost.JSON 1.81 reads a number beyond a double's range (1e400) as
// infinity, and a zero with such an exponent (0e400) as NaN; json::serialize writes them back as
// `Infinity` and `NaN`, which are not JSON: people's view would show them and a replay would
// store them. Outside strings they are written as 1e999, which reads back as the same infinity,
// and 0, the number the text held.
std::string to_json(const json::value& v) {
  std::string text = json::serialize(v);
  constexpr std::string_view kInfinity = "Infinity";
  constexpr std::string_view kNaN = "NaN";
  if (text.find(kInfinity) == std::string::npos && text.find(kNaN) == std::string::npos) {
    return text;
  }
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
    } else if (text.compare(i, kNaN.size(), kNaN) == 0) {
      out += '0';
      i += kNaN.size() - 1;
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

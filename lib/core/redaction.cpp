// Masking secrets for people: JSON keys by name at any depth, credentials in free text.
#include "core/redaction.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

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

std::string escape_regex(const std::string& s) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(s, special, R"(\$&)");
}

}  // namespace

Redactor::Redactor(const std::vector<std::string>& fields) {
  for (const auto& f : fields) {
    fields_.push_back(lower(f));
    // The value after "field=" or "field: ", unless it is already a mask or an auth scheme
    // whose credential the Bearer/Basic pattern masks.
    text_patterns_.emplace_back("(\"?" + escape_regex(fields_.back()) +
                                    "\"?\\s*[:=]\\s*\"?)(?!\\*\\*\\*|Bearer\\b|Basic\\b)[^\\s\"&,;}]+",
                                std::regex::icase);
  }
}

std::string Redactor::payload(const std::string& payload) const {
  if (fields_.empty()) return payload;
  auto first = payload.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (payload[first] != '{' && payload[first] != '[')) {
    return payload;
  }
  std::error_code ec;
  json::value v = json::parse(payload, ec);
  if (ec || !mask_in_place(v, fields_)) return payload;
  return json::serialize(v);
}

std::string Redactor::text(const std::string& text) const {
  if (fields_.empty() || text.empty()) return text;
  static const std::regex bearer(R"((Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+)", std::regex::icase);
  std::string out = std::regex_replace(text, bearer, "$1 ***");
  for (const auto& pattern : text_patterns_) out = std::regex_replace(out, pattern, "$1***");
  return out;
}

std::string Redactor::merge_masks(const std::string& original, const std::string& edited) const {
  if (edited.find(kMask) == std::string::npos) return edited;
  std::error_code ec;
  json::value e = json::parse(edited, ec);
  if (ec || (!e.is_object() && !e.is_array())) return edited;
  json::value o = json::parse(original, ec);
  if (ec) return edited;
  merge_in_place(e, o);
  return json::serialize(e);
}

}  // namespace dlq::core

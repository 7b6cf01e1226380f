// Tables and problem text for dlqctl's human output.
#include "output.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "model/terminal_text.hpp"

namespace dlq::ctl {
namespace json = boost::json;

namespace {

// Display width of UTF-8 text: continuation bytes take no column.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string scalar_text(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "-";
    case json::kind::string: return shown(v.get_string());
    case json::kind::bool_: return v.get_bool() ? "true" : "false";
    default: return json::serialize(v);
  }
}

}  // namespace

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width(cells[i]));
    }
  };
  measure(headers_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      if (i + 1 < cells.size()) text += std::string(widths[i] - width(cells[i]) + 2, ' ');
    }
    out << text << "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
}

std::string shown(std::string_view text) { return terminal_text(text); }

std::string json_shown(const json::value& v) { return shown(json::serialize(v)); }

std::string cell(const json::value& object, std::string_view key) {
  const auto* o = object.if_object();
  if (!o) return "-";
  const json::value* v = o->if_contains(key);
  return v ? scalar_text(*v) : "-";
}

std::string shorten(std::string_view raw, std::size_t max) {
  std::string text = shown(raw);
  if (width(text) <= max) return text;
  std::string out;
  std::size_t columns = 0;
  for (char c : text) {
    bool starts = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (starts && ++columns > max - 1) break;
    out += c;
  }
  return out + "…";
}

void print_fields(std::ostream& out, const json::object& o) {
  std::size_t w = 0;
  for (const auto& kv : o) w = std::max(w, width(shown(kv.key())));
  for (const auto& kv : o) {
    std::string key = shown(kv.key());
    std::string value = kv.value().is_structured() ? json_shown(kv.value()) : scalar_text(kv.value());
    out << key << ":" << std::string(w - width(key) + 1, ' ') << value << "\n";
  }
}

std::string describe_problem(int status, const std::string& body) {
  std::string text = std::to_string(status);
  std::error_code ec;
  json::value v = json::parse(body, ec);
  const json::object* o = ec ? nullptr : v.if_object();
  if (!o) return text + (body.empty() ? "" : ": " + shorten(body, 200));
  if (const auto* type = o->if_contains("type"); type && type->is_string()) {
    std::string t = shown(type->get_string());
    text += " " + t.substr(t.rfind('/') + 1);
  }
  // A 422's detail repeats its first field's message: then the title, and the fields below.
  const auto* errors = o->if_contains("errors");
  const bool fields = errors && errors->is_array() && !errors->get_array().empty();
  std::string words;
  for (const char* key : {fields ? "title" : "detail", "error", "title"}) {
    if (const auto* d = o->if_contains(key); d && d->is_string() && !d->get_string().empty()) {
      words = shown(d->get_string());
      break;
    }
  }
  if (!words.empty()) text += ": " + words;
  if (fields) {
    for (const auto& e : errors->get_array()) {
      text += "\n  " + cell(e, "field") + ": " + cell(e, "message");
    }
  }
  return text;
}

}  // namespace dlq::ctl

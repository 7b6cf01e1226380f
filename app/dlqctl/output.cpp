// Tables and problem text for dlqctl's human output.
#include "output.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "model/json_text.hpp"
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
    default: return json_text(v);  // 0.5, not 5E-1
  }
}

// text (already shown()) cut to at most `max` columns, "…" marking the cut.
std::string cut(const std::string& text, std::size_t max) {
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

// A cell no cut may shorten: a number, a count like 1/3, a time, or "-".
bool fixed_cell(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' || c == '+' || c == '/' ||
           c == 'T' || c == 'Z';
  });
}

}  // namespace

void Table::print(std::ostream& out, std::size_t columns) const {
  const std::size_t n = headers_.size();
  std::vector<std::size_t> widths(n, 0);
  std::vector<std::size_t> widest_cell(n, 0);
  std::vector<bool> cuttable(n, false);
  for (const auto& r : rows_) {
    for (std::size_t i = 0; i < r.size() && i < n; ++i) {
      widest_cell[i] = std::max(widest_cell[i], width(r[i]));
      cuttable[i] = cuttable[i] || !fixed_cell(r[i]);
    }
  }
  for (std::size_t i = 0; i < n; ++i) widths[i] = std::max(widest_cell[i], width(headers_[i]));
  if (columns > 0) {
    std::size_t total = 2 * (n - 1);
    for (auto w : widths) total += w;
    // Columns give way from the right until the table fits or nothing more can: first text
    // columns, the last down to 10 columns and the others to their header's width; then any
    // text to 4, and headers wider than the numbers below them to those (at least 4).
    auto give_way = [&](bool second_pass) {
      for (std::size_t k = n; k-- > 0 && total > columns;) {
        if (!cuttable[k] && !second_pass) continue;
        std::size_t floor = !cuttable[k] ? std::max(widest_cell[k], std::size_t{4})
                            : second_pass ? 4
                                          : std::max(width(headers_[k]), std::size_t{k + 1 == n ? 10u : 4u});
        if (widths[k] <= floor) continue;
        std::size_t give = std::min(widths[k] - floor, total - columns);
        widths[k] -= give;
        total -= give;
      }
    };
    give_way(false);
    give_way(true);
  }
  auto line = [&](const std::vector<std::string>& raw) {
    std::string text;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      std::string c = i < n ? cut(raw[i], widths[i]) : raw[i];
      text += c;
      if (i + 1 < raw.size()) text += std::string(widths[i] - width(c) + 2, ' ');
    }
    out << text << "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
}

std::string shown(std::string_view text) { return terminal_text(text); }

std::string json_shown(const json::value& v) { return shown(json_text(v)); }

std::string cell(const json::value& object, std::string_view key) {
  const auto* o = object.if_object();
  if (!o) return "-";
  const json::value* v = o->if_contains(key);
  return v ? scalar_text(*v) : "-";
}

std::string shorten(std::string_view raw, std::size_t max) { return cut(shown(raw), max); }

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

bool is_problem(const std::string& body) {
  std::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return false;
  const json::value* type = v.get_object().if_contains("type");
  return type && type->is_string();
}

std::string field_code(const std::string& body, std::string_view field) {
  std::error_code ec;
  json::value v = json::parse(body, ec);
  const json::value* errors = !ec && v.is_object() ? v.get_object().if_contains("errors") : nullptr;
  if (!errors || !errors->is_array()) return "";
  for (const auto& e : errors->get_array()) {
    if (cell(e, "field") == field) return cell(e, "code");
  }
  return "";
}

}  // namespace dlq::ctl

// The admin UI's files: their names and types, built in or read from ui.dir, and their routes.
#include "http/api_ui.hpp"

#include <fstream>
#include <sstream>

#include "http/api_support.hpp"
#include "http/ui_files.hpp"

namespace dlq::http {
using namespace support;

std::optional<std::string_view> ui_content_type(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const auto& [extension, type] : kTypes) {
    if (name.size() > extension.size() && name.ends_with(extension)) return type;
  }
  return std::nullopt;
}

bool ui_file_name(std::string_view name) {
  if (name.empty() || name.size() > 100 || name.front() == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return ui_content_type(name).has_value();
}

namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(out).str();
}

}  // namespace

UiHandlers::UiHandlers(const Config& config) : config_(config) {}

UiHandlers::R UiHandlers::ui_redirect(const Request&, const RouteMatch&) {
  Response r;
  r.status = 308;
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("Location", "/ui/");
  co_return r;
}

UiHandlers::R UiHandlers::ui_index(const Request& req, const RouteMatch&) {
  co_return ui_file(req, "index.html");
}

UiHandlers::R UiHandlers::ui_asset(const Request& req, const RouteMatch& m) {
  co_return ui_file(req, m.params.at(0));
}

Response UiHandlers::ui_file(const Request& req, std::string_view name) const {
  std::optional<std::string> bytes;
  if (ui_file_name(name)) {
    if (!config_.ui.dir.empty()) {
      bytes = read_file(config_.ui.dir + "/" + std::string(name));
    } else {
      for (const auto& f : ui_files()) {
        if (f.name == name) bytes = std::string(f.bytes);
      }
    }
  }
  if (!bytes) {
    return problem(context(config_, req), 404, "not-found", "Not found", "no such UI file",
                   "not found");
  }
  Response r;
  r.content_type = std::string(*ui_content_type(name));
  r.body = std::move(*bytes);
  r.headers.emplace_back("Content-Security-Policy", std::string(kUiContentSecurityPolicy));
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

}  // namespace dlq::http

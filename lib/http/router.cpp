// Route matching by path segments; 404 versus 405 with the Allow list.
#include "http/router.hpp"

#include <algorithm>

namespace dlq::http {
namespace {

// "/a/b" -> {"a", "b"}; empty segments are kept so "/a//b" and "/a/" never match a route.
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path.front() != '/') return out;
  path.remove_prefix(1);
  for (;;) {
    auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool is_capture(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(std::string method, std::string pattern, core::Access access, Handler handler) {
  Compiled c{{std::move(method), pattern, std::move(handler), access}, {}};
  for (auto s : split_path(pattern)) c.segments.emplace_back(s);
  routes_.push_back(std::move(c));
}

bool Router::matches(const Compiled& c, const std::vector<std::string_view>& segments,
                     std::vector<std::string_view>* params) {
  if (c.segments.size() != segments.size()) return false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (is_capture(c.segments[i])) {
      if (segments[i].empty()) return false;
      if (params) params->push_back(segments[i]);
    } else if (c.segments[i] != segments[i]) {
      return false;
    }
  }
  return true;
}

// Of two patterns that both match a path, the one with a literal where the other captures
// (leftmost difference first) is the more specific: /messages/batch beats /messages/{id}.
bool Router::more_specific(const Compiled& a, const Compiled& b) {
  for (std::size_t i = 0; i < a.segments.size() && i < b.segments.size(); ++i) {
    bool a_literal = !is_capture(a.segments[i]);
    bool b_literal = !is_capture(b.segments[i]);
    if (a_literal != b_literal) return a_literal;
  }
  return false;
}

RouteMatch Router::match(std::string_view method, std::string_view path) const {
  if (method == "HEAD") method = "GET";
  auto segments = split_path(path);
  // The path belongs to its most specific pattern; only that pattern's routes answer it, so a
  // wrong method on /messages/batch is 405, not a lookup of message "batch".
  const Compiled* best = nullptr;
  for (const auto& c : routes_) {
    if (matches(c, segments, nullptr) && (!best || more_specific(c, *best))) best = &c;
  }
  RouteMatch result;
  if (!best) return result;
  std::vector<std::string> allowed;
  for (const auto& c : routes_) {
    if (c.segments != best->segments || !matches(c, segments, nullptr)) continue;
    if (c.route.method == method) {
      result.route = &c.route;
      matches(c, segments, &result.params);
      return result;
    }
    allowed.push_back(c.route.method);
    if (c.route.method == "GET") allowed.emplace_back("HEAD");
  }
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  for (const auto& m : allowed) result.allow += (result.allow.empty() ? "" : ", ") + m;
  return result;
}

}  // namespace dlq::http

// One table of {method, pattern, access, handler}: finds the handler for a request, or tells a path
// that exists with another method (405 + Allow) from a path that does not exist (404).
// Patterns are literal segments and {name} captures; no trailing-slash aliases. A literal
// segment wins over a capture: a path is answered by its most specific pattern's routes only.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/access.hpp"
#include "http/request.hpp"

namespace dlq::http {

struct RouteMatch;
using Handler = std::function<boost::asio::awaitable<Response>(const Request&, const RouteMatch&)>;

struct Route {
  std::string method;
  std::string pattern;
  Handler handler;
  core::Access access = core::Access::open;  // checked before the handler runs
};

struct RouteMatch {
  const Route* route = nullptr;
  std::vector<std::string_view> params;  // raw (still percent-encoded) captures, in order
  std::string allow;                     // when the path exists but the method does not
};

class Router {
 public:
  void add(std::string method, std::string pattern, core::Access access, Handler handler);
  void add(std::string method, std::string pattern, Handler handler) {
    add(std::move(method), std::move(pattern), core::Access::open, std::move(handler));
  }
  // HEAD is matched as GET.
  RouteMatch match(std::string_view method, std::string_view path) const;

 private:
  struct Compiled {
    Route route;
    std::vector<std::string> segments;  // "{...}" marks a capture
  };
  static bool matches(const Compiled& c, const std::vector<std::string_view>& segments,
                      std::vector<std::string_view>* params);
  static bool more_specific(const Compiled& a, const Compiled& b);
  std::vector<Compiled> routes_;
};

}  // namespace dlq::http

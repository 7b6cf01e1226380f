// The two checks a request meets between routing and its token (docs/access.md, "Host and
// Origin"): a Host naming another site (DNS rebinding) while no tokens are in force, and a
// POST, PUT, PATCH or DELETE sent by another site's page (CSRF). Headers only: nothing here
// reads a body, a token or the store, and a request without Origin allocates nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/web_origin.hpp"
#include "http/request.hpp"

namespace dlq::http {

enum class SiteVerdict { allowed, host_not_allowed, origin_not_allowed };

class OriginGuard {
 public:
  // Reads listen, http.allowed_hosts and http.allowed_origins (validated by the config).
  explicit OriginGuard(const Config& config);
  OriginGuard(const OriginGuard&) = delete;
  OriginGuard& operator=(const OriginGuard&) = delete;

  // `check_host`: whether this request's Host is checked (no tokens in force, and a route
  // other than /healthz and /readyz). Origin is checked on every unsafe method.
  SiteVerdict check(const Request& req, bool check_host) const;

 private:
  bool host_allowed(std::string_view host_field) const;
  bool origin_listed(const WebOrigin& origin) const;
  static bool own_origin(const WebOrigin& origin, const std::optional<std::string>& host_field);

  std::string listen_host_;              // normalized; empty when `listen` names none
  std::vector<std::string> hosts_;       // http.allowed_hosts, normalized
  std::vector<std::string> origin_text_; // http.allowed_origins, normalized
  std::vector<WebOrigin> origins_;       // views into origin_text_
};

}  // namespace dlq::http

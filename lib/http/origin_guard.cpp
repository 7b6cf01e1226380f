// Host and Origin against the server's own names and the http.* lists: comparisons on views of
// the request's fields, case-insensitive, with the lists normalized once at start.
#include "http/origin_guard.hpp"

namespace dlq::http {
namespace {

bool unsafe_method(std::string_view m) {
  return m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE";
}

bool has_value(const std::optional<std::string>& field, std::string_view value) {
  return field && iequals_ascii(*field, value);
}

}  // namespace

OriginGuard::OriginGuard(const Config& config) {
  if (auto listen = split_host_port(config.listen)) {
    listen_host_ = normalize_allowed_host(listen->host).value_or("");
  }
  for (const auto& h : config.http.allowed_hosts) {
    if (auto n = normalize_allowed_host(h)) hosts_.push_back(std::move(*n));
  }
  for (const auto& o : config.http.allowed_origins) {
    if (auto n = normalize_allowed_origin(o)) origin_text_.push_back(std::move(*n));
  }
  // The views are taken once every string has its final place.
  for (const auto& text : origin_text_) origins_.push_back(*parse_web_origin(text));
}

bool OriginGuard::host_allowed(std::string_view host_field) const {
  auto parts = split_host_port(host_field);
  if (!parts) return false;
  if (loopback_host(parts->host)) return true;
  if (!listen_host_.empty() && iequals_ascii(parts->host, listen_host_)) return true;
  for (const auto& h : hosts_) {
    if (iequals_ascii(parts->host, h)) return true;
  }
  return false;
}

bool OriginGuard::origin_listed(const WebOrigin& origin) const {
  for (const auto& o : origins_) {
    if (o.port == origin.port && iequals_ascii(o.scheme, origin.scheme) &&
        iequals_ascii(o.host, origin.host)) {
      return true;
    }
  }
  return false;
}

// The page that sent the request was served by this Host: same name, same port (a Host
// without one has the default port of the Origin's scheme).
bool OriginGuard::own_origin(const WebOrigin& origin,
                             const std::optional<std::string>& host_field) {
  if (!host_field) return false;
  auto host = split_host_port(*host_field);
  if (!host || !iequals_ascii(host->host, origin.host)) return false;
  unsigned default_port = iequals_ascii(origin.scheme, "https") ? 443 : 80;
  return host->port.value_or(default_port) == origin.port;
}

SiteVerdict OriginGuard::check(const Request& req, bool check_host) const {
  // No Host (HTTP/1.0) names no site, so none can be rebound onto us.
  if (check_host && req.host && !host_allowed(*req.host)) return SiteVerdict::host_not_allowed;
  if (!unsafe_method(req.method)) return SiteVerdict::allowed;
  std::optional<WebOrigin> origin;
  if (req.origin) origin = parse_web_origin(*req.origin);  // "null" and junk stay nullopt
  if (origin && origin_listed(*origin)) return SiteVerdict::allowed;
  if (has_value(req.fetch_site, "cross-site")) return SiteVerdict::origin_not_allowed;
  if (!req.origin) return SiteVerdict::allowed;  // not sent by a browser's page: curl, dlqctl
  // A proxy may rewrite Host; the browser's own word that the page is ours then decides.
  if (has_value(req.fetch_site, "same-origin")) return SiteVerdict::allowed;
  if (origin && own_origin(*origin, req.host)) return SiteVerdict::allowed;
  return SiteVerdict::origin_not_allowed;
}

}  // namespace dlq::http

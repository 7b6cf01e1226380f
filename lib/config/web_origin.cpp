// Reading Host, Origin and the entries of http.allowed_hosts / http.allowed_origins. IP literals
// go through Boost.URL's strict parsers (dotted quads, RFC 4291 text); names are DNS-shaped.
#include "config/web_origin.hpp"

#include <boost/url/ipv4_address.hpp>
#include <boost/url/ipv6_address.hpp>

namespace dlq {
namespace {

namespace urls = boost::urls;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = lower(c);
  return out;
}

std::optional<unsigned> parse_port(std::string_view digits) {
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  unsigned port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  if (port > 65535) return std::nullopt;
  return port;
}

// Dot-separated labels of letters, digits, '-' and '_'; no empty label (no leading, trailing or
// doubled dot).
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok || ++label > 63) return false;
  }
  return label > 0;
}

// "[...]" holding an IPv6 address: the address, else nullopt.
std::optional<urls::ipv6_address> bracketed_ipv6(std::string_view host) {
  if (host.size() < 3 || host.front() != '[' || host.back() != ']') return std::nullopt;
  auto a = urls::parse_ipv6_address(host.substr(1, host.size() - 2));
  if (!a) return std::nullopt;
  return *a;
}

}  // namespace

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::optional<HostAndPort> split_host_port(std::string_view authority) {
  HostAndPort out;
  std::string_view rest;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos || close < 2) return std::nullopt;
    out.host = authority.substr(0, close + 1);
    rest = authority.substr(close + 1);
  } else {
    auto colon = authority.find(':');
    out.host = authority.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
  }
  if (out.host.empty()) return std::nullopt;
  if (!rest.empty()) {
    if (rest.front() != ':') return std::nullopt;
    out.port = parse_port(rest.substr(1));  // a second colon is not a digit: refused there
    if (!out.port) return std::nullopt;
  }
  return out;
}

std::optional<WebOrigin> parse_web_origin(std::string_view text) {
  auto sep = text.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  WebOrigin out;
  out.scheme = text.substr(0, sep);
  unsigned default_port = 0;
  if (iequals_ascii(out.scheme, "http")) {
    default_port = 80;
  } else if (iequals_ascii(out.scheme, "https")) {
    default_port = 443;
  } else {
    return std::nullopt;
  }
  auto parts = split_host_port(text.substr(sep + 3));
  if (!parts) return std::nullopt;
  bool ip6 = parts->host.front() == '[';
  if (ip6 ? !bracketed_ipv6(parts->host) : !valid_name(parts->host)) return std::nullopt;
  out.host = parts->host;
  out.port = parts->port.value_or(default_port);
  return out;
}

bool loopback_host(std::string_view host) {
  constexpr std::string_view kLocal = "localhost";
  if (iequals_ascii(host, kLocal)) return true;
  if (host.size() > kLocal.size() + 1 && host[host.size() - kLocal.size() - 1] == '.' &&
      iequals_ascii(host.substr(host.size() - kLocal.size()), kLocal)) {
    return true;  // *.localhost (RFC 6761 section 6.3)
  }
  if (auto v4 = urls::parse_ipv4_address(host)) return (v4->to_uint() >> 24) == 127;
  if (auto v6 = bracketed_ipv6(host)) return v6->is_loopback();
  return false;
}

std::optional<std::string> normalize_allowed_host(std::string_view entry) {
  if (entry.empty()) return std::nullopt;
  std::string_view inner = entry;
  if (entry.front() == '[') {
    if (entry.size() < 3 || entry.back() != ']') return std::nullopt;
    inner = entry.substr(1, entry.size() - 2);
  }
  if (inner.find(':') != std::string_view::npos) {  // only IPv6 has colons: no port here
    auto v6 = urls::parse_ipv6_address(inner);
    if (!v6) return std::nullopt;
    return "[" + v6->to_string() + "]";
  }
  if (inner.size() != entry.size()) return std::nullopt;  // "[name]"
  if (auto v4 = urls::parse_ipv4_address(entry)) return v4->to_string();
  if (!valid_name(entry)) return std::nullopt;
  return lowered(entry);
}

std::optional<std::string> normalize_allowed_origin(std::string_view entry) {
  auto origin = parse_web_origin(entry);
  if (!origin) return std::nullopt;
  auto host = normalize_allowed_host(origin->host);
  if (!host) return std::nullopt;
  return lowered(origin->scheme) + "://" + *host + ":" + std::to_string(origin->port);
}

std::optional<std::string> check_allowed_host(const std::string& entry) {
  if (normalize_allowed_host(entry)) return std::nullopt;
  return "is not a host name or an IP literal (write it without a port, a scheme or a wildcard)";
}

std::optional<std::string> check_allowed_origin(const std::string& entry) {
  if (normalize_allowed_origin(entry)) return std::nullopt;
  return "is not an origin: http://HOST[:PORT] or https://HOST[:PORT], with no path, not even "
         "a trailing /";
}

}  // namespace dlq

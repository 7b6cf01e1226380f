// Host names and web origins as `Host` and `Origin` fields and the http.allowed_hosts and
// http.allowed_origins keys write them: one reading for the config check and for the check each
// request meets (http/origin_guard). The request side works on views: nothing is allocated.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dlq {

// "name", "name:port", "1.2.3.4:80", "[::1]:80" split at the port (the brackets stay on the
// host); nullopt when the text is not that shape (an empty host, a bad port, a stray colon).
struct HostAndPort {
  std::string_view host;
  std::optional<unsigned> port;
};
std::optional<HostAndPort> split_host_port(std::string_view authority);

// `http://host[:port]` or `https://host[:port]` and nothing more (RFC 6454 serialization); the
// port is the scheme's default when none is written. nullopt for anything else, `null` included.
struct WebOrigin {
  std::string_view scheme;  // "http" or "https", in the case it was written
  std::string_view host;
  unsigned port = 0;
};
std::optional<WebOrigin> parse_web_origin(std::string_view text);

// What every dlqd answers in Host without being told: localhost, *.localhost, 127.0.0.0/8, [::1].
bool loopback_host(std::string_view host);

bool iequals_ascii(std::string_view a, std::string_view b);

// An http.allowed_hosts entry (a name or an IP literal, no port) in the form Host compares
// against: lower case, IPv6 in brackets. nullopt when the entry is malformed.
std::optional<std::string> normalize_allowed_host(std::string_view entry);
// An http.allowed_origins entry, lower case with its port written out ("http://a:80").
std::optional<std::string> normalize_allowed_origin(std::string_view entry);

// For the config parser: what is wrong with an entry, or nullopt.
std::optional<std::string> check_allowed_host(const std::string& entry);
std::optional<std::string> check_allowed_origin(const std::string& entry);

}  // namespace dlq

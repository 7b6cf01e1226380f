// dlqctl's URLs: the --url it talks to, and the percent-encoding of the path segments and query
// values it builds. Kept apart from client.cpp (Beast) so the unit suite tests it.
#include "client.hpp"

namespace dlq::ctl {

ServerUrl ServerUrl::parse(std::string_view url) {
  ServerUrl out;
  if (url.starts_with("https://")) {
    out.tls = true;
    out.port = "443";
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    throw UsageError("--url must start with http:// or https://: " + std::string(url));
  }
  auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) out.prefix = std::string(url.substr(slash));
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  if (authority.empty()) throw UsageError("--url has no host");
  std::string_view host = authority;
  if (authority.front() == '[') {  // [::1]:8080
    auto close = authority.find(']');
    if (close == std::string_view::npos) throw UsageError("--url: unclosed [ in the host");
    host = authority.substr(1, close - 1);
    auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') throw UsageError("--url: expected :port after ]");
      out.port = std::string(rest.substr(1));
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    out.port = std::string(authority.substr(colon + 1));
  }
  if (host.empty() || out.port.empty() ||
      out.port.find_first_not_of("0123456789") != std::string::npos || out.port.size() > 5) {
    throw UsageError("--url: expected http[s]://HOST[:PORT], got " + std::string(authority));
  }
  out.host = std::string(host);
  return out;
}

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace dlq::ctl

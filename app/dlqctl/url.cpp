// dlqctl's URLs through Boost.URL: the --url it talks to, and the percent-encoding of the path
// segments and query values it builds. Apart from client.cpp (Beast) so the unit suite tests it.
#include "client.hpp"

#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace dlq::ctl {
namespace urls = boost::urls;

ServerUrl ServerUrl::parse(std::string_view url) {
  // The scheme is checked on the text, as written: "HTTP://" or "http:host" are refused too.
  const bool tls = url.starts_with("https://");
  if (!tls && !url.starts_with("http://")) {
    throw UsageError("--url must start with http:// or https://: " + std::string(url));
  }
  const std::string form =
      "--url: expected http[s]://HOST[:PORT][/PREFIX], got " + std::string(url);
  auto parsed = urls::parse_uri(url);
  // Boost 1.81 reads "h:80x/dlq" as port 80 and path "x/dlq" (boostorg/url#636, fixed in 1.82):
  // after an authority the path must be empty or start with '/', so anything else is refused.
  if (!parsed || !(parsed->encoded_path().empty() || parsed->encoded_path().starts_with('/'))) {
    throw UsageError(form);
  }
  std::string_view authority = parsed->encoded_authority();
  if (authority.empty()) throw UsageError("--url has no host");
  // A user, a query or a fragment has no place in the server's address.
  if (parsed->has_userinfo() || parsed->encoded_host_address().empty() ||
      (parsed->has_port() && (parsed->port().empty() || parsed->port().size() > 5))) {
    throw UsageError("--url: expected http[s]://HOST[:PORT], got " + std::string(authority));
  }
  if (parsed->has_query() || parsed->has_fragment()) throw UsageError(form);
  ServerUrl out;
  out.tls = tls;
  // As written ([::1] without its brackets): what the resolver and the Host header get.
  out.host = std::string(parsed->encoded_host_address());
  if (parsed->has_port()) {
    out.port = std::string(parsed->port());
  } else if (tls) {
    out.port = "443";
  }
  // Still percent-encoded: it goes in front of every target as it is.
  out.prefix = std::string(parsed->encoded_path());
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  return out;
}

std::string url_encode(std::string_view s) { return urls::encode(s, urls::unreserved_chars); }

}  // namespace dlq::ctl

// The webhook URL's parse: scheme, host, port and request target.
#include "config/webhook_url.hpp"

#include <boost/url/parse.hpp>

#include "config/config.hpp"

namespace dlq {

WebhookTarget parse_webhook_url(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw ConfigError("webhook URL is not a URL");
  auto scheme = parsed->scheme();
  if (scheme != "http" && scheme != "https") {
    throw ConfigError("webhook URL must be http:// or https:// (or empty: no alerts)");
  }
  WebhookTarget t;
  t.tls = scheme == "https";
  t.host = parsed->encoded_host().decode();
  if (t.host.empty()) throw ConfigError("webhook URL has no host");
  t.port = parsed->has_port() ? std::string(parsed->port()) : (t.tls ? "443" : "80");
  t.target = std::string(parsed->encoded_target());
  if (t.target.empty()) t.target = "/";
  return t;
}

}  // namespace dlq

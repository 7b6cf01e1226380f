// alerts.webhook_url read once, by Boost.URL: the config check refuses what the alert client could
// not connect to, and the client connects to what the same parse found.
#pragma once

#include <string>
#include <string_view>

namespace dlq {

struct WebhookTarget {
  bool tls = false;    // https://
  std::string host;    // decoded
  std::string port;    // the URL's, else 443 or 80
  std::string target;  // path and query as written, "/" when the URL has neither
};

// Throws ConfigError naming what is wrong: not a URL, a scheme other than http or https, no host.
WebhookTarget parse_webhook_url(std::string_view url);

}  // namespace dlq

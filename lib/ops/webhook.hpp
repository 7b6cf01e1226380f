// Delivering one alert: an HTTP POST of a JSON body to alerts.webhook_url, over plain HTTP (a
// local relay) or HTTPS with the certificate verified against the system's CA store or
// alerts.ca_file, within alerts.timeout_seconds. Beast over OpenSSL; the URL read by config/webhook_url.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

namespace dlq::ops {

class Webhook {
 public:
  // Throws ConfigError for a URL it cannot use (parse_webhook_url: the config check refuses the
  // same ones), std::runtime_error for a CA file it cannot read.
  Webhook(const std::string& url, const std::string& ca_file, std::chrono::milliseconds timeout);
  ~Webhook();
  Webhook(const Webhook&) = delete;
  Webhook& operator=(const Webhook&) = delete;

  // Posts `body`; throws (with the reason) unless the receiver answered 2xx in time.
  boost::asio::awaitable<void> post(boost::asio::any_io_executor ex, std::string body);

  const std::string& host() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlq::ops

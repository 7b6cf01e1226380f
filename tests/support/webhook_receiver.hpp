// A webhook receiver for the alert tests: listens on 127.0.0.1 (plain HTTP, or HTTPS with a
// certificate the test made), records every POST body with the time it came, and answers 200 —
// or 500 for the next `fail_next` requests, as a receiver that is down would.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dlq::test {

// A CA and a server certificate for localhost / 127.0.0.1, made with the openssl command.
struct TestCertificates {
  explicit TestCertificates(const std::string& dir);
  std::string ca_file, cert_file, key_file;
};

class WebhookReceiver {
 public:
  // Plain HTTP without `tls`.
  explicit WebhookReceiver(const TestCertificates* tls = nullptr);
  ~WebhookReceiver();
  unsigned short port() const { return port_; }

  struct Received {
    std::string body;
    std::chrono::steady_clock::time_point at;
  };
  std::vector<Received> received();
  std::atomic<int> fail_next{0};
  std::atomic<int> attempts{0};  // every request, answered 200 or 500

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  unsigned short port_ = 0;
};

}  // namespace dlq::test

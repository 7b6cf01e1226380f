// dlqctl's connection to dlqd: one blocking HTTP/1.1 request at a time, with a deadline on
// connect, write and read. Beast stays inside client.cpp (it is slow to compile).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dlq::ctl {

// The server could not be reached, or did not answer in time: exit status 3.
struct Unreachable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Bad usage (a malformed --url, a bad flag value): exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Reply {
  int status = 0;
  std::string body;
  std::string location;  // the Location header, if any
};

// http[s]://host[:port][/prefix]; the prefix is kept for servers behind a path-routing proxy.
// https is for a TLS-terminating proxy in front of dlqd (docs/access.md).
struct ServerUrl {
  bool tls = false;
  std::string host;
  std::string port = "80";
  std::string prefix;
  static ServerUrl parse(std::string_view url);  // throws UsageError
};

class Client {
 public:
  // `ca_file`: PEM CA certificates to verify an https server with (empty: the system's store).
  Client(ServerUrl url, std::string token, std::chrono::milliseconds timeout, std::string ca_file = "");
  // `target` is the path and query (already percent-encoded). An empty body sends none.
  Reply request(std::string_view method, const std::string& target, const std::string& body = "");
  Reply get(const std::string& target) { return request("GET", target); }

 private:
  ServerUrl url_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::string ca_file_;
};

// Percent-encodes everything but RFC 3986's unreserved characters (for path segments and
// query values).
std::string url_encode(std::string_view s);

}  // namespace dlq::ctl

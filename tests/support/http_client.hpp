// A small blocking HTTP/1.1 client for the integration tests: one keep-alive connection to
// 127.0.0.1, reconnecting when the server closed it. Beast stays inside http_client.cpp.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

namespace dlq::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  boost::json::value json() const;
  std::string header(const std::string& lower_name) const;
};

class HttpClient {
 public:
  explicit HttpClient(unsigned short port);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse request(std::string_view method, std::string_view target, std::string_view body = "",
                       const Headers& headers = {});
  HttpResponse get(std::string_view target, const Headers& headers = {}) {
    return request("GET", target, "", headers);
  }
  HttpResponse post(std::string_view target, const boost::json::value& body,
                    const Headers& headers = {});
  HttpResponse post(std::string_view target, const Headers& headers = {}) {
    return request("POST", target, "", headers);
  }

  // Writes raw bytes on a fresh connection and returns everything the server sends back until
  // it closes the connection or `timeout_ms` passes without data.
  std::string raw(std::string_view bytes, int timeout_ms = 5000);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Shorthand: the string form of a JSON value's member (for keys known to be strings).
std::string str(const boost::json::value& v, std::string_view key);

}  // namespace dlq::test

// The HTTP request and response as handlers see them: plain structs, no Beast. The session turns
// Beast messages into these and back, so handler code compiles without Beast's templates.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/request_context.hpp"
#include "core/requests.hpp"
#include "model/role.hpp"

namespace dlq::http {

// Watches the client's connection while a handler waits (a long-poll claim).
using ClientWatch = core::ClientWatch;

struct Request {
  std::string method;  // upper case, as received; HEAD is routed as GET
  std::string target;  // as received
  std::string path;    // target without the query, still percent-encoded
  core::QueryParams query;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  std::string request_id;
  ClientWatch* watch = nullptr;  // set by the session
  std::string actor;             // set once access is granted: the token's name or "anonymous"
  std::vector<Role> roles;       // and the roles it holds (GET /whoami)
  bool tokens_configured = false;
  // What the origin guard reads (http/origin_guard.hpp); nullopt when the field is absent.
  std::optional<std::string> host;
  std::optional<std::string> origin;
  std::optional<std::string> fetch_site;  // Sec-Fetch-Site

  const std::string* header(std::string_view name) const;
};

// The rest of a body too large to hold whole (list answers): the session asks for the next
// piece only once the previous ones are written, so an answer in flight holds one piece, not
// the whole text, however slowly its client reads.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // The next piece of the body; an empty string ends it. A fault ends the connection (the
  // status line is already sent).
  virtual boost::asio::awaitable<std::string> next() = 0;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;  // with `stream`: the first part of the body
  std::shared_ptr<BodyStream> stream;
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // answer with Connection: close and end the connection
};

// Splits "/a/b?x=1&y=%20" into path and decoded query parameters ('+' is a space in queries).
void split_target(std::string_view target, std::string& path, core::QueryParams& query);
// Percent-decodes one path segment; nullopt for malformed escapes.
std::optional<std::string> decode_segment(std::string_view segment);

}  // namespace dlq::http

// The framing rules Beast leaves to its user, checked on a request's head before its body is
// read: Transfer-Encoding (RFC 9112 section 6), Host (section 3.2) and a single Authorization.
// No Beast in this header.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlq::http {

struct FramingProblem {
  int status = 400;
  std::string_view slug;   // bad-request or not-implemented (http-api.md C)
  std::string_view title;
  std::string detail;
  std::string_view error;
};

// `transfer_encodings`: the value of every Transfer-Encoding field line, in order; `hosts` and
// `authorizations`: how many Host and Authorization field lines the request has. A problem
// means: answer it and close, because where this request's body ends (and the next request
// starts) is unknown, or whom it speaks for is.
std::optional<FramingProblem> check_framing(unsigned version,
                                            const std::vector<std::string_view>& transfer_encodings,
                                            std::size_t hosts, std::size_t authorizations = 0);

}  // namespace dlq::http

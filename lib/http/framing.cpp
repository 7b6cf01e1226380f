// Transfer-Encoding, Host and Authorization checks. Beast reads a body as chunked only when
// `chunked` is the last coding, and reads any other Transfer-Encoding as "no body": the body's
// bytes would then be parsed as the next request (request smuggling). These rules close that gap.
#include "http/framing.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>

namespace dlq::http {
namespace {

FramingProblem bad_request(std::string detail) {
  return {400, "bad-request", "Bad request", std::move(detail), "malformed HTTP request"};
}

}  // namespace

std::optional<FramingProblem> check_framing(unsigned version,
                                            const std::vector<std::string_view>& transfer_encodings,
                                            std::size_t hosts, std::size_t authorizations) {
  if (hosts > 1) return bad_request("a request must have exactly one Host header");
  // Two credentials: which one a proxy checked and which one dlqd would read is anyone's guess.
  if (authorizations > 1) return bad_request("a request may have at most one Authorization header");
  if (hosts == 0 && version >= 11) return bad_request("an HTTP/1.1 request needs a Host header");
  if (transfer_encodings.empty()) return std::nullopt;
  if (version < 11) {
    // RFC 9112 section 6.1: HTTP/1.0 has no transfer codings; the framing is faulty.
    return bad_request("Transfer-Encoding is not allowed in an HTTP/1.0 request");
  }
  std::vector<std::string> codings;
  for (std::string_view value : transfer_encodings) {
    boost::beast::http::opt_token_list list{value};
    if (!boost::beast::http::validate_list(list)) {
      return bad_request("Transfer-Encoding is not a list of codings");
    }
    for (auto token : list) codings.emplace_back(token);
  }
  // Section 6.3: a request whose last coding is not chunked has no knowable length.
  if (codings.empty() || !boost::beast::iequals(codings.back(), "chunked")) {
    return bad_request("Transfer-Encoding must end with chunked");
  }
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (boost::beast::iequals(codings[i], "chunked")) {
      return bad_request("chunked may be applied only once");
    }
  }
  if (codings.size() > 1) {
    // A coding under chunked (gzip, deflate...) would have to be undone to read the JSON body;
    // dlqd implements none of them, and ignoring one would read garbage.
    return FramingProblem{501, "not-implemented", "Not implemented",
                          "dlqd implements no transfer coding but chunked",
                          "transfer coding not implemented"};
  }
  return std::nullopt;
}

}  // namespace dlq::http

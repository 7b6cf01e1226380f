// Between Beast and the handlers: a parsed Beast request becomes a Request, and a Response goes
// out whole or, when it carries a BodyStream, piece by piece. Private to lib/http (session.cpp
// and wire.cpp); it includes Beast, so no other header may include it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "http/request.hpp"

namespace dlq::http::wire {

// A streamed answer is sent in chunks of about this size (one piece may be larger).
inline constexpr std::size_t kChunkBytes = 64 * 1024;

// Moves the body; keeps only the headers handlers read.
Request to_request(boost::beast::http::request<boost::beast::http::string_body>&& in);
std::string generate_request_id();

struct AnswerOptions {
  unsigned version = 11;
  bool keep_alive = false;
  bool head = false;  // HEAD: the headers GET would get, no body
  std::string request_id;
  // Each write must finish within this; a client that does not read is disconnected.
  std::chrono::milliseconds write_timeout{30000};
};

// The status line and header fields of an answer, through the blank line that ends them: the
// fields every answer carries (a handler's field of the same name replaces the default), the
// framing (Content-Length unless the status has no body; without a length, a streamed body:
// chunked in HTTP/1.1, until the connection closes in HTTP/1.0), and Connection where the
// version's default differs. The same bytes Beast's serializer would write, in one string
// (docs/performance.md).
std::string format_head(const Response& r, const AnswerOptions& o,
                        std::optional<std::size_t> content_length);

// Writes the answer. False when the connection must end: the write failed or timed out, a
// streamed body failed half-way, or its end is marked by closing (HTTP/1.0).
boost::asio::awaitable<bool> write_answer(boost::beast::tcp_stream& stream, Response response,
                                          const AnswerOptions& options);

}  // namespace dlq::http::wire

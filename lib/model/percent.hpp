// Percent-decoding (RFC 3986) for URL paths and queries, and the encoding that makes a raw
// request path safe to echo.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dlq {

// nullopt for a malformed escape ("%", "%4", "%zz"). In query strings '+' means a space.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = false);
// Bytes outside printable ASCII (controls, space, DEL, 0x80-0xFF) as %XX; everything else,
// '%' included, as it is: a path as received stays as received, and the result is ASCII.
std::string percent_encode_unprintable(std::string_view s);

}  // namespace dlq

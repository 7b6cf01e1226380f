// Percent-decoding (RFC 3986) for URL paths, queries and database URLs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dlq {

// nullopt for a malformed escape ("%", "%4", "%zz"). In query strings '+' means a space.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = false);

}  // namespace dlq

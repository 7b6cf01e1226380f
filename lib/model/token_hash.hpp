// SHA-256 of access tokens, shared by the server (comparing tokens), `dlqd hash-token` and
// `dlqctl hash-token`: one definition of what auth.tokens[].token_sha256 holds.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <string_view>

namespace dlq {

// The raw digest. Throws std::runtime_error if OpenSSL fails.
std::array<unsigned char, 32> sha256(std::string_view text);
// SHA-256 of `text` as 64 lowercase hex digits (what auth.tokens[].token_sha256 holds).
std::string sha256_hex(std::string_view text);

// `<program> hash-token`: reads a token from `in` (one trailing "\n" or "\r\n" stripped), prints
// its SHA-256 on `out`; warns on `err` about short tokens. Exit status: 0, or 2 for no token.
int hash_token_command(std::istream& in, std::ostream& out, std::ostream& err,
                       std::string_view program);

}  // namespace dlq

// Token hashing with OpenSSL's SHA-256, and the hash-token command both binaries offer.
#include "model/token_hash.hpp"

#include <openssl/evp.h>

#include <iostream>
#include <iterator>
#include <stdexcept>

namespace dlq {

// OpenSSL 3 looks an algorithm up (under a lock) on every EVP_sha256() digest: fetch it once,
// and keep one digest context per thread, so checking a token takes no lock.
std::array<unsigned char, 32> sha256(std::string_view text) {
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  struct Context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Context local;
  std::array<unsigned char, 32> out{};
  unsigned int size = 0;
  if (!kSha256 || !local.ctx || EVP_DigestInit_ex(local.ctx, kSha256, nullptr) != 1 ||
      EVP_DigestUpdate(local.ctx, text.data(), text.size()) != 1 ||
      EVP_DigestFinal_ex(local.ctx, out.data(), &size) != 1 || size != out.size()) {
    throw std::runtime_error("SHA-256 failed");
  }
  return out;
}

std::string sha256_hex(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto digest = sha256(text);
  std::string out;
  out.reserve(64);
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

int hash_token_command(std::istream& in, std::ostream& out, std::ostream& err,
                       std::string_view program) {
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!token.empty() && token.back() == '\n') token.pop_back();
  if (!token.empty() && token.back() == '\r') token.pop_back();
  if (token.empty()) {
    err << program << " hash-token: no token on standard input\n";
    return 2;
  }
  if (token.size() < 16) {
    err << program << " hash-token: warning: a token of " << token.size()
        << " characters is easy to guess; use a long random one (openssl rand -hex 32)\n";
  }
  out << sha256_hex(token) << "\n";
  return 0;
}

}  // namespace dlq

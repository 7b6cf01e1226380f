// Lease tokens from a per-thread pool of kernel randomness; each byte is handed out once.
#include "core/lease_tokens.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>

namespace dlq::core {
namespace {

constexpr std::size_t kTokenBytes = 16;  // 128 unguessable bits
constexpr std::size_t kPoolBytes = 4096;

void fill_random(unsigned char* out, std::size_t bytes) {
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(out + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed");
    }
    got += static_cast<std::size_t>(n);
  }
}

struct Pool {
  std::array<unsigned char, kPoolBytes> bytes{};
  std::size_t used = kPoolBytes;  // empty until first use
};

}  // namespace

std::string new_lease_token() {
  thread_local Pool pool;
  if (pool.used + kTokenBytes > kPoolBytes) {
    fill_random(pool.bytes.data(), pool.bytes.size());
    pool.used = 0;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kTokenBytes * 2, '0');
  unsigned char* next = pool.bytes.data() + pool.used;
  for (std::size_t i = 0; i < kTokenBytes; ++i) {
    out[2 * i] = kHex[next[i] >> 4];
    out[2 * i + 1] = kHex[next[i] & 0xf];
  }
  std::fill_n(next, kTokenBytes, 0);  // forget the bytes once used
  pool.used += kTokenBytes;
  return out;
}

}  // namespace dlq::core

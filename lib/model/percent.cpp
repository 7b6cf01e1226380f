// Percent-decoding through Boost.URL, and the escaping that makes a raw request path safe to echo.
#include "model/percent.hpp"

#include <boost/url/encoding_opts.hpp>
#include <boost/url/pct_string_view.hpp>

namespace dlq {

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  auto valid = boost::urls::make_pct_string_view(s);
  if (!valid) return std::nullopt;
  boost::urls::encoding_opts opt;
  opt.space_as_plus = plus_is_space;
  return valid->decode(opt);
}

// Not urls::encode: its result is always valid percent-encoding, so it escapes '%' itself (and
// asserts that '%' is never left as it is), while an echoed path must keep its '%XX' as received.
std::string percent_encode_unprintable(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if (b > 0x20 && b < 0x7F) {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

}  // namespace dlq

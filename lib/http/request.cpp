// Target splitting and percent-decoding of paths and query strings, through Boost.URL.
#include "http/request.hpp"

#include <boost/url/encode.hpp>
#include <boost/url/parse_query.hpp>
#include <boost/url/rfc/pchars.hpp>

#include "model/percent.hpp"

namespace dlq::http {
namespace {

namespace urls = boost::urls;

// RFC 3986's query characters, '&' and '=' among them: what urls::parse_query takes as they are.
constexpr auto kQueryChars = urls::pchars + '/' + '?';

// A key or value as handlers get it: decoded, '+' a space. A malformed escape keeps the whole
// raw text, so that validation rejects the value by name instead of the request failing.
std::string query_text(const std::string& raw) { return percent_decode(raw, true).value_or(raw); }

}  // namespace

const std::string* Request::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

void split_target(std::string_view target, std::string& path, core::QueryParams& query) {
  auto q = target.find('?');
  path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return;
  // The adapter between Beast and urls::parse_query. Beast passes on what RFC 3986 refuses in a
  // query ('|', '"', '{', bytes >= 0x80, a stray '%'), and parse_query refuses the whole query
  // for one of them, while one bad pair must never fail the rest. So every '%' and every byte
  // parse_query refuses is escaped first: parse_query then only splits the pairs, and each key
  // and value decodes back to exactly its raw text, which query_text decodes as before.
  const std::string escaped = urls::encode(target.substr(q + 1), kQueryChars);
  auto pairs = urls::parse_query(escaped);  // cannot fail: only query characters and escapes
  if (!pairs) return;
  for (auto param : *pairs) {
    if (param.key.empty() && !param.has_value) continue;  // "a=1&&b=2", a trailing '&'
    query.emplace_back(query_text(param.key.decode()), query_text(param.value.decode()));
  }
}

std::optional<std::string> decode_segment(std::string_view segment) {
  return percent_decode(segment, false);
}

}  // namespace dlq::http

// Target splitting and percent-decoding of paths and query strings.
#include "http/request.hpp"

#include "model/percent.hpp"

namespace dlq::http {

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
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    auto k = percent_decode(key, true);
    auto v = percent_decode(value, true);
    // A malformed escape keeps the raw text: validation then rejects the value by name.
    query.emplace_back(k ? *k : std::string(key), v ? *v : std::string(value));
  }
}

std::optional<std::string> decode_segment(std::string_view segment) {
  return percent_decode(segment, false);
}

}  // namespace dlq::http

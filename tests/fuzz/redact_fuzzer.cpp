// libFuzzer target over the redactor (core/redaction.hpp) with dlqd's default redaction.fields,
// and the incident title computed from its masked text (model/fingerprint.hpp): everything here
// reads text a producer or a worker wrote. One input is a payload and an error text at once; up
// to a NUL byte (which no JSON text holds) it is also the original of an edited payload, the
// rest being the edit. Oracles besides the sanitizers:
//   - a payload the redactor rewrote is JSON, every key named in the fields is "***" in it at
//     any depth, and masking it again changes nothing;
//   - the masked payload sent back unedited merges into the original (what a replay with the
//     payload people saw stores), and that masks to the same view again;
//   - masking and titling keep valid UTF-8 valid, and a title is at most kIncidentTitleMaxBytes.
//   scripts/fuzz.sh SECONDS redact   (seeds: tests/fuzz/corpus_redact)
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "config/config.hpp"
#include "core/redaction.hpp"
#include "model/fingerprint.hpp"

namespace json = boost::json;
using namespace dlq;

namespace {

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "redact fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;  // continuation bytes
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07u;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    constexpr std::uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kLeast[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

// Every key named in `fields` (any case) holds "***", at any depth.
bool all_masked(const json::value& v, const std::vector<std::string>& fields) {
  if (v.is_object()) {
    for (const auto& [key, member] : v.get_object()) {
      if (std::find(fields.begin(), fields.end(), lower(key)) != fields.end()) {
        if (!member.is_string() || member.get_string() != "***") return false;
      } else if (!all_masked(member, fields)) {
        return false;
      }
    }
  } else if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (!all_masked(item, fields)) return false;
    }
  }
  return true;
}

// The same tree, numbers aside: Boost.JSON 1.81's parser, used here, can read a number a unit
// off in the last place (and 0e400 as NaN), where the redactor reads each one exactly. Kinds are
// compared, values of doubles are not (the fixed-point checks hold the redactor to them).
bool same_tree(const json::value& a, const json::value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_double()) return true;
  if (a.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& [key, member] : x) {
      const json::value* other = y.if_contains(key);
      if (!other || !same_tree(member, *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!same_tree(x[i], y[i])) return false;
    }
    return true;
  }
  return a == b;
}

json::value parse_deep(std::string_view text, json::monotonic_resource& resource,
                       std::error_code& ec) {
  json::parse_options options;
  options.max_depth = core::Redactor::kMaxDepth;
  return json::parse(text, ec, &resource, options);
}

void check_payload(const core::Redactor& redactor, const std::vector<std::string>& fields,
                   const std::string& payload) {
  std::string shown = redactor.payload(payload);
  if (shown == payload || shown == core::Redactor::kWithheld) return;
  // Rewritten: it is JSON with every secret masked, and a fixed point of the redactor.
  json::monotonic_resource resource;
  std::error_code ec;
  json::value masked = parse_deep(shown, resource, ec);
  if (ec) fail("a masked payload is not JSON", shown);
  if (!all_masked(masked, fields)) fail("a masked payload still shows a secret", shown);
  if (redactor.payload(shown) != shown) fail("masking a masked payload changes it", shown);
  // Sent back unedited, the masks take the original values again: the payload as it was parsed.
  std::string merged = redactor.merge_masks(payload, shown);
  std::size_t first = payload.find_first_of("{[");
  json::value original = parse_deep(std::string_view(payload).substr(first), resource, ec);
  if (ec) fail("a payload the redactor parsed does not parse", payload);
  json::value restored = parse_deep(merged, resource, ec);
  if (ec || !same_tree(restored, original)) {
    fail("an unedited masked payload does not merge back", merged);
  }
  if (redactor.payload(merged) != shown) fail("the merged payload masks to another view", merged);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> fields = Config{}.redaction.fields;  // lower case
  static const core::Redactor redactor(fields);
  const std::string input(reinterpret_cast<const char*>(data), size);

  check_payload(redactor, fields, input);

  // An edited payload against its original: whatever comes back that is not the edit is JSON.
  if (auto nul = input.find('\0'); nul != std::string::npos) {
    std::string original = input.substr(0, nul);
    std::string edited = input.substr(nul + 1);
    std::string merged = redactor.merge_masks(original, edited);
    if (merged != edited) {
      json::monotonic_resource resource;
      std::error_code ec;
      (void)parse_deep(merged, resource, ec);
      if (ec) fail("a merged payload is not JSON", merged);
    }
  }

  // An error text: masked for people, then titled for its incident; a stack gives the frame.
  std::string masked = redactor.text(input);
  std::string title = incident_title(masked);
  if (title.size() > kIncidentTitleMaxBytes) fail("an incident title is too long", title);
  if (valid_utf8(input)) {
    if (!valid_utf8(masked)) fail("masking broke UTF-8", masked);
    if (!valid_utf8(title)) fail("an incident title is not UTF-8", title);
  }
  std::string frame = stack_frame(input);
  if (!valid_fingerprint(computed_fingerprint("job", ErrorClass::transient, title, frame))) {
    fail("a fingerprint is not 16 hex digits", title);
  }
  return 0;
}

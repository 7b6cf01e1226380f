// The linear credential scanner behind Redactor::text.
#include "core/text_mask.hpp"

namespace dlq::core {
namespace {

constexpr std::string_view kMask = "***";

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// \s of ECMAScript regular expressions over bytes.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_token68(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
}

// A value ends at whitespace or at a character that closes it in JSON, query strings or lists.
bool ends_value(char c) {
  return is_space(c) || c == '"' || c == '&' || c == ',' || c == ';' || c == '}';
}

// `word` (lower case) at `at`, ignoring case.
bool word_at(std::string_view s, std::size_t at, std::string_view word) {
  if (s.size() - at < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (lower(s[at + i]) != word[i]) return false;
  }
  return true;
}

// "Bearer" or "Basic" as a whole word at `at` (what the lookahead refused to mask again).
bool scheme_at(std::string_view s, std::size_t at) {
  for (std::string_view scheme : {std::string_view("bearer"), std::string_view("basic")}) {
    std::size_t end = at + scheme.size();
    if (word_at(s, at, scheme) && (end == s.size() || !is_word(s[end]))) return true;
  }
  return false;
}

std::size_t skip_spaces(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// "Bearer <credential>" and "Basic <credential>": the scheme keeps its case, one space, "***".
std::string mask_schemes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t name = word_at(s, i, "bearer") ? 6 : word_at(s, i, "basic") ? 5 : 0;
    std::size_t value = name ? skip_spaces(s, i + name) : 0;
    if (name && value > i + name && value < s.size() && is_token68(s[value])) {
      std::size_t end = value;
      while (end < s.size() && is_token68(s[end])) ++end;
      out.append(s.substr(i, name));
      out += ' ';
      out += kMask;
      i = end;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// The length of the '=' or ':' at `at`, also percent-encoded ("%3D", "%3a": a query string or
// form body quoted inside an error); 0 when there is none.
std::size_t separator_at(std::string_view s, std::size_t at) {
  if (at >= s.size()) return 0;
  if (s[at] == ':' || s[at] == '=') return 1;
  return word_at(s, at, "%3d") || word_at(s, at, "%3a") ? 3 : 0;
}

// `field` followed by '=' or ':' and a value that is not already masked or a scheme.
std::string mask_field(std::string_view s, std::string_view field) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = word_at(s, i, field) ? i + field.size() : std::string_view::npos;
    if (j != std::string_view::npos) {
      if (j < s.size() && s[j] == '"') ++j;
      j = skip_spaces(s, j);
      if (std::size_t sep = separator_at(s, j)) {
        j = skip_spaces(s, j + sep);
        if (j < s.size() && s[j] == '"') ++j;
        std::size_t end = j;
        if (s.substr(j, kMask.size()) != kMask && !scheme_at(s, j)) {
          while (end < s.size() && !ends_value(s[end])) ++end;
        }
        if (end > j) {
          out.append(s.substr(i, j - i));
          out += kMask;
          i = end;
          continue;
        }
      }
    }
    out += s[i++];
  }
  return out;
}

// What RFC 3986 allows in a URL's userinfo: unreserved, pct-encoded, sub-delims and ':'.
bool is_userinfo(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~%!$&'()*+,;=:").find(c) != std::string_view::npos;
}

// "scheme://user:password@host" -> "scheme://***@host". The scan after each "://" stops at the
// first character a userinfo cannot hold ('/' among them), so scans never overlap: linear.
std::string mask_userinfo(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t found = s.find("://", i);
    if (found == std::string_view::npos) break;
    std::size_t start = found + 3;
    std::size_t end = start;
    while (end < s.size() && is_userinfo(s[end])) ++end;
    out.append(s.substr(i, start - i));
    if (end > start && end < s.size() && s[end] == '@') {
      out += kMask;
      i = end;
    } else {
      i = start;
    }
  }
  out.append(s.substr(i));
  return out;
}

}  // namespace

// Beyond the former expressions (text_mask.hpp): a URL's userinfo first ("https://user:pw@host"
// -> "https://***@host"), and "%3D"/"%3A" as a field's separator ("token%3Dabc" -> "token%3D***").
TextMasker::TextMasker(std::vector<std::string> lower_case_fields)
    : fields_(std::move(lower_case_fields)) {}

std::string TextMasker::mask(std::string_view text) const {
  std::string out = mask_schemes(mask_userinfo(text));
  for (const auto& field : fields_) out = mask_field(out, field);
  return out;
}

}  // namespace dlq::core

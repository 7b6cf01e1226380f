// The title scanner, the frame rule and the hashes behind incidents' fingerprints
// (docs/api-decisions.md, "Fingerprints"). The title runs on every failure: one left-to-right
// pass that tries the masking rules in the order at each position, and stops once the
// title is long enough to be cut.
#include "model/fingerprint.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "model/token_hash.hpp"

namespace dlq {
namespace {

// Character classes as bits of one table: the scanner asks several per byte.
enum : unsigned char { kDigit = 1, kAlpha = 2, kHexLetter = 4, kSpace = 8, kLocalMark = 16 };

constexpr std::array<unsigned char, 256> kClasses = [] {
  std::array<unsigned char, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kAlpha;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kAlpha;
  for (int c = 'a'; c <= 'f'; ++c) t[c] |= kHexLetter;
  for (int c = 'A'; c <= 'F'; ++c) t[c] |= kHexLetter;
  for (char c : {' ', '\t', '\n', '\v', '\f', '\r'}) t[static_cast<unsigned char>(c)] = kSpace;
  for (char c : {'.', '_', '%', '+', '-'}) t[static_cast<unsigned char>(c)] = kLocalMark;
  return t;
}();

bool has(char c, unsigned char classes) {
  return (kClasses[static_cast<unsigned char>(c)] & classes) != 0;
}
bool is_digit(char c) { return has(c, kDigit); }
bool is_alpha(char c) { return has(c, kAlpha); }
bool is_alnum(char c) { return has(c, kDigit | kAlpha); }
bool is_hex(char c) { return has(c, kDigit | kHexLetter); }
bool is_hex_letter(char c) { return has(c, kHexLetter); }
bool is_space(char c) { return has(c, kSpace); }
// The local part of an address (RFC 5322's dot-atom, the characters people meet).
bool is_local(char c) { return has(c, kDigit | kAlpha | kLocalMark); }
bool is_domain(char c) { return is_alnum(c) || c == '.' || c == '-'; }
bool is_word(char c) { return is_alnum(c) || c == '_'; }

constexpr std::size_t kNoMatch = 0;

// A query string: a '?' inside a word that has a '/' before it (a path or URL) or an '=' after
// it, up to the next space, quote, bracket or '#'; punctuation that ends a sentence stays out.
std::size_t query_end(std::string_view s, std::size_t i, bool slash_in_word) {
  if (i == 0 || is_space(s[i - 1])) return kNoMatch;
  std::size_t j = i + 1;
  bool assigns = false;
  while (j < s.size()) {
    char c = s[j];
    if (is_space(c) || c == '"' || c == '\'' || c == '<' || c == '>' || c == ')' || c == ']' ||
        c == '}' || c == '#') {
      break;
    }
    assigns = assigns || c == '=';
    ++j;
  }
  while (j > i + 1) {
    char c = s[j - 1];
    if (c != '.' && c != ',' && c != ';' && c != ':' && c != '!') break;
    --j;
  }
  if (j == i + 1 || !(slash_in_word || assigns)) return kNoMatch;
  return j;
}

// local@domain.tld, starting where a local part starts.
std::size_t email_end(std::string_view s, std::size_t i) {
  if (!is_local(s[i]) || (i > 0 && is_local(s[i - 1]))) return kNoMatch;
  std::size_t at = i;
  while (at < s.size() && is_local(s[at])) ++at;
  if (at == s.size() || s[at] != '@') return kNoMatch;
  std::size_t end = at + 1;
  while (end < s.size() && is_domain(s[end])) ++end;
  while (end > at + 1 && (s[end - 1] == '.' || s[end - 1] == '-')) --end;
  std::string_view domain = s.substr(at + 1, end - at - 1);
  if (domain.empty() || domain.front() == '.' || domain.find('.') == std::string_view::npos) {
    return kNoMatch;
  }
  return end;
}

// 8-4-4-4-12 hex digits, not inside a longer word.
std::size_t uuid_end(std::string_view s, std::size_t i) {
  constexpr std::size_t kLength = 36;
  if ((i > 0 && is_alnum(s[i - 1])) || s.size() - i < kLength) return kNoMatch;
  for (std::size_t k = 0; k < kLength; ++k) {
    bool dash = k == 8 || k == 13 || k == 18 || k == 23;
    if (dash ? s[i + k] != '-' : !is_hex(s[i + k])) return kNoMatch;
  }
  std::size_t end = i + kLength;
  return end < s.size() && is_alnum(s[end]) ? kNoMatch : end;
}

// Four decimal octets (0-255) at `i`, not inside a longer dotted number or word.
std::size_t ipv4_end(std::string_view s, std::size_t i) {
  std::size_t j = i;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (j >= s.size() || s[j] != '.') return kNoMatch;
      ++j;
    }
    std::size_t start = j;
    int value = 0;
    while (j < s.size() && is_digit(s[j]) && j - start < 3) value = value * 10 + (s[j++] - '0');
    if (j == start || value > 255) return kNoMatch;
  }
  if (j < s.size() && (is_word(s[j]) || (s[j] == '.' && j + 1 < s.size() && is_digit(s[j + 1])))) {
    return kNoMatch;
  }
  return j;
}

// Colon-separated groups of 1-4 hex digits: eight of them, or fewer around one "::"; the last
// two may be a dotted IPv4 address.
std::size_t ipv6_end(std::string_view s, std::size_t i) {
  std::size_t run = i;
  while (run < s.size() && (is_hex(s[run]) || s[run] == ':')) ++run;
  if (run - i < 2) return kNoMatch;
  // A single ':' after the address belongs to the text ("2001:db8::1: refused").
  if (s[run - 1] == ':' && s[run - 2] != ':') --run;
  std::size_t pos = i;
  int groups = 0;
  bool elided = false;
  std::size_t last_group = i;
  if (s[pos] == ':') {
    if (pos + 1 >= run || s[pos + 1] != ':') return kNoMatch;
    elided = true;
    pos += 2;
  }
  while (pos < run) {
    std::size_t start = pos;
    while (pos < run && is_hex(s[pos])) ++pos;
    if (pos == start || pos - start > 4) return kNoMatch;
    ++groups;
    last_group = start;
    if (pos == run) break;
    ++pos;  // ':'
    if (pos < run && s[pos] == ':') {
      if (elided) return kNoMatch;
      elided = true;
      ++pos;
    }
  }
  std::size_t end = run;
  if (end < s.size() && s[end] == '.' && groups > 0) {
    std::size_t v4 = ipv4_end(s, last_group);
    if (v4 == kNoMatch) return kNoMatch;
    ++groups;
    end = v4;
  }
  if (groups == 0 || (elided ? groups > 7 : groups != 8)) return kNoMatch;
  if (end < s.size() && is_word(s[end])) return kNoMatch;
  return end;
}

std::size_t ip_end(std::string_view s, std::size_t i) {
  if (i > 0 && (is_word(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == ':')) return kNoMatch;
  if (std::size_t end = ipv6_end(s, i)) return end;
  return is_digit(s[i]) ? ipv4_end(s, i) : kNoMatch;
}

// A whole run of 8 or more hex digits with at least one decimal digit and one letter.
std::size_t hex_end(std::string_view s, std::size_t i) {
  if (i > 0 && is_hex(s[i - 1])) return kNoMatch;
  std::size_t j = i;
  bool digit = false;
  bool letter = false;
  while (j < s.size() && is_hex(s[j])) {
    digit = digit || is_digit(s[j]);
    letter = letter || is_hex_letter(s[j]);
    ++j;
  }
  return j - i >= 8 && digit && letter ? j : kNoMatch;
}

// "…" or '…' (backslash escapes skipped); an apostrophe after a letter ("don't") opens nothing.
std::size_t quote_end(std::string_view s, std::size_t i, bool& unclosed) {
  char q = s[i];
  if (unclosed || (q == '\'' && i > 0 && is_alpha(s[i - 1]))) return kNoMatch;
  std::size_t j = i + 1;
  while (j < s.size() && s[j] != q) j += s[j] == '\\' ? 2 : 1;
  if (j >= s.size()) {
    unclosed = true;  // no later quote of this kind can close either: keeps the scan linear
    return kNoMatch;
  }
  return j + 1;
}

// A letter inside a word where no rule can start: not the first of a hex run.
bool inner_letter(std::string_view s, std::size_t i) {
  return i > 0 && is_alpha(s[i]) && is_alnum(s[i - 1]) && (!is_hex(s[i]) || is_hex(s[i - 1]));
}

// Cuts `text` to at most `max` bytes without splitting a UTF-8 sequence.
void cut_utf8(std::string& text, std::size_t max) {
  if (text.size() <= max) return;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// `at name(`: Java, C#, and Node frames that name a function.
bool names_call(std::string_view line) {
  if (!starts_with(line, "at ")) return false;
  std::size_t j = 3;
  std::size_t start = j;
  while (j < line.size() && line[j] != '(' && !is_space(line[j])) ++j;
  return j > start && j < line.size() && line[j] == '(';
}

// `File "…", line`: Python.
bool names_python_file(std::string_view line) {
  if (!starts_with(line, "File \"")) return false;
  std::size_t close = line.find('"', 6);
  return close != std::string_view::npos && starts_with(line.substr(close), "\", line");
}

// `name.ext:123` anywhere in the line: Node, Go, Ruby, and the file part of Java's frames.
bool names_file_line(std::string_view line) {
  for (std::size_t colon = line.find(':'); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    if (colon + 1 >= line.size() || !is_digit(line[colon + 1])) continue;
    std::size_t ext = colon;
    while (ext > 0 && is_alnum(line[ext - 1])) --ext;
    if (ext == colon || !is_alpha(line[ext]) || ext < 2 || line[ext - 1] != '.') continue;
    char name = line[ext - 2];
    if (is_word(name) || name == '$' || name == '-') return true;
  }
  return false;
}

// Digit runs, and 0x-prefixed hex numbers (Go's frame offsets), become <n>.
std::string mask_numbers(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    if (!is_digit(s[i])) {
      out += s[i++];
      continue;
    }
    bool hex = s[i] == '0' && i + 2 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
               is_hex(s[i + 2]) && (i == 0 || !is_alnum(s[i - 1]));
    i += hex ? 2 : 0;
    while (i < s.size() && (hex ? is_hex(s[i]) : is_digit(s[i]))) ++i;
    out += "<n>";
  }
  return out;
}

std::string hash_fields(std::initializer_list<std::string_view> fields) {
  std::string framed;
  std::size_t size = 0;
  for (std::string_view f : fields) size += f.size() + 8;
  framed.reserve(size);
  for (std::string_view f : fields) {
    framed += std::to_string(f.size());
    framed += ':';
    framed += f;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  auto digest = sha256(framed);
  std::string out;
  out.reserve(16);
  for (std::size_t k = 0; k < 8; ++k) {
    out += kHex[digest[k] >> 4];
    out += kHex[digest[k] & 0xf];
  }
  return out;
}

std::string_view or_empty(const std::optional<std::string>& s) {
  return s ? std::string_view(*s) : std::string_view();
}

}  // namespace

std::string incident_title(std::string_view s) {
  std::string out;
  out.reserve(std::min(s.size(), kIncidentTitleMaxBytes) + 16);
  bool slash_in_word = false;
  bool unclosed_double = false;
  bool unclosed_single = false;
  std::size_t i = 0;
  // Consumes s[i, end) as `mask`, keeping track of whether this word has had a '/'.
  auto replace = [&](std::size_t end, std::string_view mask) {
    for (; i < end; ++i) {
      if (s[i] == '/') slash_in_word = true;
      if (is_space(s[i])) slash_in_word = false;
    }
    out += mask;
  };
  while (i < s.size() && out.size() <= kIncidentTitleMaxBytes) {
    // Letters inside a word start no rule (but a hex run may begin after a non-hex letter):
    // copy them in one go.
    if (std::size_t end = i; inner_letter(s, end)) {
      while (end < s.size() && inner_letter(s, end)) ++end;
      out.append(s.substr(i, end - i));
      i = end;
      continue;
    }
    char c = s[i];
    std::size_t end = kNoMatch;
    if (c == '?' && (end = query_end(s, i, slash_in_word))) {
      replace(end, "?<query>");
    } else if ((end = email_end(s, i))) {
      replace(end, "<email>");
    } else if (is_hex(c) && (end = uuid_end(s, i))) {
      replace(end, "<uuid>");
    } else if ((is_hex(c) || c == ':') && (end = ip_end(s, i))) {
      replace(end, "<ip>");
    } else if (is_hex(c) && (end = hex_end(s, i))) {
      replace(end, "<hex>");
    } else if (c == '"' && (end = quote_end(s, i, unclosed_double))) {
      replace(end, "\"<str>\"");
    } else if (c == '\'' && (end = quote_end(s, i, unclosed_single))) {
      replace(end, "'<str>'");
    } else if (is_digit(c)) {
      end = i;
      while (end < s.size() && is_digit(s[end])) ++end;
      replace(end, "<n>");
    } else if (is_space(c)) {
      end = i;
      while (end < s.size() && is_space(s[end])) ++end;
      replace(end, out.empty() ? "" : " ");
    } else {
      if (c == '/') slash_in_word = true;
      out += c;
      ++i;
    }
  }
  cut_utf8(out, kIncidentTitleMaxBytes);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string stack_frame(std::string_view stack) {
  std::size_t pos = 0;
  while (pos < stack.size()) {
    std::size_t eol = stack.find('\n', pos);
    if (eol == std::string_view::npos) eol = stack.size();
    std::string_view line = trim(stack.substr(pos, eol - pos));
    if (names_call(line) || names_python_file(line) || names_file_line(line)) {
      return mask_numbers(line);
    }
    pos = eol + 1;
  }
  return {};
}

std::string computed_fingerprint(const std::optional<std::string>& job_type,
                                 std::optional<ErrorClass> error_class, std::string_view title,
                                 std::string_view frame) {
  std::string_view cls = error_class ? to_string(*error_class) : std::string_view();
  return hash_fields({or_empty(job_type), cls, title, frame});
}

std::string lease_expiry_fingerprint(const std::optional<std::string>& job_type) {
  return titled_fingerprint(job_type, kLeaseExpiredTitle);
}

std::string titled_fingerprint(const std::optional<std::string>& job_type, std::string_view title) {
  return hash_fields({or_empty(job_type), title});
}

std::string receive_count_title(int receive_count) {
  return "received " + std::to_string(receive_count) + " times without being deleted";
}

std::string worker_fingerprint(const std::optional<std::string>& job_type, std::string_view value) {
  return hash_fields({"worker", or_empty(job_type), value});
}

std::optional<std::string_view> worker_fingerprint_error(std::string_view value) {
  if (value.size() > kWorkerFingerprintMaxBytes) return std::string_view("too_long");
  if (value.empty()) return std::string_view("invalid");
  for (char c : value) {
    if (!is_alnum(c) && c != '_' && c != '.' && c != ':' && c != '-') {
      return std::string_view("invalid");
    }
  }
  return std::nullopt;
}

bool valid_fingerprint(std::string_view text) {
  if (text.size() != 16) return false;
  for (char c : text) {
    if (!is_digit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

}  // namespace dlq

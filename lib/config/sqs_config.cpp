// The sqs.* keys' own rules (issue 38): value shapes, access keys that clash with each other or
// with auth.tokens, the public URL a wildcard listen needs, and reading the secret files, whose
// content never appears in an error.
#include "config/sqs_config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <boost/url/ipv4_address.hpp>
#include <boost/url/ipv6_address.hpp>

#include "config/web_origin.hpp"

namespace dlq {
namespace config_detail {
namespace {

// An AWS secret access key is 40 characters; anything this long is not one (a log file named by
// mistake, say).
constexpr std::size_t kMaxSecretBytes = 4096;

bool all_of(std::string_view s, bool (*ok)(char)) { return std::all_of(s.begin(), s.end(), ok); }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool alnum(char c) { return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool region_char(char c) { return digit(c) || (c >= 'a' && c <= 'z') || c == '-'; }

// 0.0.0.0, ::, [::] (any spelling of the unspecified address): every interface.
bool wildcard_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (auto v4 = boost::urls::parse_ipv4_address(host)) return v4->is_unspecified();
  if (auto v6 = boost::urls::parse_ipv6_address(host)) return v6->is_unspecified();
  return false;
}

std::string octal_mode(mode_t mode) {
  std::string out = "0000";
  unsigned bits = static_cast<unsigned>(mode) & 07777u;
  for (std::size_t i = out.size(); i-- > 0; bits >>= 3) {
    out[i] = static_cast<char>('0' + (bits & 7u));
  }
  return out;
}

// What is wrong with the secret file, or nullopt with `secret` filled. The messages name the
// file, never what it holds.
std::optional<std::string> read_secret(const std::string& path, std::string& secret) {
  // O_NONBLOCK: a FIFO named by mistake must not hang the start or the reload.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return "cannot be read (" + std::string(std::strerror(errno)) + ")";
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "cannot be read (" + std::string(std::strerror(errno)) + ")";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if ((st.st_mode & 0044) != 0) {
    return "may be read by group or others (mode " + octal_mode(st.st_mode) +
           "): make it readable by dlqd's user only (chmod 600 or 400)";
  }
  std::string content;
  char buffer[1024];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "cannot be read (" + std::string(std::strerror(errno)) + ")";
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
    if (content.size() > kMaxSecretBytes + 1) break;
  }
  if (!content.empty() && content.back() == '\n') content.pop_back();
  if (content.size() > kMaxSecretBytes) {
    return "holds more than " + std::to_string(kMaxSecretBytes) + " bytes: not a secret key";
  }
  if (content.empty()) {
    return "is empty (the secret is the file's content, less one trailing newline)";
  }
  // A "\r\n" ending or a blank line would become part of the secret, and every signature would
  // then fail with no hint why.
  if (std::any_of(content.begin(), content.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return "holds a control character besides one trailing newline (a \\r or a second line?)";
  }
  secret = std::move(content);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_sqs_public_url(const std::string& s) {
  if (s.empty()) return std::nullopt;  // http://<listen address as bound>
  std::string_view url = s;
  if (url.ends_with('/')) url.remove_suffix(1);
  auto origin = parse_web_origin(url);
  if (origin && origin->port != 0) return std::nullopt;
  return "must be http://HOST[:PORT] or https://HOST[:PORT] (no path, query or user; one "
         "trailing / is dropped), or empty";
}

std::optional<std::string> check_sqs_region(const std::string& s) {
  if (!s.empty() && s.size() <= 32 && all_of(s, region_char)) return std::nullopt;
  return "must be 1 to 32 lowercase letters, digits and '-' (as \"us-east-1\")";
}

std::optional<std::string> check_sqs_account_id(const std::string& s) {
  if (s.size() == 12 && all_of(s, digit)) return std::nullopt;
  return "must be 12 digits";
}

std::optional<std::string> check_sqs_access_key_id(const std::string& s) {
  if (s.size() >= 16 && s.size() <= 128 && all_of(s, alnum)) return std::nullopt;
  return "must be 16 to 128 letters and digits";
}

void normalize_sqs_public_url(std::string& url) {
  if (url.ends_with('/')) url.pop_back();
}

// The first entry of each name and key id is the one later entries clash with; names that
// failed their own check (left empty) clash with nothing.
void check_sqs_access_keys(const Config& c, std::vector<std::string>& errors) {
  std::unordered_map<std::string_view, std::size_t> token_names, key_names, key_ids;
  for (std::size_t i = 0; i < c.auth.tokens.size(); ++i) {
    token_names.emplace(c.auth.tokens[i].name, i);
  }
  const auto& keys = c.sqs.access_keys;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const SqsAccessKey& k = keys[i];
    std::string key = "config key \"sqs.access_keys[" + std::to_string(i) + "]";
    if (k.roles.empty()) errors.push_back(key + ".roles\": must list at least one role");
    if (!k.name.empty()) {
      if (auto t = token_names.find(k.name); t != token_names.end()) {
        errors.push_back(key + ".name\": \"" + k.name + "\" names auth.tokens[" +
                         std::to_string(t->second) +
                         "] too (names are unique across tokens and access keys)");
      }
      if (auto [first, fresh] = key_names.emplace(k.name, i); !fresh) {
        errors.push_back(key + ".name\": \"" + k.name + "\" names sqs.access_keys[" +
                         std::to_string(first->second) + "] too");
      }
    }
    if (!k.access_key_id.empty()) {
      if (auto [first, fresh] = key_ids.emplace(k.access_key_id, i); !fresh) {
        errors.push_back(key + ".access_key_id\": the same key id as sqs.access_keys[" +
                         std::to_string(first->second) + "]");
      }
    }
  }
}

void check_sqs_public_url_needed(const Config& c, std::vector<std::string>& errors) {
  if (!c.sqs.public_url.empty() || !sqs_front_served(c)) return;
  auto colon = c.listen.rfind(':');
  if (colon == std::string::npos || !wildcard_host(std::string_view(c.listen).substr(0, colon))) {
    return;
  }
  // Anonymous on every interface without auth.allow_anonymous: dlqd refuses to listen at all,
  // and says why; asking for a public URL first would send the reader the wrong way.
  if (c.sqs.access_keys.empty() && !c.auth.allow_anonymous) return;
  errors.push_back(
      "config key \"sqs.public_url\": required when the SQS front is served on a "
      "wildcard listen (\"" +
      c.listen +
      "\"): queue URLs need the address clients "
      "reach dlqd at, as \"https://dlq.example.com\"");
}

void read_sqs_secrets(Config& c, std::vector<std::string>& errors) {
  auto& keys = c.sqs.access_keys;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    keys[i].secret.clear();
    if (keys[i].secret_file.empty()) continue;  // its own error is reported already
    if (auto problem = read_secret(keys[i].secret_file, keys[i].secret)) {
      errors.push_back("config key \"sqs.access_keys[" + std::to_string(i) + "].secret_file\": \"" +
                       keys[i].secret_file + "\" " + *problem);
    }
  }
}

}  // namespace config_detail

bool sqs_front_served(const Config& c) {
  return !c.sqs.access_keys.empty() || c.auth.tokens.empty();
}

void load_sqs_secrets(Config& c) {
  std::vector<std::string> errors;
  config_detail::read_sqs_secrets(c, errors);
  if (errors.empty()) return;
  std::string text;
  for (const auto& e : errors) text += (text.empty() ? "" : "\n") + e;
  throw ConfigError(text);
}

}  // namespace dlq

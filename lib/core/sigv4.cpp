// The canonical request, string to sign and signing key as AWS's SigV4 documentation defines them
// ("Create a canonical request", "Calculate the signature"), checked against its published test
// suite in tests/unit/sigv4_test.cpp.
#include "core/sigv4.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>

#include "model/percent.hpp"
#include "model/token_hash.hpp"

namespace dlq::core::sigv4 {
namespace {

using std::chrono::system_clock;

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr auto kMaxSkew = std::chrono::minutes(5);
const Headers kNoHeaders;

struct Scope {
  std::string date;  // yyyymmdd
  std::string region;
  std::string service;
  std::string text() const { return date + "/" + region + "/" + service + "/aws4_request"; }
};

struct Authorization {
  std::string access_key_id;
  Scope scope;
  std::vector<std::string> signed_headers;
  std::string signed_headers_text;  // as sent: it is part of what the client signed
  std::string signature;
};

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    std::size_t end = s.find(separator, at);
    parts.push_back(s.substr(at, end == std::string_view::npos ? end : end - at));
    if (end == std::string_view::npos) return parts;
    at = end + 1;
  }
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &size) ||
      size != out.size()) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

std::string signature(std::string_view secret, const Scope& scope, std::string_view amz_date,
                      std::string_view canonical_request) {
  std::string string_to_sign = std::string(kAlgorithm) + "\n" + std::string(amz_date) + "\n" +
                               scope.text() + "\n" + sha256_hex(canonical_request);
  std::string key = hmac_sha256("AWS4" + std::string(secret), scope.date);
  key = hmac_sha256(key, scope.region);
  key = hmac_sha256(key, scope.service);
  key = hmac_sha256(key, "aws4_request");
  return hex(hmac_sha256(key, string_to_sign));
}

// Leading and trailing blanks dropped, each inner run of them one space (AWS's "trimall").
std::string trimall(std::string_view value) {
  std::string out;
  bool blank = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

// Every value of `name`, each trimmed, joined with ',' in the order received.
std::optional<std::string> header_value(const Headers& headers, std::string_view name) {
  std::optional<std::string> joined;
  for (const auto& [n, v] : headers) {
    if (n != name) continue;
    joined = joined ? *joined + "," + trimall(v) : trimall(v);
  }
  return joined;
}

// The decoded name/value pairs; nullopt for a malformed escape. '+' is a space, as the SDKs'
// query parsers and form encoding read it.
std::optional<Headers> query_params(std::string_view raw) {
  Headers params;
  if (raw.empty()) return params;
  for (std::string_view param : split(raw, '&')) {
    if (param.empty()) continue;
    std::size_t eq = param.find('=');
    auto name = percent_decode(param.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? "" : param.substr(eq + 1), true);
    if (!name || !value) return std::nullopt;
    params.emplace_back(std::move(*name), std::move(*value));
  }
  return params;
}

// RFC 3986's unreserved characters as they are, every other byte as %XX.
std::string uri_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    }
  }
  return out;
}

// Decoded and encoded again, so the escapes a client happened to send do not matter.
std::optional<std::string> canonical_query(std::string_view raw) {
  auto params = query_params(raw);
  if (!params) return std::nullopt;
  for (auto& [name, value] : *params) {
    name = uri_encode(name);
    value = uri_encode(value);
  }
  std::sort(params->begin(), params->end());
  std::string out;
  for (const auto& [name, value] : *params) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

// "name:value\n" for each signed header, in the order signed; nullopt when one is absent.
std::optional<std::string> canonical_headers(const Headers& headers,
                                             const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    auto value = header_value(headers, name);
    if (!value) return std::nullopt;
    out += name + ":" + *value + "\n";
  }
  return out;
}

std::string canonical_request(const Request& r, std::string_view query,
                              std::string_view headers_block, std::string_view signed_headers,
                              std::string_view payload_hash) {
  std::string out(r.method);
  out += '\n';
  out += r.path.empty() ? std::string_view("/") : r.path;
  out += '\n';
  out += query;
  out += '\n';
  out += headers_block;
  out += '\n';
  out += signed_headers;
  out += '\n';
  out += payload_hash;
  return out;
}

// "yyyymmddThhmmssZ", UTC.
std::optional<system_clock::time_point> parse_amz_date(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  auto number = [s](std::size_t at, std::size_t width) -> std::optional<unsigned> {
    unsigned v = 0;
    for (char c : s.substr(at, width)) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<unsigned>(c - '0');
    }
    return v;
  };
  auto y = number(0, 4), mo = number(4, 2), d = number(6, 2);
  auto h = number(9, 2), mi = number(11, 2), sec = number(13, 2);
  if (!y || !mo || !d || !h || !mi || !sec || *h > 23 || *mi > 59 || *sec > 59) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year(static_cast<int>(*y)), std::chrono::month(*mo),
                                  std::chrono::day(*d)};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days(ymd) + std::chrono::hours(*h) + std::chrono::minutes(*mi) +
         std::chrono::seconds(*sec);
}

std::string format_amz_date(system_clock::time_point t) {
  auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  auto day = std::chrono::floor<std::chrono::days>(seconds);
  std::chrono::year_month_day ymd{day};
  std::chrono::hh_mm_ss hms{seconds - day};
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf.data();
}

// "Credential=<key>/<date>/<region>/<service>/aws4_request".
bool parse_credential(std::string_view credential, Authorization& out) {
  auto parts = split(credential, '/');
  if (parts.size() != 5 || parts[0].empty() || parts[4] != "aws4_request") return false;
  out.access_key_id = parts[0];
  out.scope = Scope{std::string(parts[1]), std::string(parts[2]), std::string(parts[3])};
  return true;
}

// Lower-case names: the client signs them lower-case, and matching is by exact name.
bool parse_signed_headers(std::string_view list, Authorization& out) {
  for (std::string_view name : split(list, ';')) {
    if (name.empty() || std::any_of(name.begin(), name.end(),
                                    [](char c) { return (c >= 'A' && c <= 'Z') || c == ' '; })) {
      return false;
    }
    out.signed_headers.emplace_back(name);
  }
  out.signed_headers_text = list;
  return true;
}

// What follows "AWS4-HMAC-SHA256 ": Credential, SignedHeaders and Signature, each exactly once,
// in any order, separated by ',' (already trimmed to at most one space after each).
std::optional<Authorization> parse_authorization(std::string_view rest) {
  Authorization out;
  bool credential = false, signed_headers = false, signature = false;
  for (std::string_view part : split(rest, ',')) {
    if (part.starts_with(' ')) part.remove_prefix(1);
    std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    bool parsed = false;
    if (key == "Credential" && !credential) {
      parsed = credential = parse_credential(value, out);
    } else if (key == "SignedHeaders" && !signed_headers) {
      parsed = signed_headers = parse_signed_headers(value, out);
    } else if (key == "Signature" && !signature && !value.empty()) {
      out.signature = value;
      parsed = signature = true;
    }
    if (!parsed) return std::nullopt;
  }
  if (!credential || !signed_headers || !signature) return std::nullopt;
  return out;
}

bool is_presigned(std::string_view query) {
  auto params = query_params(query);
  return params && std::any_of(params->begin(), params->end(), [](const auto& p) {
           return p.first == "X-Amz-Signature" || p.first == "X-Amz-Credential";
         });
}

// Same length first, then a comparison whose time does not depend on where they differ.
bool same_signature(std::string_view expected, std::string_view given) {
  return expected.size() == given.size() &&
         CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

// The checks after the Authorization header parsed: form, scope, time, key, then signature.
Result check(const Request& request, const Headers& headers, const Authorization& auth,
             std::string_view region, std::string_view service, system_clock::time_point now,
             const SecretLookup& secret_of) {
  auto refuse = [&auth](Verdict v, std::string detail) {
    return Result{v, auth.access_key_id, std::move(detail)};
  };
  auto& names = auth.signed_headers;
  if (std::find(names.begin(), names.end(), "host") == names.end()) {
    return refuse(Verdict::malformed, "host is not a signed header");
  }
  auto amz_date = header_value(headers, "x-amz-date");
  if (!amz_date) return refuse(Verdict::malformed, "no x-amz-date header");
  auto signed_at = parse_amz_date(*amz_date);
  if (!signed_at) return refuse(Verdict::malformed, "x-amz-date is not yyyymmddThhmmssZ");
  auto headers_block = canonical_headers(headers, names);
  if (!headers_block) return refuse(Verdict::malformed, "a signed header is not in the request");
  auto query = canonical_query(request.query);
  if (!query) return refuse(Verdict::malformed, "the query string has a malformed escape");

  if (auth.scope.region != region || auth.scope.service != service) {
    return refuse(Verdict::bad_scope, "the credential scope is not for region " +
                                          std::string(region) + ", service " +
                                          std::string(service));
  }
  if (auth.scope.date != amz_date->substr(0, 8)) {
    return refuse(Verdict::bad_scope, "the credential scope's date is not x-amz-date's");
  }
  if (std::chrono::abs(now - *signed_at) > kMaxSkew) {
    return refuse(Verdict::skewed, "x-amz-date is more than 5 minutes from the server's time");
  }
  auto secret = secret_of(auth.access_key_id);
  if (!secret) return refuse(Verdict::unknown_key, "unknown access key id");

  std::string payload_hash = sha256_hex(request.body);
  auto claimed = header_value(headers, "x-amz-content-sha256");
  if (claimed && *claimed != payload_hash) {
    return refuse(Verdict::bad_signature, "x-amz-content-sha256 is not the body's SHA-256");
  }
  std::string expected = signature(
      *secret, auth.scope, *amz_date,
      canonical_request(request, *query, *headers_block, auth.signed_headers_text, payload_hash));
  if (!same_signature(expected, auth.signature)) {
    return refuse(Verdict::bad_signature, "the signature does not match");
  }
  return refuse(Verdict::ok, {});
}

}  // namespace

Result verify(const Request& request, std::string_view region, std::string_view service,
              system_clock::time_point now, const SecretLookup& secret_of) {
  const Headers& headers = request.headers ? *request.headers : kNoHeaders;
  if (is_presigned(request.query)) {
    return {Verdict::presigned, {}, "presigned URLs are not supported"};
  }
  auto authorization = header_value(headers, "authorization");
  if (!authorization) return {Verdict::missing, {}, "no Authorization header"};
  std::string_view text = *authorization;
  std::size_t space = text.find(' ');
  if (text.substr(0, space) != kAlgorithm) {
    return {Verdict::missing, {}, "the Authorization header is not AWS4-HMAC-SHA256"};
  }
  if (header_value(headers, "x-amz-security-token")) {
    return {Verdict::security_token, {}, "temporary credentials are not supported"};
  }
  auto auth = parse_authorization(space == std::string_view::npos ? "" : text.substr(space + 1));
  if (!auth) return {Verdict::malformed, {}, "the Authorization header is malformed"};
  return check(request, headers, *auth, region, service, now, secret_of);
}

Headers sign(const Request& request, std::string_view access_key_id, std::string_view secret,
             std::string_view region, std::string_view service, system_clock::time_point t) {
  std::string amz_date = format_amz_date(t);
  Headers headers;
  for (const auto& h : request.headers ? *request.headers : kNoHeaders) {
    if (h.first != "authorization" && h.first != "x-amz-date") headers.push_back(h);
  }
  headers.emplace_back("x-amz-date", amz_date);

  std::vector<std::string> names;
  for (const auto& h : headers) names.push_back(h.first);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (!std::binary_search(names.begin(), names.end(), "host")) {
    throw std::invalid_argument("SigV4: the request has no host header");
  }
  auto query = canonical_query(request.query);
  if (!query) throw std::invalid_argument("SigV4: the query string has a malformed escape");

  std::string signed_headers;
  for (const auto& name : names) signed_headers += (signed_headers.empty() ? "" : ";") + name;
  Scope scope{amz_date.substr(0, 8), std::string(region), std::string(service)};
  std::string canonical = canonical_request(request, *query, *canonical_headers(headers, names),
                                            signed_headers, sha256_hex(request.body));
  return {{"x-amz-date", amz_date},
          {"authorization", std::string(kAlgorithm) + " Credential=" + std::string(access_key_id) +
                                "/" + scope.text() + ", SignedHeaders=" + signed_headers +
                                ", Signature=" + signature(secret, scope, amz_date, canonical)}};
}

}  // namespace dlq::core::sigv4

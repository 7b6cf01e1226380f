// AWS Signature Version 4 for the SQS-compatible front: verifying the Authorization header of a
// request as received, and signing one (for clients and tests). Header-based signing only;
// presigned URLs and temporary credentials are refused with verdicts of their own.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlq::core::sigv4 {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string_view method;
  std::string_view path;   // raw as received, still percent-encoded
  std::string_view query;  // raw query string without '?'
  const Headers* headers;  // names lower-case, as received; a repeated name is joined with ','
  std::string_view body;
};

enum class Verdict {
  ok,
  missing,         // no Authorization, or not AWS4-HMAC-SHA256
  presigned,       // X-Amz-Signature / X-Amz-Credential in the query
  security_token,  // x-amz-security-token header present
  // Authorization unparsable, host not signed, a signed header absent, no x-amz-date (a Date
  // header alone is not accepted)
  malformed,
  unknown_key,
  bad_scope,  // credential scope's region or service wrong, or its date not x-amz-date's
  skewed,     // x-amz-date more than 5 minutes from now
  bad_signature,
};

struct Result {
  Verdict verdict;
  std::string access_key_id;  // once the Authorization header parsed
  std::string detail;         // a short English reason; never the secret or the expected signature
};

using SecretLookup = std::function<std::optional<std::string>(std::string_view access_key_id)>;

// The payload hash is computed from `body`; an x-amz-content-sha256 header that claims another
// is bad_signature. The cheap checks run before `secret_of` is asked.
Result verify(const Request& request, std::string_view region, std::string_view service,
              std::chrono::system_clock::time_point now, const SecretLookup& secret_of);

// The headers to add (x-amz-date, authorization) to sign `request` at `t`: every header in it is
// signed, but an authorization or x-amz-date already there is left out (the new ones replace it).
// Throws std::invalid_argument without a host header or with a malformed query escape.
Headers sign(const Request& request, std::string_view access_key_id, std::string_view secret,
             std::string_view region, std::string_view service,
             std::chrono::system_clock::time_point t);

}  // namespace dlq::core::sigv4

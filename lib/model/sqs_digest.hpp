// The digests an SQS-compatible front returns beside a message (MD5OfMessageBody,
// MD5OfMessageAttributes): SDKs recompute them and reject the answer when they differ.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlq::sqs {

struct MessageAttribute {
  std::string name;
  std::string data_type;                    // "String", "Number.float", "Binary.gzip", ...
  std::optional<std::string> string_value;  // for String and Number types
  std::optional<std::string> binary_value;  // for Binary types: raw bytes, already base64-decoded
};

// 32 lowercase hex digits. Throws std::runtime_error if OpenSSL fails.
std::string md5_hex(std::string_view bytes);

// AWS's MD5OfMessageAttributes over `attrs` in any order; "" for none (SQS then omits the
// member). Callers validate first: an attribute whose base type is not String, Number or Binary,
// or that lacks the value its type needs, throws std::invalid_argument.
std::string attributes_md5(std::vector<MessageAttribute> attrs);

}  // namespace dlq::sqs

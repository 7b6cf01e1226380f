// SQS message attributes (sqs_message_attributes.cpp): what SendMessage's MessageAttributes may
// hold, how they are stored with a message and returned, and their digest. Private to lib/http.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "model/sqs_digest.hpp"

namespace dlq::http::sqs {

// SQS's allowed characters: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF (the JSON
// parser already holds the text to valid UTF-8).
bool allowed_text(std::string_view s);

struct Attribute {
  dlq::sqs::MessageAttribute digest;  // binary_value decoded
  std::string binary_base64;          // as sent
};

// MessageAttributes as sent, validated: at most 10, SQS's name and DataType rules (SqsError).
std::vector<Attribute> message_attributes(const boost::json::object& in);
// Their size as SQS counts it against MaximumMessageSize.
std::size_t attributes_size(const std::vector<Attribute>& attrs);
// As SQS writes them: {"name": {"DataType", "StringValue" | "BinaryValue" (base64)}}; also how
// they are stored.
boost::json::object attributes_json(const std::vector<Attribute>& attrs);
// The stored JSON text (none: no attributes) read back.
std::vector<Attribute> stored_attributes(const std::optional<std::string>& text);
// MD5OfMessageAttributes.
std::string attributes_digest(const std::vector<Attribute>& attrs);

}  // namespace dlq::http::sqs

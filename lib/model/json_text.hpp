// JSON text written by hand where building a boost::json value first would only cost time: the
// hot answers (http/json_codec) and the log line.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace dlq {

// A JSON string literal, escaped as JSON requires; bytes above 0x7F pass through as they are.
void append_json_string(std::string& out, std::string_view s);

// A JSON value as text, the same bytes as boost::json::serialize but for fractions: plain
// decimals with the fewest digits that read back the same (0.5, not 5E-1). Not finite: null.
void append_json(std::string& out, const boost::json::value& v);
std::string json_text(const boost::json::value& v);

}  // namespace dlq

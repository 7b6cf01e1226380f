// JSON text written by hand where building a boost::json value first would only cost time: the
// hot answers (http/json_codec) and the log line.
#pragma once

#include <string>
#include <string_view>

namespace dlq {

// A JSON string literal, escaped as JSON requires; bytes above 0x7F pass through as they are.
void append_json_string(std::string& out, std::string_view s);

}  // namespace dlq

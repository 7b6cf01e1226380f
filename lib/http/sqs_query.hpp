// The SQS query protocol (API version 2012-11-05: form-urlencoded requests, XML answers, as older
// AWS SDKs and CLIs speak it) translated to and from the JSON 1.0 protocol's shapes, which the
// actions read and return (sqs_actions.hpp). Pure text in, text out. Private to lib/http.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

namespace dlq::http::sqs::query {

inline constexpr std::string_view kVersion = "2012-11-05";
inline constexpr std::string_view kNamespace = "http://queue.amazonaws.com/doc/2012-11-05/";

// A request the codec refuses, by its SQS error name: "MissingAction" or "InvalidParameterValue"
// (the caller maps the name to a query code with sqs::error_code, as for the actions' errors).
class CodecError : public std::runtime_error {
 public:
  CodecError(std::string name, const std::string& message)
      : std::runtime_error(message), name_(std::move(name)) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

struct Parsed {
  std::string action;
  std::string version;     // empty when the request gave none
  boost::json::object in;  // the JSON protocol's request members; no Action, no Version
};

// A form body (or a query string) as the action's JSON request: flattened lists, maps and batch
// entries become arrays and objects, the integer members numbers. Throws CodecError.
Parsed parse(std::string_view form);

// The XML answer to `action` (a known action name: it becomes element names) whose JSON answer
// is `out`. The actions that answer nothing have no <{Action}Result> element at all.
std::string result_xml(std::string_view action, const boost::json::object& out,
                       std::string_view request_id);

// <ErrorResponse>: Type Sender (the client's fault) or Receiver, `code` the query code.
std::string error_xml(bool sender, std::string_view code, std::string_view message,
                      std::string_view request_id);

// The code point at s[i], moving i past it; nullopt, i moved one byte, where no well-formed UTF-8
// sequence starts (overlong forms, surrogates and values past U+10FFFF are not well-formed).
std::optional<char32_t> next_code_point(std::string_view s, std::size_t& i);

// XML 1.0's Char production, which is also the set SQS allows in a message body or attribute:
// anything else cannot appear in a document, not even as a reference.
bool xml_char(char32_t c);

// `s` as XML character data: markup characters escaped, CR, LF and TAB as character references
// (a parser would otherwise normalise CR and CRLF to LF), and what XML 1.0 cannot carry (control
// characters, malformed UTF-8) as U+FFFD.
std::string xml_text(std::string_view s);

}  // namespace dlq::http::sqs::query

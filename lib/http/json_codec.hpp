// Domain structs as the JSON the contract fixes: the message object with its keys in contract
// order (the ten FT72 keys, then Part B's), attempt history entries, RFC 3339 timestamps.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/redaction.hpp"
#include "model/json_text.hpp"
#include "model/message.hpp"

namespace dlq::http {

// Who reads the answer: the producer or worker who holds the payload anyway (bytes as stored),
// or a person (secrets masked).
enum class Audience { owner, people };

struct MessageView {
  Audience audience = Audience::owner;
  bool with_lease_id = false;  // only claim answers carry the lease_id (and the effects after it)
};

// The message object as JSON text, written straight into `out` (no intermediate json::object:
// this is every hot path's answer).
void append_message(std::string& out, const Message& m, const MessageView& view,
                    const core::Redactor& redactor);
std::string message_text(const Message& m, const MessageView& view, const core::Redactor& redactor);
// The message object as a JSON value, for the answers built as values (a preview's sample):
// the text above read back, so that its members, order and bytes are the same.
boost::json::value message_value(const Message& m, const MessageView& view,
                                 const core::Redactor& redactor);
// `{"<key>": [m1, m2, ...], "count": n}` — lists and batch answers.
std::string message_list_text(std::string_view key, const std::vector<Message>& messages,
                              const MessageView& view, const core::Redactor& redactor);
boost::json::object attempt_json(const AttemptRecord& a, const core::Redactor& redactor);
// A recorded side effect: {"key","state","description","result","attempt","recorded_at",
// "resolved_by"}. For people the result is masked like a payload and the description like text.
boost::json::object effect_json(const Effect& e, Audience audience, const core::Redactor& redactor);
boost::json::value time_json(const std::optional<TimeMs>& t);
// A string (or an enum by its name) as JSON, or null.
template <class T>
boost::json::value optional_string(const std::optional<T>& v) {
  if (!v) return nullptr;
  if constexpr (std::is_same_v<T, std::string>) {
    return boost::json::value(*v);
  } else {
    return boost::json::value(to_string(*v));
  }
}
// Free text as people see it (error, stack, cause: secrets masked), or null.
boost::json::value masked_text(const std::optional<std::string>& text,
                               const core::Redactor& redactor);

}  // namespace dlq::http

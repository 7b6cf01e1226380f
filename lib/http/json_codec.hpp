// Domain structs as the JSON the contract fixes: the message object with its keys in contract
// order (the ten FT72 keys, then Part B's), attempt history entries, RFC 3339 timestamps.
#pragma once

#include <boost/json/object.hpp>

#include "core/redaction.hpp"
#include "model/message.hpp"

namespace dlq::http {

// Who reads the answer: the producer or worker who holds the payload anyway (bytes as stored),
// or a person (secrets masked).
enum class Audience { owner, people };

struct MessageView {
  Audience audience = Audience::owner;
  bool with_lease_id = false;  // only claim answers carry the lease_id
};

boost::json::object message_json(const Message& m, const MessageView& view,
                                 const core::Redactor& redactor);
boost::json::object attempt_json(const AttemptRecord& a, const core::Redactor& redactor);
boost::json::value time_json(const std::optional<TimeMs>& t);

}  // namespace dlq::http

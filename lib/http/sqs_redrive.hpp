// The SQS front's dead-letter queues (issue 39, docs/sqs.md): RedrivePolicy and
// RedriveAllowPolicy as given, checked and stored, and ARNs of this region and account. Private
// to lib/http.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace dlq::http::sqs {

// The ARN of a queue of this region and account, and the queue an ARN names (nullopt when it is
// not such an ARN).
std::string queue_arn(const Config& config, std::string_view name);
std::optional<std::string> arn_queue(const Config& config, std::string_view arn);

// A RedrivePolicy as given (`{"deadLetterTargetArn", "maxReceiveCount"}`, the count a number or a
// string, 1–1000) as stored: `{"deadLetterTargetArn":"…","maxReceiveCount":N}`; "" stays "" (it
// removes the policy). InvalidParameterValue when malformed. The target's existence is checked
// by the caller (Actions::check_redrive).
std::string redrive_policy_text(const std::string& given, const Config& config);
// A RedriveAllowPolicy likewise: `{"redrivePermission": "allowAll" | "denyAll" | "byQueue",
// "sourceQueueArns": [1–10 ARNs, byQueue only]}`.
std::string redrive_allow_policy_text(const std::string& given);
// Whether a stored RedriveAllowPolicy (or "" for none) lets the queue `source_arn` name its queue.
bool redrive_allowed(const std::string& allow_text, std::string_view source_arn);

}  // namespace dlq::http::sqs

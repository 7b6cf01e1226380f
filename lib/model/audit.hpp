// One entry of the audit log: who did what to which messages (or which filter), why, and what
// came of it. Written by the store in the transaction of the change it records.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/message.hpp"

namespace dlq {

// The actions the audit log knows (http-api.md C, "/audit").
inline constexpr std::string_view kAuditActions[] = {
    "replay",         "batch_replay", "batch_replay_pause", "batch_replay_resume",
    "batch_replay_cancel", "payload_edit", "dismiss",     "purge",
    "retention_purge", "incident_mute", "trial"};
bool valid_audit_action(std::string_view action);

struct AuditEntry {
  long long id = 0;  // assigned by the store
  TimeMs at = 0;
  std::optional<std::string> actor;
  std::string action;
  std::optional<std::string> queue;
  std::vector<MessageId> message_ids;
  std::optional<std::string> filter;   // JSON text
  std::optional<std::string> reason;
  std::optional<std::string> details;  // JSON text: the result, and for an edit both payloads
};

}  // namespace dlq

// The audit entries operators' actions write. Built inside the change's transaction (from the
// message as it was and as it becomes), so a change that fails writes no entry and no change
// commits without one. Payloads in an entry are redacted like every view for people.
#pragma once

#include <optional>
#include <string>

#include "core/redaction.hpp"
#include "core/transitions.hpp"
#include "model/audit.hpp"

namespace dlq::core {

// `replay`, or `payload_edit` when the replay carried a payload that differs from the stored one
// (then `details` holds both, redacted).
AuditEntry replay_audit(const Message& before, const Message& after, const ReplayInput& in,
                        const Redactor& redactor, TimeMs now);
AuditEntry dismiss_audit(const Message& before, const Message& after,
                         const std::optional<std::string>& reason,
                         const std::optional<std::string>& actor, TimeMs now);
// `incident_mute`: the mute `until` sets (none: un-mute) and the one it replaced.
AuditEntry incident_mute_audit(const std::string& fingerprint, std::optional<TimeMs> until,
                               std::optional<TimeMs> previous_until,
                               const std::optional<std::string>& reason,
                               const std::optional<std::string>& actor, TimeMs now);

}  // namespace dlq::core

// The cause of a failure as incidents group it (issue 32, docs/api-decisions.md "Fingerprints"):
// a title people read, with the parts that differ between occurrences masked (numbers, ids,
// addresses, quoted text), and a fingerprint: 16 lowercase hex digits of SHA-256 over the
// length-prefixed job type, error class, title and first stack frame. Pure functions, shared by
// the fail and lease-expiry transitions (core) and the backfill of older dead messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "model/message.hpp"

namespace dlq {

inline constexpr std::size_t kIncidentTitleMaxBytes = 256;
inline constexpr std::size_t kWorkerFingerprintMaxBytes = 128;
inline constexpr std::string_view kLeaseExpiredTitle = "lease expired";

// The title of an error text that Redactor::text has already masked for people: query strings,
// e-mails, UUIDs, IP addresses, hex runs, quoted strings and digit runs replaced by placeholders,
// whitespace runs collapsed; at most kIncidentTitleMaxBytes (cut on a UTF-8 boundary).
std::string incident_title(std::string_view redacted_error);

// The first line of `stack` that names a code location (`at name(`, `File "…", line`,
// `name.ext:123`), trimmed, its digit runs replaced by `<n>`; empty when no line does.
std::string stack_frame(std::string_view stack);

// The fingerprint dlqd computes for a failure.
std::string computed_fingerprint(const std::optional<std::string>& job_type,
                                 std::optional<ErrorClass> error_class, std::string_view title,
                                 std::string_view frame);
// A lease expiry: job type and "lease expired" alone.
std::string lease_expiry_fingerprint(const std::optional<std::string>& job_type);
// A death dlqd names itself with a fixed title (a lease expiry, an SQS RedrivePolicy's
// maxReceiveCount): job type and that title alone.
std::string titled_fingerprint(const std::optional<std::string>& job_type, std::string_view title);
// The title and last_error of a death at an SQS RedrivePolicy's maxReceiveCount (issue 39).
std::string receive_count_title(int receive_count);
// A worker's own value on `fail`: hashed with "worker" and the job type, so it never joins
// another job type's incident or a computed one.
std::string worker_fingerprint(const std::optional<std::string>& job_type, std::string_view value);

// A worker's value is [A-Za-z0-9_.:-]{1,128}: nullopt when it is, else the field error code
// ("too_long" past 128 bytes, otherwise "invalid").
std::optional<std::string_view> worker_fingerprint_error(std::string_view value);
// 16 lowercase hex digits: the form every fingerprint has on the wire.
bool valid_fingerprint(std::string_view text);

}  // namespace dlq

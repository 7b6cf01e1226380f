// Request bodies and query strings decoded into commands, with every validation rule of the
// contract: fields are checked in the order http-api.md documents them and every problem is
// reported, not just the first. JSON is the wire format, not HTTP: this knows no HTTP.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "core/transitions.hpp"
#include "model/error.hpp"
#include "store/store.hpp"

namespace dlq::core {

// Query parameters, percent-decoded, in the order received.
using QueryParams = std::vector<std::pair<std::string, std::string>>;
const std::string* query_value(const QueryParams& q, std::string_view key);

using dlq::valid_queue_name;  // model/message.hpp: one rule for config, paths and filters
// Positive integers of at most 18 digits (leading zeros allowed).
std::optional<MessageId> parse_message_id(std::string_view text);

// Free text from workers and operators: NUL bytes (which PostgreSQL cannot store) become U+FFFD.
std::string sanitize_text(std::string_view s);
// The first `max_bytes` bytes of `s`, cut back to a UTF-8 character boundary.
std::string truncate_utf8(std::string_view s, std::size_t max_bytes);

struct EnqueueRequest {
  store::NewMessage message;
  std::optional<TimeMs> delay_ms;  // resolved against `now` once X-Now is known
};
FieldErrors decode_enqueue(const boost::json::object& body, const Config& config,
                           const QueuePolicy& policy, EnqueueRequest& out,
                           const std::string& prefix = "");

FieldErrors decode_list(const QueryParams& query, store::ListParams& out);
// DELETE /queues/{queue}/messages: status (succeeded, dead or dismissed; required), before.
struct PurgeRequest {
  Status status = Status::succeeded;
  std::optional<TimeMs> before;  // default: now
};
FieldErrors decode_purge(const QueryParams& query, PurgeRequest& out);

// GET /audit: action, actor, queue, since, until, limit, after_id (in that order).
FieldErrors decode_audit(const QueryParams& query, store::AuditQuery& out);

struct ClaimRequest {
  ClaimCommand command;
  bool batch = false;  // `max` present: answer with "messages"
  // `ack` present (an array of at most 1,000 items, each checked on its own by the handler):
  // the answer carries "acked". Points into the decoded body.
  const boost::json::array* ack = nullptr;
};
FieldErrors decode_claim(const boost::json::object& body, const QueryParams& query,
                         ClaimRequest& out);

FieldErrors decode_succeed(const boost::json::object& body, std::optional<std::string>& lease_id);
FieldErrors decode_fail(const boost::json::object& body, FailInput& out);

struct ReplayRequest {
  ReplayInput input;
  std::optional<TimeMs> delay_ms;
  bool dry_run = false;
};
FieldErrors decode_replay(const boost::json::object& body, const Config& config,
                          ReplayRequest& out);

struct ExtendRequest {
  std::string lease_id;
  std::optional<TimeMs> duration_ms;
  std::optional<std::string> checkpoint;
};
FieldErrors decode_extend(const boost::json::object& body, ExtendRequest& out);

struct ReleaseRequest {
  std::string lease_id;
  TimeMs delay_ms = 0;
};
FieldErrors decode_release(const boost::json::object& body, ReleaseRequest& out);

FieldErrors decode_dismiss(const boost::json::object& body, std::optional<std::string>& reason);

}  // namespace dlq::core

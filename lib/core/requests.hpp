// Request bodies and query strings decoded into commands, with every validation rule of the
// contract: fields are checked in the order http-api.md documents them and every problem is
// reported, not just the first. JSON is the wire format, not HTTP: this knows no HTTP.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

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

// The most items one request may carry: batch enqueue's `messages`, POST /ack's `items` and a
// claim's `ack` (http-api.md B6, C) — one bound, so that the three cannot drift apart.
inline constexpr std::size_t kMaxBatchItems = 1000;
// A lease id as a worker sends it back, and an operator's reason: the same bounds wherever a
// request carries one.
inline constexpr std::size_t kMaxLeaseIdBytes = 256;
inline constexpr std::size_t kMaxReasonBytes = 1024;

struct EnqueueRequest {
  store::NewMessage message;
  std::optional<TimeMs> delay_ms;  // resolved against `now` once X-Now is known
};
FieldErrors decode_enqueue(const boost::json::object& body, const Config& config,
                           const QueuePolicy& policy, EnqueueRequest& out,
                           const std::string& prefix = "");
// POST /queues/{queue}/messages/batch: `messages`, 1 to kMaxBatchItems objects, each read as one
// enqueue whose problems are reported as messages[i].<field> (messages[i] when it is no object).
// `out` gets one request per item, in order.
FieldErrors decode_enqueue_batch(const boost::json::object& body, const Config& config,
                                 const QueuePolicy& policy, std::vector<EnqueueRequest>& out);

// One item of an acknowledgement list (POST /ack's `items`, a claim's `ack`), in the order sent.
// An item that cannot be an acknowledgement is refused on its own, its answer says why; the
// others go to the store together, so one bad item holds up no other.
struct AckSlot {
  const boost::json::value* id = nullptr;  // as sent, echoed in the answer; points into the body
  std::string_view refused;                // why it is no acknowledgement; empty when it is one
};
// POST /queues/{queue}/ack: `items`, 1 to kMaxBatchItems {id, lease_id} objects. `slots` has
// one slot per item; `acks` the acknowledgements of the slots not refused, in order. The slots
// point into `body`.
struct AckRequest {
  std::vector<AckSlot> slots;
  std::vector<AckItem> acks;
};
FieldErrors decode_ack_items(const boost::json::object& body, AckRequest& out);

// GET /queues/{q}/messages: status, limit (1..100, 20), offset, order (asc | desc), job_type
// (≤ 128 bytes), error_class, retrying (true: pending messages that failed or lost a lease),
// each problem a FieldError in that order.
FieldErrors decode_list(const QueryParams& query, store::ListParams& out);

// GET .../attempts: `limit` 1..kMaxHistoryPage (default kMaxHistoryPage), `after` (entries to
// skip) from 0.
inline constexpr long long kMaxHistoryPage = 1000;
FieldErrors decode_attempts(const QueryParams& query, store::HistoryPage& out);

// GET .../versions: `limit` 1..kMaxVersionsPage (default 20), `after` (a version) from 0.
inline constexpr long long kMaxVersionsPage = 100;
FieldErrors decode_versions(const QueryParams& query, VersionsPage& out);

// GET /queues: limit (1..1000, default 1000), after (a queue name), in that order.
struct QueuesQuery {
  int limit = 1000;
  std::optional<std::string> after;
};
FieldErrors decode_queues(const QueryParams& query, QueuesQuery& out);
// DELETE /queues/{queue}/messages: status (succeeded, dead or dismissed; required), before.
struct PurgeRequest {
  Status status = Status::succeeded;
  std::optional<TimeMs> before;  // default: now
};
FieldErrors decode_purge(const QueryParams& query, PurgeRequest& out);

// GET /audit: action, actor, queue, since, until, limit, after_id (in that order).
FieldErrors decode_audit(const QueryParams& query, store::AuditQuery& out);

struct ClaimRequest {
  ClaimCommand command;  // command.acks: the acknowledgements among `ack`'s items, in order
  bool batch = false;    // `max` present: answer with "messages"
  // `ack` present (an array of at most kMaxBatchItems items, each read as POST /ack reads its
  // items): one slot per item, and the answer carries "acked". The slots point into the body.
  std::optional<std::vector<AckSlot>> ack;
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

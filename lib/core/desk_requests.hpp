// Decoding the dead-letter desk's requests with every validation rule: the queries of GET /dlq,
// /dlq/replays and /dlq/hourly, the bodies of POST /dlq/replay and POST /dlq/dismiss (fields in
// the documented order, filter members reported as filter.<member>), and keyset paging.
#pragma once

#include <optional>
#include <string>

#include <boost/json/object.hpp>

#include "config/config.hpp"
#include "core/desk.hpp"
#include "core/requests.hpp"

namespace dlq::core {

// queue, job_type, error_class, dead_reason, fingerprint, since, until, limit, after_id.
FieldErrors decode_dead_list(const QueryParams& query, store::DeadListParams& out);
// limit (1..100, default 20), after_id.
FieldErrors decode_page(const QueryParams& query, int& limit, std::optional<long long>& after_id);

// GET /dlq/replays: limit and after_id (a page), message_id (runs that hold that message).
struct RunsQuery {
  int limit = 20;
  std::optional<long long> after_id;
  std::optional<long long> message_id;
};
FieldErrors decode_runs(const QueryParams& query, RunsQuery& out);

// GET /dlq/hourly: queue (every queue when absent), hours (1..168, default 24).
struct HourlyQuery {
  std::optional<std::string> queue;
  int hours = 24;
};
FieldErrors decode_dead_hourly(const QueryParams& query, HourlyQuery& out);

// GET /dlq/incidents: queue, job_type, error_class, since, until, sort (dead | last_dead_at),
// limit (1..100, default 20), cursor (a next_cursor of the same sort). `per_hour` is left to
// the caller (it depends on the request's time).
FieldErrors decode_incidents(const QueryParams& query, store::IncidentQuery& out);
// The cursor of the page that follows `last` in `sort`'s order (opaque to clients).
std::string incident_cursor(store::IncidentSort sort, const store::Incident& last);

struct BatchReplayRequest {
  bool dry_run = false;
  ReplayConfirmation confirmation;  // filter always; the rest when confirming
};
// filter, dry_run, confirm_token, delay_seconds, rate_per_second, keep_order, reason,
// acknowledge_side_effects. Neither dry_run: true nor a confirm_token -> confirm_token.
FieldErrors decode_batch_replay(const boost::json::object& body, const Config& config,
                                BatchReplayRequest& out);

struct BatchDismissRequest {
  bool dry_run = false;
  DismissConfirmation confirmation;
};
// filter, reason, dry_run, confirm_token.
FieldErrors decode_batch_dismiss(const boost::json::object& body, BatchDismissRequest& out);

// until (required, RFC 3339), reason (≤ 1,024 bytes).
FieldErrors decode_incident_mute(const boost::json::object& body, IncidentMuteRequest& out);

}  // namespace dlq::core

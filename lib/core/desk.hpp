// The dead-letter desk: the view of dead messages across queues, and batch replay and dismiss in
// two steps — a preview stored in the database (any node may confirm it), then a confirmation
// bound to the preview's filter and its exact id set. Confirmed replays become runs that the
// ReplayRunner (a leader-only task) paces; their outcome counts are computed when read.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "core/request_context.hpp"
#include "store/store.hpp"

namespace dlq::core {

class TaskHost;

// What a preview shows (http-api.md B3, C).
struct BatchPreviewView {
  long long matched = 0;
  std::vector<std::pair<std::optional<std::string>, long long>> by_job_type;
  std::vector<Message> sample;
  std::vector<std::string> needs_acknowledgement;  // matched job types configured idempotent: false
  // Replay previews: the matched messages at their max_replays, which the run will skip.
  std::optional<long long> skipped_max_replays;
  // Matched messages holding an effect left `started`: their side effect may have happened.
  long long uncertain_count = 0;
  std::vector<MessageId> uncertain_ids;  // the first store::kUncertainIds
  std::string confirm_token;
  TimeMs expires_at = 0;
};

struct ReplayConfirmation {
  store::DeadFilter filter;
  std::string confirm_token;
  TimeMs delay_ms = 60000;
  std::optional<double> rate_per_second;  // default: batch_replay.default_rate_per_second
  bool keep_order = false;
  std::optional<std::string> reason;
  bool acknowledge_side_effects = false;
};

struct DismissConfirmation {
  store::DeadFilter filter;
  std::string confirm_token;
  std::optional<std::string> reason;
};

struct DismissOutcome {
  long long dismissed = 0;
  long long skipped = 0;  // no longer dead when their batch came
};

// An SQS StartMessageMoveTask (issue 39): a run at once over the dead letters stamped with a
// dead-letter queue, keeping their order.
struct MoveTaskRequest {
  std::string dead_letter_queue;
  std::optional<std::string> destination_queue;  // must be the queue all of them came from
  std::optional<double> rate_per_second;         // default: batch_replay.default_rate_per_second
  std::function<std::string(long long run_id)> handle;  // the TaskHandle, audited
  std::string reason;                                   // the run's and the audit entry's
};

enum class RunAction { pause, resume, cancel };

// POST /dlq/incidents/{fingerprint}/mute: an `until` not after now un-mutes.
struct IncidentMuteRequest {
  TimeMs until = 0;
  std::optional<std::string> reason;
};

// Every incident entry shows this many hours of deaths, the last the current one; retention
// drops the incident_hours rows of earlier hours.
inline constexpr int kIncidentHours = 48;
// The first of those hours at `now`.
inline TimeMs incident_hours_from(TimeMs now) {
  return now / kMillisPerHour * kMillisPerHour - (kIncidentHours - 1) * kMillisPerHour;
}

// A rate or a delay as people write it: 10, not 1E1 (Boost.JSON writes every double in
// exponent form); fractions stay fractions.
boost::json::value json_number(double v);

// The canonical text of a filter: the members that are set, in the documented order, times in
// RFC 3339. A confirmation must send the filter its preview had.
std::string canonical_filter(const store::DeadFilter& f);

// Pause, resume or cancel as the desk decides it: the run as it must become and its audit entry,
// or invalid_state when the run's status does not allow the action. A resumed run's pacing
// starts afresh (no burst to catch up on the paused time).
Result<std::pair<store::ReplayRun, AuditEntry>> decide_run_change(const store::ReplayRun& run,
                                                                  RunAction action,
                                                                  const RequestContext& ctx);

class DeadLetterDesk {
 public:
  // `tasks`: where the replay runner lives, poked when a run is confirmed (may be null).
  DeadLetterDesk(store::Store& store, QueueService& service, const Config& config,
                 TaskHost* tasks);

  // GET /dlq: dead messages after `after_id`, in id order.
  // The page is fixed by its ids; each message is then read with find_dead when its turn to be
  // written comes, so an answer never holds the whole page.
  awaitable<std::vector<store::DeadRef>> list(const RequestContext& ctx,
                                              store::DeadListParams params);
  // The message as it is now, while it is still dead; none once it left the dead set (replayed,
  // dismissed, purged), and the page leaves it out.
  awaitable<std::optional<Message>> find_dead(const RequestContext& ctx, std::string queue,
                                              MessageId id);
  // kind: "replay" or "dismiss". Changes no message; stores the preview.
  awaitable<BatchPreviewView> preview(const RequestContext& ctx, std::string kind,
                                      store::DeadFilter filter);
  // preview_stale when the token is unknown, used, expired, for another filter, or when the
  // filter now matches another set; validation_failed without a needed acknowledgement.
  awaitable<Result<store::ReplayRun>> confirm_replay(const RequestContext& ctx,
                                                     ReplayConfirmation in);
  awaitable<Result<DismissOutcome>> confirm_dismiss(const RequestContext& ctx,
                                                    DismissConfirmation in);
  // invalid_state naming why: another move task of the queue is active, a job type is
  // configured idempotent: false (SQS cannot acknowledge side effects), or the destination is
  // not where all of the letters came from.
  awaitable<Result<store::ReplayRun>> start_move_task(const RequestContext& ctx,
                                                      MoveTaskRequest in);
  // The runs of a dead-letter queue's move tasks, newest first.
  awaitable<std::vector<store::ReplayRun>> move_tasks(const RequestContext& ctx,
                                                      std::string dead_letter_queue, int limit);

  awaitable<Result<store::ReplayRun>> run(const RequestContext& ctx, long long id);
  // Newest first; with `message_id`, only the runs that had that message in their id set.
  awaitable<std::vector<store::ReplayRun>> runs(const RequestContext& ctx, int limit,
                                                std::optional<long long> before_id,
                                                std::optional<long long> message_id);
  // GET /dlq/hourly: deaths in each of `hours` hours, the first starting at `from_hour`.
  awaitable<std::vector<long long>> dead_hourly(const RequestContext& ctx,
                                                std::optional<std::string> queue,
                                                TimeMs from_hour, int hours);
  awaitable<Result<store::ReplayRun>> change_run(const RequestContext& ctx, long long id,
                                                 RunAction action);
  // GET /dlq/incidents: a page of the incidents that have dead messages (store::IncidentQuery).
  // An entry shows its mute while it lasts (muted_until and mute_reason null once it is over).
  awaitable<std::vector<store::Incident>> incidents(const RequestContext& ctx,
                                                    store::IncidentQuery query);
  // GET /dlq/incidents/{fingerprint}: none when it has no dead message.
  awaitable<std::optional<store::Incident>> incident(const RequestContext& ctx,
                                                     std::string fingerprint, TimeMs from_hour,
                                                     int hours);
  // Audited (incident_mute); none for a fingerprint that never died.
  awaitable<std::optional<store::IncidentMuted>> mute_incident(const RequestContext& ctx,
                                                              std::string fingerprint,
                                                              IncidentMuteRequest in);

 private:
  store::Store& store_;
  QueueService& service_;
  const Config& config_;
  TaskHost* tasks_;
};

}  // namespace dlq::core

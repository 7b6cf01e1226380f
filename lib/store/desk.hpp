// The dead-letter desk's side of the Store: the filter of the view across queues, stored
// previews of batch actions, and replay runs with their fixed id lists. Plain data; the Store
// interface (store.hpp) names the operations.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/audit.hpp"
#include "model/error.hpp"
#include "model/message.hpp"
#include "model/run_status.hpp"
#include "store/change.hpp"

namespace dlq::store {

// Which dead messages: every member optional; `since`/`until` bound dead_at (inclusive).
struct DeadFilter {
  std::optional<std::string> queue;
  std::optional<std::string> job_type;
  std::optional<ErrorClass> error_class;
  std::optional<DeadReason> dead_reason;
  std::optional<TimeMs> since;
  std::optional<TimeMs> until;
  std::vector<MessageId> ids;  // batch actions: only these ids (empty: no restriction)
  std::optional<std::string> fingerprint;  // one incident's (16 lowercase hex digits)
  // Those stamped with one SQS dead-letter queue (issue 39).
  std::optional<std::string> dead_letter_queue;
};

// GET /dlq: dead messages in id order after `after_id`.
struct DeadListParams {
  DeadFilter filter;
  int limit = 20;
  std::optional<MessageId> after_id;
};

// A dead message as a page holds it until its turn to be written (GET /dlq reads each then).
struct DeadRef {
  MessageId id = 0;
  std::string queue;
};

// A batch action's matched set: ids in the order the action takes them (id order, or dead_at
// order for a replay that keeps the order), counts per job type, the first few messages.
struct DeadMatchParams {
  DeadFilter filter;
  bool dead_at_order = false;
  int sample = 5;
};
// How many matched messages share a queue, a job type and a replay count: what the core needs to
// count those at their max_replays (at most queues x job types x counts, not one per message).
struct ReplayTally {
  std::string queue;
  std::optional<std::string> job_type;
  int replay_count = 0;
  long long messages = 0;
};
struct DeadMatch {
  std::vector<MessageId> ids;
  std::vector<std::pair<std::optional<std::string>, long long>> by_job_type;  // by name
  std::vector<Message> sample;
  std::vector<ReplayTally> replays;  // by (queue, job type, replay count)
  // Matched messages holding a `started` effect (issue 36): how many, and the first ids.
  long long uncertain_count = 0;
  std::vector<MessageId> uncertain_ids;
};
inline constexpr std::size_t kUncertainIds = 100;

// A stored preview: any node may confirm it until it expires.
struct BatchPreview {
  std::string token_sha256;  // the confirm token is never stored
  std::string kind;          // "replay" | "dismiss"
  std::string filter;        // canonical JSON of the DeadFilter
  long long matched = 0;
  std::string ids_sha256;    // digest of the matched ids, in order
  std::vector<std::string> job_types;  // the job types among them
  TimeMs created_at = 0;
  TimeMs expires_at = 0;
  // Saving: batch_replay.max_previews, the most unexpired previews kept, this one included.
  long long keep = 100;
};

struct ReplayRun {
  long long id = 0;  // assigned by the store
  RunStatus status = RunStatus::scheduled;
  std::string filter;                // canonical JSON
  std::optional<std::string> actor;
  std::optional<std::string> reason;
  TimeMs created_at = 0;
  TimeMs start_at = 0;
  double delay_seconds = 0;
  double rate_per_second = 0;
  bool keep_order = false;
  long long matched = 0;
  long long next_seq = 0;  // items before it are done (replayed or skipped)
  long long replayed = 0;
  long long skipped = 0;
  // Pacing: `paced_count` items were released since `paced_from` (reset on resume).
  TimeMs paced_from = 0;
  long long paced_count = 0;
  TimeMs updated_at = 0;
  // Computed when read from the run's replayed messages as they are now.
  long long succeeded = 0;
  long long dead_again = 0;
  long long pending = 0;
  // The skipped items by why (not_dead, key_held, gone, max_replays, ...), by name.
  std::vector<std::pair<std::string, long long>> skipped_by_reason;
};

// Confirming a preview. In one transaction the store looks the preview up and reads the dead
// messages its filter matches now; `decide` (the core) says whether that is still the previewed
// set, and what to write: a run (replay) and the audit entry. On success the preview is used up.
struct ConfirmFacts {
  std::optional<BatchPreview> preview;  // none: no such token (or another kind)
  std::vector<MessageId> ids_now;       // matching now, in the action's order
};
struct ConfirmPlan {
  std::optional<ReplayRun> run;  // a batch replay creates one, with ids_now as its items
  std::optional<AuditEntry> audit;
};
struct ConfirmParams {
  std::string token_sha256;
  std::string kind;
  DeadFilter filter;
  bool dead_at_order = false;
  std::function<Result<ConfirmPlan>(const ConfirmFacts&)> decide;
};
struct Confirmed {
  std::vector<MessageId> ids;    // the set confirmed, in order
  std::optional<ReplayRun> run;  // as created
};

// A run started without a preview (an SQS StartMessageMoveTask, issue 39). In one transaction,
// one at a time across nodes: the dead messages `filter` matches now, their job types, and
// whether a scheduled, running or paused run has this very filter; `decide` says what to write
// (a run over ids_now and its audit entry) or refuses.
struct RunStartFacts {
  std::vector<MessageId> ids_now;
  std::vector<std::string> job_types;  // distinct, of those with one
  std::vector<std::string> queues;     // distinct
  bool active = false;
};
struct RunStartParams {
  DeadFilter filter;
  std::string canonical_filter;  // as runs store it
  bool dead_at_order = false;
  std::function<Result<ConfirmPlan>(const RunStartFacts&)> decide;
  // The audit entry's details also name the run by this (an SQS TaskHandle), when set.
  std::function<std::string(long long run_id)> handle;
};

// One paced step of a run, in one transaction: its items from `next_seq` on, each replayed by
// `decide` (or skipped and counted), until `max_replays` were replayed or `max_items` looked at;
// the run's progress commits with them. `expected_next_seq` fences a second leader: a run that
// moved on since is left alone (`fenced`). A run whose last item is done becomes `done`.
struct RunStepParams {
  long long run_id = 0;
  long long expected_next_seq = 0;
  long long max_replays = 0;  // the pacing allowance
  long long max_items = 0;    // skipped items count here, not against the pacing
  TimeMs now = 0;
  std::function<Result<Change>(const Message&, const Related&)> decide;
};
struct RunStep {
  bool fenced = false;
  ReplayRun run;                  // after the step
  std::vector<Message> replayed;  // as they became
};

// GET /dlq/replays (newest first, keyset) or the runs the leader drives (active_only: scheduled
// and running, oldest first, without outcome counts).
struct RunListParams {
  int limit = 20;
  std::optional<long long> before_id;
  bool active_only = false;
  std::optional<long long> message_id;  // only the runs whose id set holds this message
  std::optional<std::string> filter;    // only the runs of this canonical filter (move tasks)
};

// Pause, resume or cancel: `decide` (the core) turns the run as stored into the run as it must
// become plus its audit entry, or refuses.
struct RunChangeParams {
  long long run_id = 0;
  std::function<Result<std::pair<ReplayRun, AuditEntry>>(const ReplayRun&)> decide;
};

// Dismiss a batch (at most 1,000) of confirmed ids in one transaction, each by `decide`, with
// one audit entry for the batch, made by `audit` from what was dismissed and how many skipped.
struct DismissBatchParams {
  std::vector<MessageId> ids;
  std::function<Result<Change>(const Message&, const Related&)> decide;
  std::function<AuditEntry(const std::vector<MessageId>& dismissed, long long skipped)> audit;
};
struct DismissBatch {
  long long dismissed = 0;
  long long skipped = 0;
  std::vector<Message> messages;  // as they became
};

// ---- incidents: dead messages grouped by their fingerprint ----------------------------------

// GET /dlq/incidents: `dead` (most first) or `last_dead_at` (newest first), ties by fingerprint.
enum class IncidentSort { dead, last_dead_at };

// Where a page of incidents ends: the last entry's sort value (its dead count, or its
// last_dead_at) and fingerprint; the next page starts after it.
struct IncidentPosition {
  long long value = 0;
  std::string fingerprint;
};

// Incidents with dead messages, each filter optional: a queue among theirs, their job type or
// error class, some dead message's dead_at within [since, until].
struct IncidentQuery {
  std::optional<std::string> queue;
  std::optional<std::string> job_type;
  std::optional<ErrorClass> error_class;
  std::optional<TimeMs> since;
  std::optional<TimeMs> until;
  IncidentSort sort = IncidentSort::dead;
  int limit = 20;
  std::optional<IncidentPosition> after;
  TimeMs from_hour = 0;  // per_hour: `hours` counts from this hour on
  int hours = 48;
};

// One incident as GET /dlq/incidents shows it.
struct Incident {
  std::string fingerprint;
  std::string title;  // its first death's
  std::optional<ErrorClass> error_class;
  std::optional<std::string> job_type;
  std::vector<std::pair<std::string, long long>> queues;  // queue -> dead (none at 0), by name
  long long dead = 0;
  std::optional<TimeMs> first_dead_at;  // over its dead messages now
  std::optional<TimeMs> last_dead_at;
  std::vector<long long> per_hour;     // deaths per hour, the first at IncidentQuery::from_hour
  std::vector<MessageId> sample_ids;   // its highest dead ids, highest first (at most 3)
  long long dismissed = 0;  // since it began
  long long replayed = 0;   // since it began
  TimeMs last_death_at = 0;  // its latest death ever
  std::optional<TimeMs> muted_until;  // as stored: the desk shows it while it is ahead
  std::optional<std::string> mute_reason;
};

// POST /dlq/incidents/{fingerprint}/mute: `until` none un-mutes; `audit` makes the entry from
// the mute it replaces (none: not muted at `now`), written in the same transaction.
struct IncidentMuteParams {
  std::string fingerprint;
  std::optional<TimeMs> until;
  std::optional<std::string> reason;
  TimeMs now = 0;
  std::function<AuditEntry(std::optional<TimeMs> previous_until)> audit;
};
struct IncidentMuted {
  std::string fingerprint;
  std::optional<TimeMs> muted_until;
  std::optional<std::string> mute_reason;
};

// What an incident_opened or incident_grew event has told of an incident: 0 nothing, 1 that it
// opened, else the highest power of ten reached. A level is told once per opening.
inline long long incident_alert_level(long long dead) {
  if (dead <= 0) return 0;
  long long level = 1;
  while (dead / 10 >= level) level *= 10;
  return level;
}

// The leader's check (every 5 s): each incident whose dead reached a level above the one told is
// marked told at its level; `send` false (events off), muted ones, and those whose last event is
// younger than `sent_before` allows are marked without an event (throttled ones stay due and are
// not marked). At most `limit` a call, those with the oldest death first.
struct IncidentAlertParams {
  TimeMs now = 0;
  TimeMs sent_before = 0;  // now - alerts.min_interval_seconds
  bool send = false;
  int limit = 100;
  TimeMs from_hour = 0;  // of the entries sent
  int hours = 48;
};
// An event to send: incident_opened (threshold none) or incident_grew; the entry as it is.
struct IncidentAlert {
  std::optional<long long> threshold;
  Incident incident;
};

// /metrics: the incidents with dead messages, and the `top` with the most (by dead, then
// fingerprint), the dead of the others summed.
struct IncidentGauges {
  long long open = 0;
  std::vector<std::pair<std::string, long long>> top;  // fingerprint -> dead
  long long other_dead = 0;
};

// Retention of the incident tables: incident_hours rows of hours before `hours_before`, and
// incidents with no dead message whose last death came before `idle_before` (none: kept), at
// most `limit` of each, with their per-queue and per-hour rows.
struct IncidentPruneParams {
  TimeMs hours_before = 0;
  std::optional<TimeMs> idle_before;
  int limit = 1000;
};
struct IncidentsPruned {
  long long hours = 0;
  long long incidents = 0;
};

// A dead message stored before fingerprints (migration 012): what its death would have computed
// them from. The backfill (core/incident_backfill) reads these in id order.
struct UnprintedDead {
  MessageId id = 0;
  std::string queue;
  std::optional<std::string> job_type;
  std::optional<ErrorClass> error_class;
  std::optional<std::string> last_error;
  std::optional<DeadReason> dead_reason;
  TimeMs dead_at = 0;
  std::optional<std::string> stack;  // its last failed attempt's
};
// What the backfill writes on one of them, with what counts it into its incident.
struct PrintedDead {
  MessageId id = 0;
  std::string fingerprint;
  std::string title;
  std::optional<ErrorClass> incident_error_class;  // none for a lease expiry
  std::optional<std::string> job_type;
  std::string queue;
  TimeMs dead_at = 0;
};

}  // namespace dlq::store

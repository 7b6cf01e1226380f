// Trial runs (issue 36): an operator hands a dead message once to a worker that opted in, with
// the real handler, to see whether a replay would succeed before confirming it. Starting them
// (one message, or up to ten by id), reading one, a worker's answers under the trial's lease,
// and the leader's sweep of those that expired. A trial never changes its message: only its own
// row and, when it ends, one `trial` entry in the message's history.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "core/queue_service.hpp"
#include "core/request_context.hpp"
#include "core/task_host.hpp"
#include "core/transitions.hpp"
#include "model/trial.hpp"
#include "store/store.hpp"

namespace dlq::core {

struct TrialStartInput {
  std::optional<std::string> reason;
  std::optional<std::string> payload;  // an edited payload (`***` keeps the stored values)
  bool payload_is_json = true;
};

// How a worker ends (or extends) a running trial.
struct TrialAnswer {
  enum class Kind { succeed, fail, extend };
  Kind kind = Kind::succeed;
  std::string lease_id;
  std::vector<WouldEffect> would_effects;
  FailInput failure;        // fail
  TimeMs lease_until = 0;   // extend
};

// Pure rules, run inside the store's transaction.
// Only a dead message with a job type can be tried (invalid_state); an open trial is answered
// again. `payload`: the edit with the stored values merged back (the caller masks and checks).
Result<Trial> decide_trial_start(const Message& m, const std::optional<Trial>& open,
                                 const TrialStartInput& in, const std::optional<std::string>& payload,
                                 const std::optional<std::string>& actor, TimeMs now);
// The answer of the worker holding the trial's lease: lease_lost unless it is running under it,
// or the same end again under the lease it ended with (a resend: the trial as it is).
Result<store::TrialChange> answer_trial(const Trial& t, const Message& m, const TrialAnswer& a,
                                        TimeMs now);
// The sweep: a running trial whose lease ran out, or one nobody claimed in time.
store::TrialChange expire_trial(const Trial& t, const Message* m, TimeMs now);
// The history entry of a trial that ended: outcome `trial`, `attempt` the attempts so far.
AttemptRecord trial_entry(const Trial& ended, const Message& m);

class TrialDesk {
 public:
  TrialDesk(store::Store& store, QueueService& service, const Config& config);

  // 201 (created) or 200 (the open one); the audit entry `trial` with the new one.
  boost::asio::awaitable<Result<store::TrialStarted>> start(const RequestContext& ctx,
                                                            std::string queue, MessageId id,
                                                            TrialStartInput in);
  // POST /dlq/trials: every id checked first (422 `ids[i]`: not_found, invalid), one audit entry.
  boost::asio::awaitable<Result<std::vector<store::TrialStarted>>> start_many(
      const RequestContext& ctx, std::vector<MessageId> ids, std::optional<std::string> reason);
  boost::asio::awaitable<Result<Trial>> find(const RequestContext& ctx, std::string queue,
                                             MessageId id, long long trial_id);
  boost::asio::awaitable<Result<Trial>> answer(const RequestContext& ctx, std::string queue,
                                               MessageId id, long long trial_id, TrialAnswer a);
  // The leader's sweep (every second): how many trials it ended.
  boost::asio::awaitable<std::size_t> expire(TimeMs now);

 private:
  // Claims that asked for trials of the started ones' queues and types look again.
  void wake(const std::vector<store::TrialStarted>& started);

  store::Store& store_;
  QueueService& service_;
  const Config& config_;
};

// The leader-only sweep that ends expired trials, every second.
TaskSpec trial_expiry_task(TrialDesk& desk);

}  // namespace dlq::core

// QueueService: each operation as one store call, then what the change means for waiting claims
// (the scheduler) and for subscribers (events).
#include "core/queue_service.hpp"

#include <algorithm>

#include "core/audit.hpp"
#include "core/lease_tokens.hpp"
#include "model/json_text.hpp"
#include "model/logging.hpp"

namespace dlq::core {

namespace {

constexpr int kReapBatch = 100;

}  // namespace

QueueService::QueueService(boost::asio::any_io_executor executor, store::Store& store,
                           const Config& config, const Clock& clock, UnitRandom random)
    : store_(store),
      config_(config),
      clock_(clock),
      random_(std::move(random)),
      redactor_(config.redaction.fields),
      scheduler_(std::move(executor), store, clock,
                 [this](TimeMs now) { return reap_expired(now); }) {}

QueueService::~QueueService() = default;

void QueueService::start() { scheduler_.start(); }

void QueueService::shutdown() { scheduler_.shutdown(); }

void QueueService::clock_moved() { scheduler_.clock_moved(); }

void QueueService::publish(EventKind kind, const Message& m, TimeMs at,
                           std::optional<std::string_view> actor, ReplayMode mode) {
  if (events_.empty()) return;
  Event e;
  e.kind = kind;
  e.queue = m.queue;
  e.at = at;
  e.message = &m;
  e.mode = mode;
  e.actor = actor;
  events_.publish(e);
}

void QueueService::publish_count(EventKind kind, std::string_view queue, std::int64_t count,
                                 TimeMs at, std::optional<Status> status, bool by_retention) {
  if (events_.empty() || count == 0) return;
  Event e;
  e.kind = kind;
  e.queue = queue;
  e.at = at;
  e.count = count;
  e.status = status;
  e.by_retention = by_retention;
  events_.publish(e);
}

void QueueService::publish_if_dead(const Message& m, TimeMs now,
                                   std::optional<std::string_view> actor) {
  if (m.status == Status::dead) publish(EventKind::dead_lettered, m, m.dead_at.value_or(now), actor);
}

// ---- operations ------------------------------------------------------------------------------

awaitable<Result<std::vector<store::Inserted>>> QueueService::enqueue(
    const RequestContext& ctx, std::string queue, std::vector<store::NewMessage> messages) {
  store::InsertParams params{std::move(queue), std::move(messages), ctx.now,
                             config_.limits.max_queues};
  auto result = co_await store_.messages_insert(std::move(params));
  if (!result) co_return result;
  auto& inserted = *result;
  std::int64_t created = 0;
  for (const auto& item : inserted) {
    if (!item.created) continue;
    scheduler_.changed(item.message, ctx.now);
    ++created;
  }
  if (!inserted.empty()) publish_count(EventKind::enqueued, inserted.front().message.queue, created, ctx.now);
  co_return result;
}

awaitable<std::vector<Message>> QueueService::list(const RequestContext&, store::ListParams params) {
  co_return co_await store_.messages_list(std::move(params));
}

awaitable<std::vector<MessageId>> QueueService::list_ids(const RequestContext&,
                                                         store::ListParams params) {
  co_return co_await store_.messages_list_ids(std::move(params));
}

awaitable<Result<Message>> QueueService::find(const RequestContext&, std::string queue,
                                              MessageId id) {
  auto found = co_await store_.message_find(std::move(queue), id);
  if (!found) co_return Error(Errc::message_not_found, "message not found");
  co_return std::move(*found);
}

awaitable<std::optional<Message>> QueueService::find_leased(const RequestContext&,
                                                            std::string queue, MessageId id,
                                                            std::string lease_id) {
  auto found = co_await store_.message_find(std::move(queue), id);
  if (!found || !holds_lease(*found, lease_id)) co_return std::nullopt;
  // A claim's messages carry their effects (the store attached those of the messages it kept).
  if (found->effect_count > 0) found->effects = co_await store_.effects_of(id);
  co_return std::move(*found);
}

store::ClaimParams QueueService::claim_params(const ClaimCommand& cmd, TimeMs at) const {
  // A VisibilityTimeout stored by the SQS front wins over queues.<q>.visibility_timeout.
  TimeMs visibility = cmd.visibility_ms.value_or(sqs_queues_.visibility_ms(cmd.queue).value_or(
      seconds_to_ms(config_.policy_for(cmd.queue).visibility_timeout)));
  return {cmd.queue,        at,          cmd.max,           at + visibility,
          new_lease_token(), cmd.worker, cmd.job_types,     kClaimPayloadBytes,
          cmd.worker_version, cmd.trials};
}

awaitable<ClaimOutcome> QueueService::claim(const RequestContext& ctx, ClaimCommand cmd) {
  // While the claim waits, watch the client: one that leaves ends the wait (take() starts the
  // watch when the claim is about to wait; a claim that finds work at once never needs it).
  ClientWatch* watch = cmd.wait_ms > 0 ? ctx.client : nullptr;
  co_await refresh_sqs_queues(clock_.now());
  auto cancel = std::make_shared<ClaimCancel>();
  std::vector<Message> claimed;
  std::vector<Result<Message>> acked;
  std::exception_ptr fault;
  try {
    claimed = co_await take(ctx, cmd, cancel, watch, acked);
  } catch (const std::exception& e) {
    // The acknowledgements committed with the first attempt, and a later one of the waiting
    // claim failed (the database went away): answer what did happen, the acks and no message.
    // A 5xx would tell the worker that nothing changed, and it would do the work again.
    if (!cmd.acks.empty() && acked.size() == cmd.acks.size()) {
      log::warn("claim ended early", {{"queue", cmd.queue}, {"request_id", ctx.request_id},
                                      {"error", e.what()}});
      claimed.clear();
    } else {
      fault = std::current_exception();
    }
  } catch (...) {
    fault = std::current_exception();
  }
  if (watch) co_await watch->stop();
  if (fault) std::rethrow_exception(fault);

  if (watch && watch->gone()) {
    // Nobody will read the answer: give the messages back instead of losing them to the lease
    // (a trial is left to its lease: it expires).
    for (const auto& m : claimed) {
      if (!m.trial_id) co_await release(ctx, m.queue, m.id, m.lease_id.value_or(""), 0);
    }
    co_return ClaimOutcome{{}, std::move(acked), true};
  }
  publish_count(EventKind::claimed, cmd.queue, static_cast<std::int64_t>(claimed.size()), ctx.now);
  co_return ClaimOutcome{std::move(claimed), std::move(acked), false};
}

awaitable<std::vector<Message>> QueueService::take(const RequestContext& ctx,
                                                   const ClaimCommand& cmd,
                                                   std::shared_ptr<ClaimCancel> cancel,
                                                   ClientWatch* watch,
                                                   std::vector<Result<Message>>& acked) {
  // The common case under load: there is work. Take it without a trip through the scheduler's
  // strand; only a claim that found nothing and may wait goes there to park. Acknowledgements
  // commit with that first attempt, so a claim that parks has already applied them.
  if (!scheduler_.stopping()) {
    std::vector<Message> claimed;
    if (cmd.acks.empty()) {
      claimed = co_await store_.messages_claim(claim_params(cmd, ctx.now));
    } else {
      auto resent = std::make_shared<std::vector<char>>(cmd.acks.size(), 0);
      auto both = co_await store_.messages_ack_and_claim(
          ack_updates(ctx, cmd.queue, cmd.acks, resent), claim_params(cmd, ctx.now));
      acked = std::move(both.acked);
      publish_acked(ctx, acked, *resent);
      claimed = std::move(both.claimed);
    }
    if (!claimed.empty() || cmd.wait_ms == 0) {
      scheduler_.leased(claimed);
      co_return claimed;
    }
  } else {
    // Shutting down: no new leases, but the acknowledgements still count.
    if (!cmd.acks.empty()) acked = co_await succeed_many(ctx, cmd.queue, cmd.acks);
    if (cmd.wait_ms == 0) co_return std::vector<Message>{};
  }
  // A pinned X-Now runs on from its instant as the clock moves. Without one, every attempt reads
  // the clock: a woken claim must look at the instant it was woken for, not at the (earlier)
  // instant its request arrived, or a retry that just became due would be missed.
  const TimeMs offset = ctx.pinned_now ? ctx.now - clock_.now() : 0;
  auto attempt = [this, cmd, offset](TimeMs clock_now) {
    return store_.messages_claim(claim_params(cmd, clock_now + offset));
  };
  // Watching costs a read, a coroutine and a cancel per claim: only a claim that waits pays it.
  if (watch) watch->start([this, cancel] { scheduler_.cancel(cancel); });
  co_return co_await scheduler_.wait_for_work(cmd.queue, cmd.job_types, cmd.wait_ms,
                                              std::move(attempt), std::move(cancel), cmd.trials);
}

awaitable<Result<Message>> QueueService::update(std::string queue, MessageId id,
                                                store::Decide decide, bool load_key_holders) {
  store::UpdateParams params{std::move(queue), id, std::move(decide), load_key_holders, false};
  co_return co_await store_.message_update(std::move(params));
}

awaitable<Result<Message>> QueueService::succeed(const RequestContext& ctx, std::string queue,
                                                 MessageId id, std::optional<std::string> lease_id) {
  store::Decide decide = [lease_id, now = ctx.now](const Message& m, const store::Related&) {
    return core::succeed(m, lease_id, now);
  };
  auto result = co_await update(std::move(queue), id, std::move(decide));
  if (result) publish(EventKind::succeeded, *result, ctx.now, std::nullopt);
  co_return result;
}

awaitable<Result<Message>> QueueService::fail(const RequestContext& ctx, std::string queue,
                                              MessageId id, FailInput in) {
  const QueuePolicy& policy = config_.policy_for(queue);
  describe_failure(redactor_, in);
  auto sqs = sqs_queues_.find(queue);
  store::Decide decide = [in = std::move(in), &policy, now = ctx.now, sqs, this](
                             const Message& m, const store::Related&) {
    auto change = core::fail(m, in, policy, now, random_);
    if (change) stamp_dead_letter_queue(*change, sqs ? &*sqs : nullptr);
    return change;
  };
  auto result = co_await update(std::move(queue), id, std::move(decide));
  if (result) {
    scheduler_.changed(*result, ctx.now);
    publish(EventKind::failed, *result, ctx.now, std::nullopt);
    publish_if_dead(*result, ctx.now, std::nullopt);
  }
  co_return result;
}

awaitable<Result<Message>> QueueService::replay(const RequestContext& ctx, std::string queue,
                                                MessageId id, ReplayInput in, bool dry_run) {
  in.actor = ctx.actor;
  const bool resolves_effects = !in.resolve_effects.empty();  // read before `in` moves
  store::Decide decide = [in = std::move(in), now = ctx.now, this](const Message& m,
                                                                    const store::Related& r) {
    ReplayInput effective = in;
    effective.max_replays = config_.max_replays_for(m.queue, m.job_type);
    if (in.payload && in.payload_is_json) {
      if (auto bad = edited_payload_not_json(m.payload, *in.payload)) {
        return Result<store::Change>(*bad);
      }
    }
    if (in.payload) {
      // Masks the operator left in place keep the original values.
      effective.payload = redactor_.merge_masks(m.payload, *in.payload);
    }
    auto change = core::replay(m, r, effective, now);
    if (change) change->audit = replay_audit(m, change->next, effective, redactor_, now);
    return change;
  };
  store::UpdateParams params{std::move(queue), id, std::move(decide), true, dry_run};
  params.load_effects = resolves_effects;
  auto result = co_await store_.message_update(std::move(params));
  if (result && !dry_run) {
    scheduler_.changed(*result, ctx.now);
    publish(EventKind::replayed, *result, ctx.now, ctx.actor);
  }
  co_return result;
}

std::vector<store::UpdateParams> QueueService::ack_updates(
    const RequestContext& ctx, const std::string& queue, std::vector<AckItem> items,
    std::shared_ptr<std::vector<char>> resent) const {
  std::vector<store::UpdateParams> updates;
  updates.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    // The flag is written on the store thread before the job completes, read after the await.
    store::Decide decide = [lease_id = std::move(items[i].lease_id), now = ctx.now, resent, i](
                               const Message& m, const store::Related&) {
      auto change = core::succeed(m, lease_id, now, true);
      (*resent)[i] = change && change->unchanged;
      return change;
    };
    updates.push_back({queue, items[i].id, std::move(decide), false, false});
  }
  return updates;
}

void QueueService::publish_acked(const RequestContext& ctx,
                                 const std::vector<Result<Message>>& acked,
                                 const std::vector<char>& resent) {
  for (std::size_t i = 0; i < acked.size(); ++i) {
    if (acked[i] && !resent.at(i)) publish(EventKind::succeeded, *acked[i], ctx.now, std::nullopt);
  }
}

awaitable<std::vector<Result<Message>>> QueueService::succeed_many(const RequestContext& ctx,
                                                                  std::string queue,
                                                                  std::vector<AckItem> items) {
  auto resent = std::make_shared<std::vector<char>>(items.size(), 0);
  auto results =
      co_await store_.messages_update(ack_updates(ctx, queue, std::move(items), resent));
  publish_acked(ctx, results, *resent);
  co_return results;
}

awaitable<Result<Message>> QueueService::extend(const RequestContext& ctx, std::string queue,
                                                MessageId id, std::string lease_id,
                                                std::optional<TimeMs> duration_ms,
                                                std::optional<std::string> checkpoint) {
  TimeMs duration =
      duration_ms.value_or(seconds_to_ms(config_.policy_for(queue).visibility_timeout));
  store::Decide decide = [lease_id = std::move(lease_id), expires = ctx.now + duration,
                          checkpoint = std::move(checkpoint),
                          now = ctx.now](const Message& m, const store::Related&) {
    return core::extend(m, lease_id, expires, checkpoint, now);
  };
  co_return co_await update(std::move(queue), id, std::move(decide));
}

awaitable<Result<Message>> QueueService::release(const RequestContext& ctx, std::string queue,
                                                 MessageId id, std::string lease_id,
                                                 TimeMs delay_ms) {
  std::optional<TimeMs> due =
      delay_ms > 0 ? std::optional<TimeMs>(ctx.now + delay_ms) : std::nullopt;
  auto sqs = sqs_queues_.find(queue);
  store::Decide decide = [lease_id = std::move(lease_id), due, now = ctx.now, sqs](
                             const Message& m, const store::Related& related) {
    return core::release(m, related, lease_id, due, now, sqs ? &*sqs : nullptr);
  };
  store::UpdateParams params;
  params.queue = std::move(queue);
  params.id = id;
  params.decide = std::move(decide);
  params.load_last_entry = true;  // a release folds into a release before it
  auto result = co_await store_.message_update(std::move(params));
  if (result) {
    scheduler_.changed(*result, ctx.now);
    publish_if_dead(*result, ctx.now, std::nullopt);  // at an SQS RedrivePolicy's maxReceiveCount
  }
  co_return result;
}

awaitable<Result<Message>> QueueService::dismiss(const RequestContext& ctx, std::string queue,
                                                 MessageId id, std::optional<std::string> reason) {
  store::Decide decide = [reason = std::move(reason), actor = ctx.actor, now = ctx.now](
                             const Message& m, const store::Related&) {
    auto change = core::dismiss(m, reason, actor, now);
    if (change) change->audit = dismiss_audit(m, change->next, reason, actor, now);
    return change;
  };
  auto result = co_await update(std::move(queue), id, std::move(decide));
  if (result) publish(EventKind::dismissed, *result, ctx.now, ctx.actor);
  co_return result;
}

awaitable<Result<HistoryView>> QueueService::attempts(const RequestContext&, std::string queue,
                                                      MessageId id, store::HistoryPage page) {
  auto history = co_await store_.message_history(std::move(queue), id, page);
  if (!history) co_return Error(Errc::message_not_found, "message not found");
  HistoryView view;
  view.entries = std::move(history->attempts);
  view.effects = std::move(history->effects);
  // Positions count from 0; the attempt under way stands after every stored entry. An entry
  // stored between the count and the page's read must not hide one the page does hold.
  const long long shown = static_cast<long long>(view.entries.size());
  const long long stored =
      shown > 0 ? std::max(history->stored, page.after + shown) : history->stored;
  const bool under_way = history->message.status == Status::processing;
  if (under_way && page.after <= stored && stored < page.after + page.limit) {
    AttemptRecord current;  // claimed, not finished
    current.message_id = id;
    current.attempt = history->message.attempts;
    current.claimed_at = history->message.last_attempt_at;
    current.worker = history->message.worker;
    current.worker_version = history->message.worker_version;
    current.life = history->message.replay_count;
    current.under_way = true;
    view.entries.push_back(std::move(current));
  }
  const long long total = stored + (under_way ? 1 : 0);
  const long long end = page.after + static_cast<long long>(view.entries.size());
  if (end < total) view.next_after = end;
  co_return view;
}

awaitable<Result<store::EffectOutcome>> QueueService::record_effect(const RequestContext& ctx,
                                                                    std::string queue,
                                                                    MessageId id, EffectInput in) {
  store::EffectParams p;
  p.queue = std::move(queue);
  p.id = id;
  p.key = in.key;
  p.decide = [in = std::move(in), max = config_.limits.max_effects_per_message, now = ctx.now](
                 const Message& m, const std::optional<Effect>& existing) {
    return core::record_effect(m, existing, in, max, now);
  };
  co_return co_await store_.effect_record(std::move(p));
}

awaitable<Result<VersionsView>> QueueService::versions(const RequestContext&, std::string queue,
                                                       MessageId id, VersionsPage page) {
  const EditsWindow window = edits_window(page);
  auto read = co_await store_.message_edits(std::move(queue), id, window.from, window.count);
  if (!read) co_return Error(Errc::message_not_found, "message not found");
  co_return versions_page(*read, page);
}

awaitable<std::vector<long long>> QueueService::audit_ids(const RequestContext&,
                                                          store::AuditQuery query) {
  co_return co_await store_.audit_ids(std::move(query));
}

awaitable<std::optional<AuditEntry>> QueueService::audit_entry(const RequestContext&,
                                                               long long id) {
  co_return co_await store_.audit_find(id);
}

awaitable<std::vector<store::QueueStats>> QueueService::queues_page(const RequestContext& ctx,
                                                                    std::optional<std::string> after,
                                                                    int limit) {
  // Built in a local: g++ 12 mishandles temporaries holding strings inside co_await.
  store::QueuePageParams params{std::move(after), limit, ctx.now};
  co_return co_await store_.queues_page(std::move(params));
}

awaitable<std::vector<store::QueueStats>> QueueService::stats(const RequestContext& ctx,
                                                             std::optional<std::string> queue) {
  co_return co_await store_.queue_stats(std::move(queue), ctx.now);
}

awaitable<bool> QueueService::ready() {
  try {
    co_return co_await store_.ping();
  } catch (const std::exception&) {
    co_return false;
  }
}

// ---- the lease reaper ------------------------------------------------------------------------

awaitable<void> QueueService::refresh_sqs_queues(TimeMs clock_now) {
  if (!sqs_queues_.begin_reload(clock_now)) co_return;
  std::vector<store::SqsQueueRow> rows;
  store::SqsQueuePage page;
  page.limit = 1000;
  for (;;) {
    auto got = co_await store_.sqs_queues_page(page);
    bool last = static_cast<int>(got.size()) < page.limit;
    if (!got.empty()) page.after = got.back().name;
    rows.insert(rows.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
    if (last) break;
  }
  sqs_queues_.replace(rows, clock_now);
  if (!shadow_warned_.exchange(true)) {
    for (const auto& row : rows) {
      if (config_.queues.contains(row.name) && sqs_queues_.visibility_ms(row.name)) {
        log::warn("queues.<q>.visibility_timeout is shadowed by the SQS queue's VisibilityTimeout",
                  {{"key", "queues." + row.name + ".visibility_timeout"}, {"queue", row.name}});
      }
    }
  }
}

awaitable<std::vector<Message>> QueueService::reap_expired(TimeMs now) {
  co_await refresh_sqs_queues(clock_.now());
  std::vector<Message> all;
  for (;;) {
    store::ReapParams params;
    params.now = now;
    params.limit = kReapBatch;
    params.decide = [this, now](const Message& m) {
      auto sqs = sqs_queues_.find(m.queue);
      return expire_lease(m, config_.policy_for(m.queue), now, random_, sqs ? &*sqs : nullptr);
    };
    auto reaped = co_await store_.messages_reap_expired(std::move(params));
    for (const auto& m : reaped) {
      log::info("lease expired", {{"queue", m.queue},
                                  {"id", std::to_string(m.id)},
                                  {"status", std::string(to_string(m.status))}});
      publish(EventKind::lease_expired, m, now, std::nullopt);
      publish_if_dead(m, now, std::nullopt);
    }
    bool more = static_cast<int>(reaped.size()) >= kReapBatch;
    all.insert(all.end(), std::make_move_iterator(reaped.begin()),
               std::make_move_iterator(reaped.end()));
    if (!more) break;
  }
  co_return all;
}

}  // namespace dlq::core

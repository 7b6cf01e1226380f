// SqlStore: opens the database and the store threads, and bridges each operation on messages,
// effects, trials, audit and leadership to them (the desk's side: sql_store_desk.cpp).
#include "store/sql_store.hpp"

#include <cstdio>
#include <random>

#include <soci/soci.h>

#include "store/connection.hpp"
#include "store/migrations.hpp"
#include "store/statement_watch.hpp"
#include "store/entity_sql.hpp"
#include "store/pg_leader.hpp"
#include "store/pg_listener.hpp"
#include "store/sql_store_jobs.hpp"
#include "store/workers.hpp"

namespace dlq::store {

namespace {

// A random id for this process, so its listener can tell its own notifications from others'.
std::string make_node_id() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned long long> dist;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", dist(rd));
  return buf;
}

// A claim's messages carry their recorded side effects: read for those that hold any and whose
// payload came back (a withheld one is read again by id, its effects with it: find_leased).
void attach_effects(EntitySql& sql, std::vector<Message>& claimed) {
  for (Message& m : claimed) {
    if (m.effect_count > 0 && !m.payload_withheld) m.effects = sql.effects.of(m.id);
  }
}

// A claim: with "trials", the queue's pending trials first, each as its message under the
// trial's lease (a trial whose message is gone is left to expire), then ordinary messages in the
// slots left; every message with its effects.
std::vector<Message> claim_with_trials(EntitySql& sql, const ClaimParams& p) {
  std::vector<Message> out;
  if (p.trials) {
    for (const Trial& t : sql.trials.claim(p)) {
      auto m = sql.reads.find(t.queue, t.message_id);
      if (!m) continue;
      if (t.payload) m->payload = *t.payload;
      m->lease_id = t.lease_id;
      m->lease_expires_at = t.lease_expires_at;
      m->trial_id = t.id;
      out.push_back(std::move(*m));
    }
  }
  if (out.empty()) {
    out = sql.claims.claim(p);  // the common case: no trial taken, the claim as it was
  } else if (static_cast<int>(out.size()) < p.max) {
    ClaimParams rest = p;
    rest.max = p.max - static_cast<int>(out.size());
    for (auto& m : sql.claims.claim(rest)) out.push_back(std::move(m));
  }
  attach_effects(sql, out);
  return out;
}

// StoreJob::prepare of a job that reads and changes message rows only through MessageSql: the
// messages it names here (none for an enqueue or a claim made at the group's end) the group
// locks in one statement.
auto changes_only(std::vector<MessageId> ids) {
  return [ids = std::move(ids)](EntitySql& sql) {
    for (MessageId id : ids) sql.messages.lock_later(id);
    return true;
  };
}

std::vector<MessageId> ids_of(const std::vector<UpdateParams>& items) {
  std::vector<MessageId> ids;
  ids.reserve(items.size());
  for (const auto& item : items) ids.push_back(item.id);
  return ids;
}

// A claim made with its group's (ClaimSql::claim_later), with its messages' effects.
std::vector<Message> take_claim(EntitySql& sql) {
  auto claimed = sql.claims.take();
  attach_effects(sql, claimed);
  return claimed;
}

}  // namespace

SqlStore::SqlStore(SqlStoreOptions options) : options_(std::move(options)), node_(make_node_id()) {
  ConnectionOptions co{options_.target, options_.sqlite_synchronous, options_.statement_timeout_ms,
                       options_.sqlite_max_page_count, options_.sqlite_faults, nullptr};
  if (options_.target.backend == DatabaseTarget::Backend::postgresql) {
    // A job may run a second longer than one statement may: past that the server has gone silent.
    co.watch = std::make_shared<StatementWatch>(
        std::chrono::milliseconds(options_.statement_timeout_ms + 1000));
  }
  auto first = std::make_unique<Connection>(co);
  try {
    apply_migrations(*first);
  } catch (const soci::soci_error&) {
    rethrow_database_error("migrating the database", first->sqlite_path());  // names the file
  }
  if (options_.target.backend == DatabaseTarget::Backend::sqlite) {
    warn_if_database_shared(options_.target.sqlite_path);
    // SOCI's SQLite backend builds a function-local static type table the first time it
    // describes a column. Build it here, before the store threads exist: ThreadSanitizer cannot
    // see the guard's fast path inside the uninstrumented library and reported a reader using
    // the table that the writer had built.
    soci::row warm;
    first->session() << "SELECT 1", soci::into(warm);
  }
  SessionFactory sessions{[co] { return std::make_unique<Connection>(co); }, node_};
  bool sqlite = options_.target.backend == DatabaseTarget::Backend::sqlite;
  int writers = sqlite ? 1 : std::max(1, options_.pool_size / 2);
  writer_ = std::make_unique<Writer>(sessions, std::move(first),
                                     static_cast<std::size_t>(options_.group_commit_max_batch),
                                     std::chrono::microseconds(options_.group_commit_max_wait_us),
                                     writers, options_.answer_before_commit);
  readers_ = std::make_unique<Readers>(sessions, std::max(1, options_.pool_size - writers));
}

SqlStore::~SqlStore() { close(); }

void SqlStore::close() {
  if (leader_) leader_->stop();
  if (listener_) listener_->stop();
  if (writer_) writer_->stop();
  if (readers_) readers_->stop();
}

WriteStats SqlStore::write_stats() const {
  const WriterStats& s = writer_->stats();
  return {s.commits.load(),
          s.jobs.load(),
          s.commit_seconds.snapshot(),
          s.wait_seconds.snapshot(),
          s.statements_seconds.snapshot(),
          s.handback_seconds.snapshot()};
}

double SqlStore::operations_per_commit() const {
  auto commits = writer_->stats().commits.load();
  return commits == 0 ? 0.0 : static_cast<double>(writer_->stats().jobs.load()) / commits;
}

awaitable<Result<std::vector<Inserted>>> SqlStore::messages_insert(InsertParams p) {
  using Answer = Result<std::vector<Inserted>>;
  // The answer is taken once the group's before_commit has stored it (MessageSql::insert_later).
  return write<Answer>(
      [p = std::move(p)](EntitySql& sql) {
        sql.messages.insert_later(p);
        return Answer(std::vector<Inserted>{});
      },
      [](EntitySql& sql, Answer& answer) { answer = sql.messages.take_inserted(); },
      changes_only({}));
}

awaitable<std::vector<Message>> SqlStore::messages_list(ListParams p) {
  return read<std::vector<Message>>([p = std::move(p)](EntitySql& sql) { return sql.reads.list(p); });
}

awaitable<std::vector<MessageId>> SqlStore::messages_list_ids(ListParams p) {
  return read<std::vector<MessageId>>([p = std::move(p)](EntitySql& sql) { return sql.reads.list_ids(p); });
}

awaitable<std::optional<Message>> SqlStore::message_find(std::string queue, MessageId id) {
  return read<std::optional<Message>>(
      [queue = std::move(queue), id](EntitySql& sql) { return sql.reads.find(queue, id); });
}

awaitable<std::vector<Message>> SqlStore::messages_claim(ClaimParams p) {
  // Without trials, the claim is made with the group's other claims just before the commit
  // (ClaimSql::claim_later); its answer is taken then.
  if (!p.trials) {
    return write<std::vector<Message>>(
        [p = std::move(p)](EntitySql& sql) {
          sql.claims.claim_later(p);
          return std::vector<Message>{};
        },
        [](EntitySql& sql, std::vector<Message>& claimed) { claimed = take_claim(sql); },
        changes_only({}));
  }
  return write<std::vector<Message>>(
      [p = std::move(p)](EntitySql& sql) { return claim_with_trials(sql, p); });
}

awaitable<Result<Message>> SqlStore::message_update(UpdateParams p) {
  MessageId id = p.id;
  return write<Result<Message>>(
      [p = std::move(p)](EntitySql& sql) { return sql.messages.update(p); }, detail::NoSettle{},
      changes_only({id}));
}

awaitable<std::vector<Result<Message>>> SqlStore::messages_update(std::vector<UpdateParams> p) {
  auto ids = ids_of(p);
  return write<std::vector<Result<Message>>>(
      [p = std::move(p)](EntitySql& sql) {
        std::vector<Result<Message>> out;
        out.reserve(p.size());
        for (const auto& item : p) out.push_back(sql.messages.update(item));
        return out;
      },
      detail::NoSettle{}, changes_only(std::move(ids)));
}

awaitable<AckAndClaim> SqlStore::messages_ack_and_claim(std::vector<UpdateParams> acks,
                                                        ClaimParams claim) {
  const bool later = !claim.trials;  // as messages_claim
  auto ids = ids_of(acks);
  return write<AckAndClaim>(
      [acks = std::move(acks), claim = std::move(claim)](EntitySql& sql) {
        AckAndClaim out;
        out.acked.reserve(acks.size());
        for (const auto& item : acks) out.acked.push_back(sql.messages.update(item));
        if (claim.trials) {
          sql.messages.catch_up();  // the claim reads and changes rows its own way
          out.claimed = claim_with_trials(sql, claim);
          sql.messages.catch_up();
        } else {
          sql.claims.claim_later(claim);
        }
        return out;
      },
      [later](EntitySql& sql, AckAndClaim& out) {
        if (later) out.claimed = take_claim(sql);
      },
      changes_only(std::move(ids)));
}

awaitable<Result<EffectOutcome>> SqlStore::effect_record(EffectParams p) {
  return write<Result<EffectOutcome>>([p = std::move(p)](EntitySql& sql) -> Result<EffectOutcome> {
    auto current = sql.messages.lock(p.queue, p.id);
    if (!current) return Error(Errc::message_not_found, "message not found");
    return sql.effects.record(*current, p);
  });
}

awaitable<std::vector<Effect>> SqlStore::effects_of(MessageId id) {
  return read<std::vector<Effect>>([id](EntitySql& sql) { return sql.effects.of(id); });
}

awaitable<Result<std::vector<TrialStarted>>> SqlStore::trials_start(TrialStartParams p) {
  using Out = Result<std::vector<TrialStarted>>;
  return write<Out>([p = std::move(p)](EntitySql& sql) -> Out {
    // Every item is decided before any is written: one refusal starts nothing.
    std::vector<std::pair<Trial, bool>> decided;
    for (std::size_t i = 0; i < p.items.size(); ++i) {
      const auto& item = p.items[i];
      std::optional<std::string> queue = item.queue ? item.queue : sql.reads.queue_of(item.id);
      std::optional<Message> m;
      if (queue) m = sql.messages.lock(*queue, item.id);
      std::optional<Trial> open;
      if (m) open = sql.trials.open_for(m->id);
      auto trial = p.decide(i, m ? &*m : nullptr, open);
      if (!trial) return trial.error();
      decided.emplace_back(std::move(*trial), !open);
    }
    std::vector<TrialStarted> started;
    for (auto& [trial, fresh] : decided) {
      if (fresh) {
        trial = sql.trials.insert(std::move(trial));
        sql.messages.note_work(trial.queue);
      }
      started.push_back({std::move(trial), fresh});
    }
    if (p.audit) {
      if (auto entry = p.audit(started)) sql.audit.append(*entry);
    }
    return started;
  });
}

awaitable<std::optional<Trial>> SqlStore::trial_find(std::string queue, MessageId id,
                                                     long long trial_id) {
  return read<std::optional<Trial>>(
      [queue = std::move(queue), id, trial_id](EntitySql& sql) -> std::optional<Trial> {
        auto t = sql.trials.find(trial_id);
        if (!t || t->queue != queue || t->message_id != id) return std::nullopt;
        return t;
      });
}

awaitable<Result<Trial>> SqlStore::trial_update(TrialUpdateParams p) {
  return write<Result<Trial>>([p = std::move(p)](EntitySql& sql) -> Result<Trial> {
    auto t = sql.trials.lock(p.trial_id);
    if (!t || t->queue != p.queue || t->message_id != p.id) {
      return Error(Errc::trial_not_found, "trial run not found");
    }
    auto m = sql.reads.find(p.queue, p.id);
    if (!m) return Error(Errc::trial_not_found, "trial run not found");
    auto change = p.decide(*t, *m);
    if (!change) return change.error();
    sql.trials.write(change->next);
    if (change->entry) sql.messages.append_entry(*m, std::move(*change->entry));
    return std::move(change->next);
  });
}

awaitable<std::vector<Trial>> SqlStore::trials_expire(TrialExpireParams p) {
  // The sweep runs every second on the leader and almost always finds nothing: it looks on a
  // reader first, so that the writer (one for SQLite) only gets a job when there is work.
  const bool any = co_await read<bool>([now = p.now, before = p.pending_before](EntitySql& sql) {
    return sql.trials.any_expired(now, before);
  });
  if (!any) co_return std::vector<Trial>{};
  co_return co_await write<std::vector<Trial>>([p = std::move(p)](EntitySql& sql) {
    std::vector<Trial> out;
    for (const Trial& t : sql.trials.expired(p.now, p.pending_before, p.limit)) {
      auto m = sql.reads.find(t.queue, t.message_id);
      TrialChange change = p.decide(t, m ? &*m : nullptr);
      sql.trials.write(change.next);
      if (change.entry && m) sql.messages.append_entry(*m, std::move(*change.entry));
      out.push_back(std::move(change.next));
    }
    return out;
  });
}

awaitable<std::vector<Message>> SqlStore::messages_reap_expired(ReapParams p) {
  return write<std::vector<Message>>([p = std::move(p)](EntitySql& sql) { return sql.messages.reap(p); });
}

awaitable<std::optional<MessageHistory>> SqlStore::message_history(std::string queue, MessageId id,
                                                                   HistoryPage page) {
  return read<std::optional<MessageHistory>>([queue = std::move(queue), id, page](EntitySql& sql) {
    auto history = sql.reads.history(queue, id, page);
    if (history && history->message.effect_count > 0) history->effects = sql.effects.of(id);
    return history;
  });
}

awaitable<std::optional<MessageEdits>> SqlStore::message_edits(std::string queue, MessageId id,
                                                               long long from, long long count) {
  return read<std::optional<MessageEdits>>([queue = std::move(queue), id, from, count](EntitySql& sql) {
    return sql.reads.edits(queue, id, from, count);
  });
}

awaitable<Schedule> SqlStore::schedule_peek(TimeMs now) {
  return read<Schedule>([now](EntitySql& sql) { return sql.reads.schedule(now); });
}

awaitable<std::vector<QueueStats>> SqlStore::queue_stats(std::optional<std::string> queue,
                                                         TimeMs now) {
  return read<std::vector<QueueStats>>(
      [queue = std::move(queue), now](EntitySql& sql) { return sql.housekeeping.stats(queue, now); });
}

awaitable<std::vector<QueueStats>> SqlStore::queues_page(QueuePageParams p) {
  return read<std::vector<QueueStats>>(
      [p = std::move(p)](EntitySql& sql) { return sql.housekeeping.stats_page(p); });
}

awaitable<std::vector<long long>> SqlStore::dead_hourly(std::optional<std::string> queue,
                                                        TimeMs from_hour, int hours) {
  return read<std::vector<long long>>([queue = std::move(queue), from_hour, hours](EntitySql& sql) {
    return sql.housekeeping.dead_hourly(queue, from_hour, hours);
  });
}

void SqlStore::subscribe_changes(ChangeCallback callback) {
  if (options_.target.backend != DatabaseTarget::Backend::postgresql) return;
  listener_ = std::make_unique<PgListener>(options_.target.libpq_conninfo, node_, std::move(callback));
}

awaitable<std::vector<AuditEntry>> SqlStore::audit_list(AuditQuery p) {
  return read<std::vector<AuditEntry>>(
      [p = std::move(p)](EntitySql& sql) { return sql.audit.list(p); });
}

awaitable<std::vector<long long>> SqlStore::audit_ids(AuditQuery p) {
  return read<std::vector<long long>>([p = std::move(p)](EntitySql& sql) { return sql.audit.ids(p); });
}

awaitable<std::optional<AuditEntry>> SqlStore::audit_find(long long id) {
  return read<std::optional<AuditEntry>>([id](EntitySql& sql) { return sql.audit.find(id); });
}

awaitable<Purged> SqlStore::messages_purge(PurgeParams p) {
  return write<Purged>([p = std::move(p)](EntitySql& sql) { return sql.housekeeping.purge(p); });
}

void SqlStore::campaign(LeadershipCallback callback) {
  if (options_.target.backend != DatabaseTarget::Backend::postgresql) {
    callback(true);  // one process owns the SQLite file
    return;
  }
  leader_ = std::make_unique<PgLeader>(options_.target.libpq_conninfo, node_,
                                       options_.leader_takeover_ms, std::move(callback));
}

awaitable<LeadershipRecord> SqlStore::leadership_renew(LeadershipRenewParams p) {
  return write<LeadershipRecord>(
      [p = std::move(p)](EntitySql& sql) { return sql.leadership.renew(p); });
}

awaitable<bool> SqlStore::ping() {
  return read<bool>([](EntitySql& sql) { return sql.housekeeping.schema_current(); });
}

}  // namespace dlq::store

// The queue operations that only read: lists, lookups, history, the schedule and stats (the
// writes are in operations.cpp).
#include "store/operations.hpp"

#include "store/migrations.hpp"

namespace dlq::store {

std::vector<Message> Operations::list(const ListParams& p) {
  in_queue_ = p.queue;
  in_limit_ = p.limit;
  in_offset_ = p.offset;
  if (p.status) {
    in_status_ = std::string(to_string(*p.status));
    auto& st = statement(list_by_status_, c_.dialect().list_by_status,
                         [](Operations& o, soci::statement& s) {
                           o.row_.exchange_into(s);
                           s.exchange(soci::use(o.in_queue_));
                           s.exchange(soci::use(o.in_status_));
                           s.exchange(soci::use(o.in_limit_));
                           s.exchange(soci::use(o.in_offset_));
                         });
    return fetch_messages(st);
  }
  auto& st = statement(list_all_, c_.dialect().list_all, [](Operations& o, soci::statement& s) {
    o.row_.exchange_into(s);
    s.exchange(soci::use(o.in_queue_));
    s.exchange(soci::use(o.in_limit_));
    s.exchange(soci::use(o.in_offset_));
  });
  return fetch_messages(st);
}

std::vector<MessageId> Operations::list_ids(const ListParams& p) {
  in_queue_ = p.queue;
  in_limit_ = p.limit;
  in_offset_ = p.offset;
  soci::statement* st = nullptr;
  if (p.status) {
    in_status_ = std::string(to_string(*p.status));
    st = &statement(list_ids_by_status_, c_.dialect().list_ids_by_status,
                    [](Operations& o, soci::statement& s) {
                      s.exchange(soci::into(o.out_id_));
                      s.exchange(soci::use(o.in_queue_));
                      s.exchange(soci::use(o.in_status_));
                      s.exchange(soci::use(o.in_limit_));
                      s.exchange(soci::use(o.in_offset_));
                    });
  } else {
    st = &statement(list_ids_all_, c_.dialect().list_ids_all, [](Operations& o, soci::statement& s) {
      s.exchange(soci::into(o.out_id_));
      s.exchange(soci::use(o.in_queue_));
      s.exchange(soci::use(o.in_limit_));
      s.exchange(soci::use(o.in_offset_));
    });
  }
  std::vector<MessageId> out;
  st->execute(false);
  while (st->fetch()) out.push_back(out_id_);
  c_.finish(*st);
  return out;
}

std::optional<Message> Operations::find(const std::string& queue, MessageId id) {
  in_queue_ = queue;
  in_id_ = id;
  auto& st = statement(select_, c_.dialect().select_message, [](Operations& o, soci::statement& s) {
    o.row_.exchange_into(s);
    s.exchange(soci::use(o.in_id_));
    s.exchange(soci::use(o.in_queue_));
  });
  return fetch_one(st);
}

std::vector<AttemptRecord> Operations::attempts(MessageId id) {
  auto& st = statement(attempts_, c_.dialect().select_attempts,
                       [](Operations& o, soci::statement& s) {
                         o.attempt_row_.exchange_into(s);
                         s.exchange(soci::use(o.in_id_));
                       });
  in_id_ = id;
  std::vector<AttemptRecord> out;
  st.execute(false);
  while (st.fetch()) out.push_back(attempt_row_.to_record());
  c_.finish(st);
  return out;
}

std::optional<MessageHistory> Operations::history(const std::string& queue, MessageId id) {
  auto found = find(queue, id);
  if (!found) return std::nullopt;
  return MessageHistory{std::move(*found), attempts(id)};
}

Schedule Operations::schedule(TimeMs now) {
  Schedule s;
  in_now_ = now;
  auto& due = statement(next_due_, c_.dialect().next_due, [](Operations& o, soci::statement& st) {
    st.exchange(soci::into(o.out_time_));
    st.exchange(soci::use(o.in_now_));
  });
  out_time_.reset();
  due.execute(true);
  c_.finish(due);
  s.next_due = out_time_;
  auto& lease = statement(next_lease_, c_.dialect().next_lease_expiry,
                          [](Operations& o, soci::statement& st) {
                            st.exchange(soci::into(o.out_time_));
                          });
  out_time_.reset();
  lease.execute(true);
  c_.finish(lease);
  s.next_lease_expiry = out_time_;
  return s;
}

void Operations::bind_stats(Operations& o, soci::statement& st) {
  QueueStats& r = o.stats_row_;
  st.exchange(soci::into(r.queue));
  st.exchange(soci::into(r.ready));
  st.exchange(soci::into(r.scheduled));
  st.exchange(soci::into(r.processing));
  st.exchange(soci::into(r.succeeded));
  st.exchange(soci::into(r.dead));
  st.exchange(soci::into(r.dismissed));
  st.exchange(soci::into(r.oldest_ready_since));
  st.exchange(soci::into(r.oldest_dead_at));
  for (int i = 0; i < 3; ++i) st.exchange(soci::use(o.in_now_));  // the ready/scheduled split
}

std::vector<QueueStats> Operations::stats(const std::optional<std::string>& queue, TimeMs now) {
  in_now_ = now;
  soci::statement* st = nullptr;
  if (queue) {
    in_queue_ = *queue;
    st = &statement(stats_one_, c_.dialect().stats_one, [](Operations& o, soci::statement& s) {
      bind_stats(o, s);
      s.exchange(soci::use(o.in_queue_));
    });
  } else {
    st = &statement(stats_all_, c_.dialect().stats_all, &Operations::bind_stats);
  }
  std::vector<QueueStats> out;
  st->execute(false);
  while (st->fetch()) out.push_back(stats_row_);
  c_.finish(*st);
  if (queue && out.empty()) {
    QueueStats empty;
    empty.queue = *queue;
    out.push_back(empty);
  }
  return out;
}

bool Operations::schema_current() { return applied_version(c_) >= latest_version(c_); }

}  // namespace dlq::store

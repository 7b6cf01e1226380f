// The queue operations that only read: lists, lookups, history, the schedule and stats (the
// writes are in operations.cpp).
#include "store/operations.hpp"

#include <map>

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

// Four index-only questions instead of one pass over every row (migrations 006 and 007): counts per
// status, how many pending ones wait for a later time, the oldest ready, the oldest dead.
std::vector<QueueStats> Operations::stats(const std::optional<std::string>& queue, TimeMs now) {
  std::map<std::string, QueueStats> by_queue;
  auto at = [&by_queue](const std::string& q) -> QueueStats& {
    QueueStats& s = by_queue[q];
    s.queue = q;
    return s;
  };
  const std::string where_queue = queue ? " AND queue = :queue" : "";
  std::string in_queue = queue.value_or("");
  long long in_now = now;
  // Runs `sql` (its named binds :queue and :now as present), one row of `into` per fetch.
  auto each_row = [&](const std::string& sql, auto&& into, auto&& row) {
    soci::statement st(c_.session());
    into(st);
    if (queue) st.exchange(soci::use(in_queue, "queue"));
    if (sql.find(":now") != std::string::npos) st.exchange(soci::use(in_now, "now"));
    st.alloc();
    st.prepare(sql);
    st.define_and_bind();
    st.execute(false);
    while (st.fetch()) row();
    c_.finish(st);
  };
  std::string q, status;
  long long n = 0;
  std::optional<long long> t;
  each_row("SELECT queue, status, COUNT(*) FROM messages WHERE 1 = 1" + where_queue +
               " GROUP BY queue, status",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(status));
             st.exchange(soci::into(n));
           },
           [&] {
             QueueStats& s = at(q);
             if (status == "pending") s.ready = n;  // less the scheduled ones, below
             if (status == "processing") s.processing = n;
             if (status == "succeeded") s.succeeded = n;
             if (status == "dead") s.dead = n;
             if (status == "dismissed") s.dismissed = n;
           });
  each_row("SELECT queue, COUNT(*) FROM messages WHERE status = 'pending' AND retry_after > :now" +
               where_queue + " GROUP BY queue",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(n));
           },
           [&] {
             QueueStats& s = at(q);
             s.scheduled = n;
             s.ready -= n;
           });
  // Ready since its retry time, or since it became pending.
  each_row("SELECT queue, MIN(COALESCE(retry_after, status_at)) FROM messages "
           "WHERE status = 'pending' AND (retry_after IS NULL OR retry_after <= :now)" +
               where_queue + " GROUP BY queue",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(t));
           },
           [&] { at(q).oldest_ready_since = t; });
  each_row("SELECT queue, MIN(dead_at) FROM messages WHERE status = 'dead'" + where_queue +
               " GROUP BY queue",
           [&](soci::statement& st) {
             st.exchange(soci::into(q));
             st.exchange(soci::into(t));
           },
           [&] { at(q).oldest_dead_at = t; });

  std::vector<QueueStats> out;
  out.reserve(by_queue.size());
  for (auto& [name, s] : by_queue) out.push_back(std::move(s));
  if (queue && out.empty()) {
    QueueStats empty;
    empty.queue = *queue;
    out.push_back(empty);
  }
  return out;
}

bool Operations::schema_current() { return applied_version(c_) >= latest_version(c_); }

// Sums over queues (or reads one) from dead_letter_hours; hours without a row count zero.
std::vector<long long> Operations::dead_hourly(const std::optional<std::string>& queue,
                                               TimeMs from_hour, int hours) {
  std::vector<long long> counts(static_cast<std::size_t>(hours), 0);
  long long from = from_hour, until = from_hour + hours * kMillisPerHour;
  std::string in_queue = queue.value_or("");
  long long hour = 0, n = 0;
  soci::statement st(c_.session());
  st.exchange(soci::into(hour));
  st.exchange(soci::into(n));
  st.exchange(soci::use(from, "from"));
  st.exchange(soci::use(until, "until"));
  if (queue) st.exchange(soci::use(in_queue, "queue"));
  st.alloc();
  st.prepare(std::string("SELECT hour, SUM(count) FROM dead_letter_hours "
                         "WHERE hour >= :from AND hour < :until") +
             (queue ? " AND queue = :queue" : "") + " GROUP BY hour");
  st.define_and_bind();
  st.execute(false);
  while (st.fetch()) {
    auto i = (hour - from_hour) / kMillisPerHour;
    if (i >= 0 && i < hours) counts[static_cast<std::size_t>(i)] += n;
  }
  c_.finish(st);
  return counts;
}

}  // namespace dlq::store

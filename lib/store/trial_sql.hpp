// Trial runs (issue 36): the rows of `trials`, started under their message's lock, handed to
// claims that asked for them, answered under their own lease, expired by the leader; each that
// ends appends one `trial` entry to its message's history. One per connection, on a store thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/trial.hpp"
#include "store/store.hpp"

namespace dlq::store {

class Connection;

class TrialSql {
 public:
  explicit TrialSql(Connection& c) : c_(c) {}

  std::optional<Trial> find(long long trial_id);
  // The message's pending or running trial, if it has one.
  std::optional<Trial> open_for(MessageId message_id);
  // Inserts `t` (its id is assigned) and returns it as stored.
  Trial insert(Trial t);
  // The trial, its row locked until the transaction ends.
  std::optional<Trial> lock(long long trial_id);
  // Writes every field of `t` but its identity (message, queue, job type, created_at).
  void write(const Trial& t);
  // Up to `p.max` pending trials of `p.queue` whose job type is one of `p.job_types`, oldest
  // first, marked running under leases `p.lease_token`-t<id> until p.lease_expires_at
  // (PostgreSQL skips rows another node is taking).
  std::vector<Trial> claim(const ClaimParams& p);
  // Open trials whose lease ran out, or that stayed pending since before `pending_before`.
  std::vector<Trial> expired(TimeMs now, TimeMs pending_before, long long limit);
  // Whether any trial expired(now, pending_before) would find, without locking (a reader's look).
  bool any_expired(TimeMs now, TimeMs pending_before);
  // Purge and retention: the trials of the messages in `id_list` (a JSON array of ids).
  void delete_for(const std::string& id_list);

 private:
  // The trials `where` selects; it may bind :a and :b.
  std::vector<Trial> select(const std::string& where, long long a, long long b);
  Connection& c_;
};

}  // namespace dlq::store

// Replay runs: created with their fixed id list, listed, driven a paced step at a time by the
// leader (fenced against a second one), paused, resumed or cancelled, and their outcome counts
// read back from the replayed messages as they are now.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class AuditSql;
class Connection;
class MessageSql;

class RunSql {
 public:
  RunSql(Connection& c, MessageSql& messages, AuditSql& audit)
      : c_(c), messages_(messages), audit_(audit) {}

  // Stores `run` (its id is assigned) with `ids` as its items, in that order.
  long long create(const ReplayRun& run, const std::vector<MessageId>& ids);
  std::optional<ReplayRun> find(long long id);
  std::vector<ReplayRun> list(const RunListParams& p);
  RunStep step(const RunStepParams& p);
  Result<ReplayRun> change(const RunChangeParams& p);

 private:
  struct Item {
    long long seq;
    MessageId id;
    std::optional<std::string> queue;  // none: the message is gone
  };
  struct Applied {
    long long replayed = 0, skipped = 0, next_seq = 0;
  };

  // A run as stored; `lock`: FOR UPDATE on PostgreSQL (the writer's transaction on SQLite).
  std::optional<ReplayRun> row(long long id, bool lock);
  // Fills succeeded / dead_again / pending from the run's replayed messages as they are now.
  void count_outcomes(ReplayRun& run);
  // A step's three parts: the items it may take, each replayed or skipped, the run moved on.
  std::vector<Item> read_items(long long run_id, long long from, long long count);
  Applied apply(const std::vector<Item>& items, long long from, const RunStepParams& p,
                RunStep& out);
  ReplayRun advance(const ReplayRun& run, const Applied& applied, const RunStepParams& p);

  Connection& c_;
  MessageSql& messages_;
  AuditSql& audit_;
};

}  // namespace dlq::store

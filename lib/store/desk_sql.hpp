// The dead-letter desk's SQL: the dead view across queues, the matched set of a batch action,
// stored previews and their confirmation, and batch dismissal. Replay runs are RunSql's.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace dlq::store {

class AuditSql;
class EffectSql;
class Connection;
class MessageReads;
class MessageSql;
class RunSql;

class DeskSql {
 public:
  DeskSql(Connection& c, MessageSql& messages, MessageReads& reads, RunSql& runs, AuditSql& audit,
          EffectSql& effects)
      : c_(c), messages_(messages), reads_(reads), runs_(runs), audit_(audit), effects_(effects) {}

  std::vector<Message> dead_list(const DeadListParams& p);
  std::vector<DeadRef> dead_refs(const DeadListParams& p);
  DeadMatch dead_match(const DeadMatchParams& p);
  void preview_save(const BatchPreview& p);
  Result<Confirmed> confirm(const ConfirmParams& p);
  Result<Confirmed> start_run(const RunStartParams& p);
  DismissBatch dismiss_batch(const DismissBatchParams& p);

 private:
  struct DeadId {
    MessageId id = 0;
    std::string queue;
    std::optional<std::string> job_type;
    int replay_count = 0;
  };
  // The dead messages a filter matches, with what a preview counts, in the action's order.
  std::vector<DeadId> dead_ids(const DeadFilter& f, bool dead_at_order);
  // Writes a confirmed plan: the run over `ids` (its audit entry then names it) and the entry.
  Confirmed commit(ConfirmPlan plan, std::vector<MessageId> ids,
                   const std::function<std::string(long long)>& handle = {});
  // The stored preview of this token and kind, locked (PostgreSQL) against a second confirmation.
  std::optional<BatchPreview> preview_for_update(const std::string& token_sha256,
                                                 const std::string& kind);

  Connection& c_;
  MessageSql& messages_;
  MessageReads& reads_;
  RunSql& runs_;
  AuditSql& audit_;
  EffectSql& effects_;
};

}  // namespace dlq::store

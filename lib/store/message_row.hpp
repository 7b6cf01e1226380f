// The bridge between a row of `messages` (or `attempts`) and the domain structs: buffers SOCI
// reads into in the column order of kMessageColumns (AttemptRow::kColumns), and the full-row UPDATE
// and the history INSERT with their named binds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <soci/soci.h>

#include "model/message.hpp"
#include "store/soci_optional.hpp"

namespace dlq::store {

// The message columns in MessageRow order, for SELECT and RETURNING lists.
extern const char* const kMessageColumns;

struct MessageRow {
  long long id = 0;
  std::string queue;
  std::string payload;
  std::string status;
  long long retry_count = 0;
  long long max_retries = 0;
  std::optional<long long> retry_after;
  std::optional<std::string> last_error;
  long long created_at = 0;
  long long updated_at = 0;
  long long priority = 0;
  std::optional<std::string> job_type;
  std::optional<std::string> idempotency_key;
  std::optional<std::string> error_class;
  std::optional<std::string> dead_reason;
  std::optional<std::string> checkpoint;
  long long lease_expiries = 0;
  long long attempts = 0;
  std::optional<long long> first_attempt_at;
  std::optional<long long> last_attempt_at;
  std::optional<long long> dead_at;
  long long replay_count = 0;
  std::optional<long long> lease_expires_at;
  std::optional<std::string> lease_id;
  std::optional<std::string> worker;
  long long life_started_at = 0;
  long long status_at = 0;
  std::optional<std::string> fingerprint;
  std::optional<std::string> title;
  std::optional<std::string> worker_version;
  long long effect_count = 0;
  std::optional<std::string> sqs_attributes;
  long long life_attempts = 0;
  std::optional<std::string> dead_letter_queue;
  std::optional<long long> sqs_hidden_until;
  std::optional<std::string> sqs_receipt;

  // Registers every column as an `into` target of `st`, in kMessageColumns order.
  void exchange_into(soci::statement& st);
  Message to_message() const;
};

class Connection;

// Runs `st`, whose into elements are `row`'s, and collects every row as a Message.
std::vector<Message> fetch_messages(Connection& c, soci::statement& st, const MessageRow& row);

// The full-row UPDATE of a message (every mutable column, by id) and its binds, filled from a
// Message.
struct MessageUpdateRow {
  static const char* const kSql;

  std::string payload;
  std::string status;
  long long retry_count = 0;
  long long max_retries = 0;
  std::optional<long long> retry_after;
  std::optional<std::string> last_error;
  long long updated_at = 0;
  long long priority = 0;
  std::optional<std::string> error_class;
  std::optional<std::string> dead_reason;
  std::optional<std::string> checkpoint;
  long long lease_expiries = 0;
  long long attempts = 0;
  std::optional<long long> first_attempt_at;
  std::optional<long long> last_attempt_at;
  std::optional<long long> dead_at;
  long long replay_count = 0;
  std::optional<long long> lease_expires_at;
  std::optional<std::string> lease_id;
  std::optional<std::string> worker;
  long long life_started_at = 0;
  long long status_at = 0;
  std::optional<std::string> fingerprint;
  std::optional<std::string> title;
  std::optional<std::string> worker_version;
  long long effect_count = 0;
  long long life_attempts = 0;
  std::optional<std::string> dead_letter_queue;
  std::optional<long long> sqs_hidden_until;
  std::optional<std::string> sqs_receipt;
  long long id = 0;

  // Each column with its value, in kSql's order (its placeholders are the columns' names).
  template <class F>
  void each(F&& f) {
    f("payload", payload);
    f("status", status);
    f("retry_count", retry_count);
    f("max_retries", max_retries);
    f("retry_after", retry_after);
    f("last_error", last_error);
    f("updated_at", updated_at);
    f("priority", priority);
    f("error_class", error_class);
    f("dead_reason", dead_reason);
    f("checkpoint", checkpoint);
    f("lease_expiries", lease_expiries);
    f("attempts", attempts);
    f("first_attempt_at", first_attempt_at);
    f("last_attempt_at", last_attempt_at);
    f("dead_at", dead_at);
    f("replay_count", replay_count);
    f("lease_expires_at", lease_expires_at);
    f("lease_id", lease_id);
    f("worker", worker);
    f("life_started_at", life_started_at);
    f("status_at", status_at);
    f("fingerprint", fingerprint);
    f("title", title);
    f("worker_version", worker_version);
    f("effect_count", effect_count);
    f("life_attempts", life_attempts);
    f("dead_letter_queue", dead_letter_queue);
    f("sqs_hidden_until", sqs_hidden_until);
    f("sqs_receipt", sqs_receipt);
    f("id", id);
  }
  void exchange_use(soci::statement& st);
  void assign(const Message& m);
};

// A history entry: its INSERT (placeholders that would collide with the UPDATE's in PostgreSQL's
// combined statement are prefixed attempt_), and the columns a SELECT reads in this order.
struct AttemptRow {
  static const char* const kInsertSql;
  static const char* const kColumns;

  long long message_id = 0;
  long long attempt = 0;
  std::string outcome;
  std::optional<long long> claimed_at;
  long long finished_at = 0;
  std::optional<std::string> worker;
  std::optional<std::string> error;
  std::optional<std::string> error_class;
  std::optional<std::string> stack;
  std::optional<std::string> cause;
  std::optional<std::string> actor;
  std::optional<std::string> reason;
  std::optional<std::string> previous_payload;
  long long count = 1;
  std::optional<std::string> fingerprint;
  std::optional<std::string> title;
  long long life = 0;
  std::optional<long long> replay_id;
  std::optional<std::string> worker_version;
  std::optional<std::string> trial;

  // Each column with its value, in kColumns' order.
  template <class F>
  void each(F&& f) {
    f("message_id", message_id);
    f("attempt", attempt);
    f("outcome", outcome);
    f("claimed_at", claimed_at);
    f("finished_at", finished_at);
    f("worker", worker);
    f("error", error);
    f("error_class", error_class);
    f("stack", stack);
    f("cause", cause);
    f("actor", actor);
    f("reason", reason);
    f("previous_payload", previous_payload);
    f("count", count);
    f("fingerprint", fingerprint);
    f("title", title);
    f("life", life);
    f("replay_id", replay_id);
    f("worker_version", worker_version);
    f("trial", trial);
  }
  void exchange_into(soci::statement& st);
  void exchange_use(soci::statement& st);
  void assign(const AttemptRecord& a);
  AttemptRecord to_record() const;
};

}  // namespace dlq::store

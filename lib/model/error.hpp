// Expected outcomes are values: one error enum for everything a caller can cause (unknown ids,
// wrong state, stale leases, invalid fields), carried in boost::system::result. Faults (a
// database that went away, bugs) are exceptions; the two fault types the HTTP layer answers
// specially are declared here.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/system/result.hpp>

namespace dlq {

enum class Errc {
  unknown_queue,
  message_not_found,
  invalid_state,
  lease_lost,
  already_succeeded,
  idempotency_conflict,
  preview_stale,
  validation_failed,
  replay_not_found,
  replay_limit,  // the message was replayed max_replays times (force replays it anyway)
  trial_not_found,  // no such trial run of that message (issue 36)
};

// One invalid input field. `code` is machine-readable (docs/api-decisions.md lists them).
struct FieldError {
  std::string field;
  std::string message;
  std::string code;
};
using FieldErrors = std::vector<FieldError>;

struct Error {
  Errc code{};
  std::string message;  // the short sentence FT72 clients read as `error`
  FieldErrors fields;   // only for validation_failed

  Error() = default;
  Error(Errc c, std::string m) : code(c), message(std::move(m)) {}
  static Error validation(FieldErrors f) {
    Error e(Errc::validation_failed, "validation failed");
    e.fields = std::move(f);
    return e;
  }
};

// The message of an exception_ptr, for logs.
std::string describe(const std::exception_ptr& e);

[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

template <class T>
using Result = boost::system::result<T, Error>;

// The database cannot be reached or refused the connection: answered 503, retried by clients.
class DatabaseUnavailable : public std::runtime_error {
 public:
  explicit DatabaseUnavailable(const std::string& what, bool ambiguous = false)
      : std::runtime_error(what), ambiguous_(ambiguous) {}
  // The connection was lost while COMMIT was on its way: the change may be committed or not.
  bool ambiguous() const { return ambiguous_; }

 private:
  bool ambiguous_;
};

// The database is out of space (SQLite SQLITE_FULL, PostgreSQL disk_full): answered 507; the
// write was rolled back whole.
class StorageFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The server is shutting down and takes no new work.
class ShuttingDown : public std::runtime_error {
 public:
  ShuttingDown() : std::runtime_error("shutting down") {}
};

}  // namespace dlq

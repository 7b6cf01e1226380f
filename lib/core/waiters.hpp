// Long-poll claimers parked per queue, in FIFO order. Each waiter sleeps on a steady_timer used
// as an async condition variable: waking is cancel(), never a poll. Strand-confined: only the
// QueueService strand touches this.
#pragma once

#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

namespace dlq::core {

struct Waiter {
  explicit Waiter(const boost::asio::any_io_executor& ex) : timer(ex) {}
  boost::asio::steady_timer timer;
  std::vector<std::string> job_types;  // empty: takes any message
  bool woken = false;                  // a wake-up is meant for this waiter; not yet acted on
  bool trials = false;                 // the claim asked for trial runs too (issue 36)
};

class Waiters {
 public:
  void park(const std::string& queue, Waiter* w);
  void remove(const std::string& queue, Waiter* w);

  // Wakes the longest-waiting waiter of `queue` that would take a message of `job_type`
  // (nullopt: a message of unknown type, e.g. one whose retry time passed). True if one woke.
  bool wake_one(const std::string& queue, const std::optional<std::string>& job_type);
  // Wakes every waiter of `queue` that asked for trials and would take `job_type` (nullopt: any
  // type): a trial went pending. Trial claimers are few (one loop per worker process), and only
  // the one that takes it keeps it; the others park again.
  void wake_trials(const std::string& queue, const std::optional<std::string>& job_type);
  // Wakes one waiter in every queue that has any (the due-time safety net).
  void wake_one_per_queue();
  // Wakes everyone (shutdown).
  void wake_all();

  std::size_t size() const { return total_; }
  // Parked waiters per queue (queues without any are absent).
  std::map<std::string, std::size_t> counts() const;
  bool has_waiters(const std::string& queue) const;

 private:
  std::unordered_map<std::string, std::list<Waiter*>> by_queue_;
  std::size_t total_ = 0;
};

}  // namespace dlq::core

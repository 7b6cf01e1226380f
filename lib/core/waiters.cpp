// FIFO long-poll waiters per queue; waking is cancel() on a waiter's timer.
#include "core/waiters.hpp"

#include <algorithm>

namespace dlq::core {
namespace {

bool accepts(const Waiter& w, const std::optional<std::string>& job_type) {
  if (w.job_types.empty() || !job_type) return true;
  return std::find(w.job_types.begin(), w.job_types.end(), *job_type) != w.job_types.end();
}

void wake(Waiter& w) {
  w.woken = true;
  w.timer.cancel();
}

}  // namespace

void Waiters::park(const std::string& queue, Waiter* w) {
  by_queue_[queue].push_back(w);
  ++total_;
}

void Waiters::remove(const std::string& queue, Waiter* w) {
  auto it = by_queue_.find(queue);
  if (it == by_queue_.end()) return;
  auto& list = it->second;
  auto pos = std::find(list.begin(), list.end(), w);
  if (pos == list.end()) return;
  list.erase(pos);
  --total_;
  if (list.empty()) by_queue_.erase(it);
}

bool Waiters::wake_one(const std::string& queue, const std::optional<std::string>& job_type) {
  auto it = by_queue_.find(queue);
  if (it == by_queue_.end()) return false;
  for (Waiter* w : it->second) {
    if (!w->woken && accepts(*w, job_type)) {
      wake(*w);
      return true;
    }
  }
  return false;
}

void Waiters::wake_trials(const std::string& queue, const std::optional<std::string>& job_type) {
  auto it = by_queue_.find(queue);
  if (it == by_queue_.end()) return;
  for (Waiter* w : it->second) {
    if (w->trials && !w->woken && accepts(*w, job_type)) wake(*w);
  }
}

void Waiters::wake_one_per_queue() {
  for (auto& [queue, list] : by_queue_) {
    for (Waiter* w : list) {
      if (!w->woken) {
        wake(*w);
        break;
      }
    }
  }
}

void Waiters::wake_all() {
  for (auto& [queue, list] : by_queue_) {
    for (Waiter* w : list) wake(*w);
  }
}

std::map<std::string, std::size_t> Waiters::counts() const {
  std::map<std::string, std::size_t> out;
  for (const auto& [queue, list] : by_queue_) out[queue] = list.size();
  return out;
}

bool Waiters::has_waiters(const std::string& queue) const { return by_queue_.contains(queue); }

}  // namespace dlq::core

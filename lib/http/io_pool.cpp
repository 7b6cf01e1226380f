// One io_context per I/O thread: see io_pool.hpp.
#include "http/io_pool.hpp"

#include <sched.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <boost/asio/post.hpp>

namespace dlq::http {
namespace asio = boost::asio;

namespace {

// The CPU quota of this process's cgroup, in CPUs (rounded up), if it has one: cgroup v2's
// cpu.max ("QUOTA PERIOD" or "max PERIOD"), else v1's cfs_quota_us / cfs_period_us.
std::optional<int> cgroup_cpu_quota() {
  double quota = 0;
  double period = 0;
  if (std::ifstream v2("/sys/fs/cgroup/cpu.max"); v2) {
    std::string q;
    v2 >> q >> period;
    if (!v2 || q == "max") return std::nullopt;
    quota = std::atof(q.c_str());
  } else {
    std::ifstream q1("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    std::ifstream p1("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    if (!(q1 >> quota) || !(p1 >> period)) return std::nullopt;
  }
  if (quota <= 0 || period <= 0) return std::nullopt;
  return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

}  // namespace

int IoPool::available_cpus() {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (auto quota = cgroup_cpu_quota()) cpus = std::min(cpus, *quota);
  return std::max(1, cpus);
}

int IoPool::io_threads(int configured) {
  int cpus = available_cpus();
  return configured > 0 ? std::min(configured, cpus) : cpus;
}

IoPool::IoPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    // Hint 1: one thread runs it, so handlers it posts to itself queue without waking anyone.
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    guards_.emplace_back(asio::make_work_guard(*contexts_.back()));
  }
}

IoPool::~IoPool() = default;

asio::io_context& IoPool::next() {
  asio::io_context& c = *contexts_[next_];
  next_ = (next_ + 1) % contexts_.size();
  return c;
}

void IoPool::run() {
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < contexts_.size(); ++i) {
    threads.emplace_back([c = contexts_[i].get()] { c->run(); });
  }
  contexts_.front()->run();
  for (auto& t : threads) t.join();
}

void IoPool::release() {
  // Each guard belongs to its context: reset it there, not from whichever thread asks.
  for (std::size_t i = 0; i < contexts_.size(); ++i) {
    asio::post(*contexts_[i], [this, i] { guards_[i].reset(); });
  }
}

void IoPool::stop() {
  for (auto& c : contexts_) c->stop();
}

}  // namespace dlq::http

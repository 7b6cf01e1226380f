// A latency histogram with fixed bucket bounds (seconds), lock-free to record into from any
// thread: what Prometheus calls a histogram, cumulative counts per upper bound plus a sum.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace dlq {

class Histogram {
 public:
  // Upper bounds in seconds; +Inf is implied.
  static constexpr std::array<double, 15> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                     0.025,  0.05,  0.1,    0.25,  0.5,
                                                     1,      2.5,   5,      10,    30};

  void observe(std::chrono::nanoseconds d) {
    double seconds = std::chrono::duration<double>(d).count();
    std::size_t i = 0;
    while (i < kBounds.size() && seconds > kBounds[i]) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<std::uint64_t>(d.count()), std::memory_order_relaxed);
  }

  struct Snapshot {
    std::array<std::uint64_t, kBounds.size() + 1> counts{};  // per bucket, not cumulative
    double sum_seconds = 0;
    std::uint64_t count() const {
      std::uint64_t n = 0;
      for (auto c : counts) n += c;
      return n;
    }
  };
  Snapshot snapshot() const {
    Snapshot s;
    for (std::size_t i = 0; i < counts_.size(); ++i) s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    return s;
  }

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace dlq

// Backoff arithmetic (no state, no clock): the reference schedule with the default policy.
#include "core/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace dlq::core {

UnitRandom default_unit_random() {
  return [] {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
  };
}

TimeMs backoff_delay(const BackoffPolicy& policy, int n, const UnitRandom& random) {
  n = std::max(n, 1);
  // pow overflows to inf for huge n; min() then caps it.
  double seconds = policy.initial_seconds * std::pow(policy.multiplier, n - 1);
  seconds = std::min(seconds, policy.max_seconds);
  if (policy.jitter_seconds > 0 && random) seconds += policy.jitter_seconds * random();
  return seconds_to_ms(seconds);
}

}  // namespace dlq::core

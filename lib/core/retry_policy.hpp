// How long to wait before the next attempt, from a queue's backoff policy: initial × multiplier^(n-1),
// capped, plus optional jitter. The defaults give the reference schedule min(2^n, 3600) s.
#pragma once

#include <functional>

#include "config/config.hpp"
#include "model/time.hpp"

namespace dlq::core {

// A source of uniform random numbers in [0, 1); replaceable so tests can pin jitter.
using UnitRandom = std::function<double()>;
UnitRandom default_unit_random();

// Delay before attempt n+1 after the n-th failure (n >= 1), in milliseconds.
TimeMs backoff_delay(const BackoffPolicy& policy, int n, const UnitRandom& random);

}  // namespace dlq::core

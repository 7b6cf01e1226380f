// Time as dlq sees it: integer milliseconds since the Unix epoch (UTC), a replaceable clock so
// tests can move time instead of sleeping, and the RFC 3339 text form used on the wire.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlq {

using TimeMs = std::int64_t;

constexpr TimeMs kMillisPerSecond = 1000;
constexpr TimeMs kMillisPerHour = 3600 * kMillisPerSecond;
// The latest instant the wire format can express: 9999-12-31T23:59:59.999Z.
constexpr TimeMs kMaxTimeMs = 253402300799999;

// "2026-06-01T00:00:02.000Z". Values outside year 0000..9999 are clamped.
std::string format_rfc3339(TimeMs t);

// Any RFC 3339 date-time ("2026-06-01T00:00:02Z", "...T02:00:02.5+02:00", lower-case t/z too) or
// "YYYY-MM-DD HH:MM:SS[.fff]" taken as UTC. Fractions beyond milliseconds are truncated.
std::optional<TimeMs> parse_timestamp(std::string_view text);

// Seconds (possibly fractional, e.g. from config) to milliseconds, rounded to the nearest.
TimeMs seconds_to_ms(double seconds);

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimeMs now() const override;
};

// A clock the tests set and advance by hand.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeMs start) : now_(start) {}
  TimeMs now() const override { return now_.load(); }
  void set(TimeMs t) { now_.store(t); }
  void advance(TimeMs delta) { now_.fetch_add(delta); }

 private:
  std::atomic<TimeMs> now_;
};

}  // namespace dlq

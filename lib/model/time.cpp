// RFC 3339 formatting and parsing on top of the C++20 calendar types (libstdc++ 12 has the
// calendars but neither std::format nor std::chrono::parse, so the text side is done here).
#include "model/time.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

namespace dlq {
namespace {

using std::chrono::days;
using std::chrono::sys_days;

// Reads exactly n digits at pos; advances pos.
bool read_digits(std::string_view s, std::size_t& pos, int n, int& out) {
  if (pos + static_cast<std::size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += static_cast<std::size_t>(n);
  out = v;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::string format_rfc3339(TimeMs t) {
  t = std::clamp<TimeMs>(t, -62167219200000, kMaxTimeMs);  // 0000-01-01 .. 9999-12-31
  TimeMs day_index = t >= 0 ? t / 86400000 : -((-t + 86399999) / 86400000);
  TimeMs ms_of_day = t - day_index * 86400000;
  std::chrono::year_month_day ymd{sys_days{days{day_index}}};
  int year = static_cast<int>(ymd.year());
  unsigned month = static_cast<unsigned>(ymd.month());
  unsigned day = static_cast<unsigned>(ymd.day());
  auto hh = static_cast<int>(ms_of_day / 3600000);
  auto mm = static_cast<int>(ms_of_day / 60000 % 60);
  auto ss = static_cast<int>(ms_of_day / 1000 % 60);
  auto ms = static_cast<int>(ms_of_day % 1000);

  std::array<char, 24> buf{};
  auto put = [&buf](std::size_t at, int value, int width) {
    for (int i = width - 1; i >= 0; --i) {
      buf[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
      value /= 10;
    }
  };
  put(0, year, 4);
  buf[4] = '-';
  put(5, static_cast<int>(month), 2);
  buf[7] = '-';
  put(8, static_cast<int>(day), 2);
  buf[10] = 'T';
  put(11, hh, 2);
  buf[13] = ':';
  put(14, mm, 2);
  buf[16] = ':';
  put(17, ss, 2);
  buf[19] = '.';
  put(20, ms, 3);
  buf[23] = 'Z';
  return std::string(buf.data(), buf.size());
}

std::optional<TimeMs> parse_timestamp(std::string_view s) {
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(s, pos, 4, year) || !expect(s, pos, '-') || !read_digits(s, pos, 2, month) ||
      !expect(s, pos, '-') || !read_digits(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (pos >= s.size()) return std::nullopt;
  char sep = s[pos++];
  bool space_form = sep == ' ';
  if (sep != 'T' && sep != 't' && !space_form) return std::nullopt;
  if (!read_digits(s, pos, 2, hour) || !expect(s, pos, ':') || !read_digits(s, pos, 2, minute) ||
      !expect(s, pos, ':') || !read_digits(s, pos, 2, second)) {
    return std::nullopt;
  }
  int millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (pos - start < 3) millis = millis * 10 + (s[pos] - '0');
      ++pos;
    }
    std::size_t digits = pos - start;
    if (digits == 0) return std::nullopt;
    for (std::size_t i = digits; i < 3; ++i) millis *= 10;
  }
  int offset_minutes = 0;
  if (pos == s.size()) {
    // Only the "YYYY-MM-DD HH:MM:SS" form may omit the zone; it is UTC by definition.
    if (!space_form) return std::nullopt;
  } else if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!read_digits(s, pos, 2, oh) || !expect(s, pos, ':') || !read_digits(s, pos, 2, om) ||
        oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year{year},
                                  std::chrono::month{static_cast<unsigned>(month)},
                                  std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return std::nullopt;
  TimeMs days_since_epoch = sys_days{ymd}.time_since_epoch().count();
  TimeMs t = days_since_epoch * 86400000 + static_cast<TimeMs>(hour) * 3600000 +
             static_cast<TimeMs>(minute) * 60000 + static_cast<TimeMs>(second) * 1000 + millis -
             static_cast<TimeMs>(offset_minutes) * 60000;
  return t;
}

TimeMs seconds_to_ms(double seconds) { return static_cast<TimeMs>(std::llround(seconds * 1000.0)); }

TimeMs SystemClock::now() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace dlq

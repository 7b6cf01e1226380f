// What the integration tests share: one dlqd per test executable (clock override on, so tests
// pin "now" with X-Now), fresh queue names per test, and helpers for the common calls. Tests pin
// X-Now in 2099: the server's own timers run on the real clock (http-api.md section 0).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "model/time.hpp"
#include "support/dlqd_process.hpp"
#include "support/http_client.hpp"
#include "support/temp_dir.hpp"

namespace dlq::test {

DlqdProcess& shared_dlqd();
std::string fresh_queue(const std::string& prefix = "q");

// 2099-01-01T00:00:00.000Z plus `ms`.
TimeMs t0();
std::string at_ms(TimeMs ms_after_t0);
inline std::string at_s(double seconds) { return at_ms(static_cast<TimeMs>(seconds * 1000)); }
inline Headers now_header(const std::string& when) { return {{"X-Now", when}}; }

// POST /queues/{q}/messages; checks 201 and returns the message.
boost::json::object enqueue(HttpClient& c, const std::string& queue, const std::string& payload,
                            boost::json::object extra = {}, const Headers& headers = {});
// POST /queues/{q}/claim with an optional body; returns the whole answer.
HttpResponse claim(HttpClient& c, const std::string& queue, boost::json::object body = {},
                   const Headers& headers = {});
// The claimed message (claimed must be true).
boost::json::object claim_one(HttpClient& c, const std::string& queue,
                              const Headers& headers = {});
// Enqueues one message of `job_type` into `queue` (max_retries 1), claims and fails it with
// `error` at `when` (X-Now; empty: now), with `stack` when not empty: dead. Returns its id.
std::int64_t fail_to_death(HttpClient& c, const std::string& queue, const std::string& job_type,
                           const std::string& error, const std::string& when = "",
                           const std::string& error_class = "transient",
                           const std::string& stack = "");
// Polls `done` every 50 ms for up to `seconds`: true once it held.
template <class Pred>
bool eventually(Pred done, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (!done()) {
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(seconds)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}
// The `field` of every entry of a 422 answer's `errors`, in order.
std::vector<std::string> error_fields(const HttpResponse& res);
std::string message_path(const std::string& queue, std::int64_t id, const std::string& action = "");

}  // namespace dlq::test

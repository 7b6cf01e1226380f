// What the workloads of dlq-bench share (workloads.cpp, probes.cpp): latency samples, payloads,
// answer checks, running many client coroutines at once, and the request paths.
#pragma once

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>

#include "client.hpp"
#include "workloads.hpp"

namespace dlq::bench {
namespace asio = boost::asio;
namespace json = boost::json;
using http_verb = boost::beast::http::verb;
using Clock = std::chrono::steady_clock;

struct Latencies {
  std::vector<double> ms;
  void add(std::chrono::nanoseconds d) { ms.push_back(std::chrono::duration<double, std::milli>(d).count()); }
  void add_ms(double v) { ms.push_back(v); }
  double percentile(double p) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    std::size_t i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[std::min(i, ms.size() - 1)];
  }
};

inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline std::string payload_of(int bytes, long long n) {
  std::string p = "{\"n\":" + std::to_string(n) + ",\"pad\":\"";
  while (static_cast<int>(p.size()) < bytes - 2) p += 'x';
  return p + "\"}";
}

inline std::string enqueue_body(int bytes, long long n) {
  return json::serialize(json::object{{"payload", payload_of(bytes, n)}});
}

inline void expect(const Reply& r, int status, const char* what) {
  if (r.status != status) {
    throw std::runtime_error(std::string(what) + " answered " + std::to_string(r.status) + ": " +
                             r.body.substr(0, 300));
  }
}

// Runs `count` copies of `task(i)` concurrently on one io_context until all finish.
template <class Task>
void run_concurrently(asio::io_context& ioc, int count, Task task) {
  std::exception_ptr failure;
  for (int i = 0; i < count; ++i) {
    asio::co_spawn(ioc, task(i), [&failure](std::exception_ptr e) {
      if (e && !failure) failure = e;
    });
  }
  ioc.run();
  if (failure) std::rethrow_exception(failure);
}

inline Result finish(std::string name, Latencies& lat, long long count, double seconds,
              std::string unit = "msg/s") {
  Result r;
  r.workload = std::move(name);
  r.count = count;
  r.seconds = seconds;
  r.rate = seconds > 0 ? static_cast<double>(count) / seconds : 0;
  r.rate_unit = std::move(unit);
  r.p50_ms = lat.percentile(50);
  r.p99_ms = lat.percentile(99);
  return r;
}

inline std::string messages_path(const Options& o) { return "/queues/" + o.queue + "/messages"; }
inline std::string claim_path(const Options& o) { return "/queues/" + o.queue + "/claim"; }
inline std::string message_path(const Options& o, long long id, std::string_view action) {
  return "/queues/" + o.queue + "/messages/" + std::to_string(id) + "/" + std::string(action);
}

// The probes (probes.cpp): the server's ceiling, wake-up and due-time latency, idle clients,
// single-request latencies and the final count check.
Result healthz(const Options& o);
Result wakeup(const Options& o);
Result due_accuracy(const Options& o);
Result idle_clients(const Options& o, bool parked);
Result claim_latency(const Options& o);
Result get_latency(const Options& o);
Result expect_counts(const Options& o);

}  // namespace dlq::bench

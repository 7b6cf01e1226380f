// The workloads of scripts/bench.sh. Each drives dlqd through its public HTTP API only, so the
// figures are what a client sees; every rate is counted from answers, never from requests sent.
#include "workloads.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>

#include "client.hpp"
#include "model/time.hpp"

namespace dlq::bench {
namespace asio = boost::asio;
namespace json = boost::json;
using http_verb = boost::beast::http::verb;
using Clock = std::chrono::steady_clock;

namespace {

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

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string payload_of(int bytes, long long n) {
  std::string p = "{\"n\":" + std::to_string(n) + ",\"pad\":\"";
  while (static_cast<int>(p.size()) < bytes - 2) p += 'x';
  return p + "\"}";
}

std::string enqueue_body(int bytes, long long n) {
  return json::serialize(json::object{{"payload", payload_of(bytes, n)}});
}

void expect(const Reply& r, int status, const char* what) {
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

Result finish(std::string name, Latencies& lat, long long count, double seconds,
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

std::string messages_path(const Options& o) { return "/queues/" + o.queue + "/messages"; }
std::string claim_path(const Options& o) { return "/queues/" + o.queue + "/claim"; }
std::string message_path(const Options& o, long long id, const char* action) {
  return "/queues/" + o.queue + "/messages/" + std::to_string(id) + "/" + action;
}

// W1: single-message enqueue.
Result enqueue(const Options& o) {
  asio::io_context ioc;
  std::atomic<long long> next{0};
  Latencies lat;
  auto start = Clock::now();
  run_concurrently(ioc, o.connections, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    for (long long n; (n = next++) < o.messages;) {
      auto r = co_await c.request(http_verb::post, messages_path(o), enqueue_body(o.payload_bytes, n));
      expect(r, 201, "enqueue");
      lat.add(r.latency);
    }
  });
  return finish("enqueue", lat, o.messages, since(start));
}

// W5: enqueue in batches.
Result batch_enqueue(const Options& o) {
  asio::io_context ioc;
  std::atomic<long long> next{0};
  Latencies lat;
  auto start = Clock::now();
  long long batches = (o.messages + o.batch - 1) / o.batch;
  run_concurrently(ioc, o.connections, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    for (long long b; (b = next++) < batches;) {
      json::array items;
      for (int i = 0; i < o.batch; ++i) {
        items.push_back(json::object{{"payload", payload_of(o.payload_bytes, b * o.batch + i)}});
      }
      // g++ 12 cannot compile a braced initializer inside a co_await expression: build it first.
      std::string body = json::serialize(json::object{{"messages", std::move(items)}});
      auto r = co_await c.request(http_verb::post, messages_path(o) + "/batch", std::move(body));
      expect(r, 201, "batch enqueue");
      lat.add(r.latency);
    }
  });
  Result r = finish("batch_enqueue", lat, batches * o.batch, since(start));
  r.extra["batch_size"] = o.batch;
  return r;
}

// A worker's acknowledgement waiting to ride with its next claim (--ack-in-claim).
struct PendingAck {
  std::optional<json::object> item;
  // The claim body: {} or {"ack": [item]}.
  std::string body() const {
    if (!item) return "{}";
    json::array items;
    items.push_back(*item);
    return json::serialize(json::object{{"ack", std::move(items)}});
  }
  // Checks the claim answer's "acked" and counts the message done.
  void settle(const json::value& answer, std::atomic<long long>& done) {
    if (!item) return;
    const auto& acked = answer.at("acked").as_array();
    if (acked.size() != 1 || acked[0].at("status").as_int64() != 200) {
      throw std::runtime_error("ack in claim: " + json::serialize(acked));
    }
    item.reset();
    ++done;
  }
};

// W2: drain the queue with claim -> succeed (or, with --ack-in-claim, claim + ack of the last).
Result drain(const Options& o) {
  asio::io_context ioc;
  std::atomic<long long> done{0};
  Latencies lat;
  auto start = Clock::now();
  run_concurrently(ioc, o.connections, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    PendingAck pending;
    for (;;) {
      auto t0 = Clock::now();
      auto claimed = co_await c.request(http_verb::post, claim_path(o), pending.body());
      expect(claimed, 200, "claim");
      auto body = json::parse(claimed.body);
      pending.settle(body, done);
      if (!body.at("claimed").as_bool()) co_return;
      const auto& m = body.at("message");
      auto id = m.at("id").as_int64();
      if (o.ack_in_claim) {
        pending.item = json::object{{"id", id}, {"lease_id", m.at("lease_id")}};
        lat.add(Clock::now() - t0);
        continue;
      }
      auto lease = json::serialize(json::object{{"lease_id", m.at("lease_id")}});
      auto ok = co_await c.request(http_verb::post, message_path(o, id, "succeed"), lease);
      expect(ok, 200, "succeed");
      lat.add(Clock::now() - t0);
      ++done;
    }
  });
  return finish(o.ack_in_claim ? "drain_ack" : "drain", lat, done, since(start));
}

// W3: producers and long-polling workers at once, for a fixed time.
Result mixed(const Options& o) {
  asio::io_context ioc;
  std::atomic<long long> produced{0}, consumed{0};
  Latencies lat;
  auto start = Clock::now();
  auto stop_at = start + std::chrono::milliseconds(static_cast<long long>(o.seconds * 1000));
  run_concurrently(ioc, o.producers + o.workers, [&](int i) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    if (i < o.producers) {
      while (Clock::now() < stop_at) {
        auto r = co_await c.request(http_verb::post, messages_path(o), enqueue_body(o.payload_bytes, produced++));
        expect(r, 201, "enqueue");
        lat.add(r.latency);
      }
      co_return;
    }
    PendingAck pending;
    while (Clock::now() < stop_at) {
      auto claimed = co_await c.request(http_verb::post, claim_path(o) + "?wait=1", pending.body());
      expect(claimed, 200, "claim");
      auto body = json::parse(claimed.body);
      pending.settle(body, consumed);
      if (!body.at("claimed").as_bool()) continue;
      lat.add(claimed.latency);
      const auto& m = body.at("message");
      if (o.ack_in_claim) {
        pending.item = json::object{{"id", m.at("id")}, {"lease_id", m.at("lease_id")}};
        continue;
      }
      auto lease = json::serialize(json::object{{"lease_id", m.at("lease_id")}});
      auto ok = co_await c.request(http_verb::post, message_path(o, m.at("id").as_int64(), "succeed"), lease);
      expect(ok, 200, "succeed");
      lat.add(ok.latency);
      ++consumed;
    }
    if (pending.item) {  // time is up: the last one goes alone
      json::array items;  // (built outside the co_await: GCC 12 rejects the braced list there)
      items.push_back(*pending.item);
      std::string ack_body = json::serialize(json::object{{"items", std::move(items)}});
      auto ok = co_await c.request(http_verb::post, "/queues/" + o.queue + "/ack", ack_body);
      expect(ok, 200, "ack");
      ++consumed;
    }
  });
  double elapsed = since(start);
  Result r = finish(o.ack_in_claim ? "mixed_ack" : "mixed", lat, consumed, elapsed);
  r.extra["produced"] = static_cast<double>(produced.load());
  r.extra["requests_per_s"] =
      static_cast<double>(produced.load() + (o.ack_in_claim ? 1 : 2) * consumed.load()) / elapsed;
  return r;
}

// The crash test's load (scripts/crash-test.sh): producers and workers like W3 (whose messages
// succeed, fail or are abandoned) until --seconds pass or dlqd goes away (kill -9). Every id answered 201 is appended to <out>/enqueued, every
// id answered 200 to a succeed to <out>/succeeded, flushed line by line: what the server
// acknowledged, to check against the database after the restart.
Result crash_load(const Options& o) {
  asio::io_context ioc;
  std::ofstream enqueued(o.out + "/enqueued", std::ios::app), succeeded(o.out + "/succeeded", std::ios::app);
  if (!enqueued || !succeeded) throw std::runtime_error("cannot write under " + o.out);
  std::atomic<long long> produced{0}, consumed{0}, broken{0};
  Latencies lat;
  auto start = Clock::now();
  auto stop_at = start + std::chrono::milliseconds(static_cast<long long>(o.seconds * 1000));
  run_concurrently(ioc, o.producers + o.workers, [&](int i) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    try {
      while (Clock::now() < stop_at) {
        if (i < o.producers) {
          auto r = co_await c.request(http_verb::post, messages_path(o), enqueue_body(o.payload_bytes, produced++));
          if (r.status != 201) continue;  // 503 while the store is away: not acknowledged
          enqueued << json::parse(r.body).at("id").as_int64() << '\n' << std::flush;
          continue;
        }
        auto claimed = co_await c.request(http_verb::post, claim_path(o) + "?wait=1",
                                          R"({"visibility_timeout":2})");
        if (claimed.status != 200) continue;
        auto body = json::parse(claimed.body);
        if (!body.at("claimed").as_bool()) continue;
        const auto& m = body.at("message");
        auto id = m.at("id").as_int64();
        // Mixed outcomes: every 7th message is walked away from (its lease expires), every 5th
        // fails each time it is tried (three tries: dead), the rest succeed.
        if (id % 7 == 0) continue;
        if (id % 5 == 0) {
          auto failure = json::serialize(json::object{{"lease_id", m.at("lease_id")}, {"error", "crash test"}});
          co_await c.request(http_verb::post, message_path(o, id, "fail"), failure);
          continue;
        }
        auto lease = json::serialize(json::object{{"lease_id", m.at("lease_id")}});
        auto ok = co_await c.request(http_verb::post, message_path(o, id, "succeed"), lease);
        if (ok.status == 200) {
          succeeded << id << '\n' << std::flush;
          ++consumed;
        }
      }
    } catch (const std::exception&) {
      ++broken;  // the server went away mid-request: that request is not acknowledged
    }
  });
  Result r = finish("crash_load", lat, consumed, since(start));
  r.extra["produced"] = static_cast<double>(produced.load());
  r.extra["broken_connections"] = static_cast<double>(broken.load());
  return r;
}

// W4: always-failing messages, until every one is dead.
Result dead_letter(const Options& o) {
  asio::io_context ioc;
  {
    // Fill the queue in batches first; the measurement is the failing.
    Options fill = o;
    fill.connections = 4;
    batch_enqueue(fill);
  }
  std::atomic<long long> dead{0}, attempts{0};
  Latencies lat, claim_lat;
  auto start = Clock::now();
  run_concurrently(ioc, o.connections, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    while (dead.load() < o.messages) {
      auto claimed = co_await c.request(http_verb::post, claim_path(o) + "?wait=1", "{}");
      expect(claimed, 200, "claim");
      claim_lat.add(claimed.latency);
      auto body = json::parse(claimed.body);
      if (!body.at("claimed").as_bool()) continue;
      const auto& m = body.at("message");
      auto failure = json::serialize(json::object{{"lease_id", m.at("lease_id")}, {"error", "always fails"},
                                                  {"error_class", "transient"}});
      auto r = co_await c.request(http_verb::post, message_path(o, m.at("id").as_int64(), "fail"), failure);
      expect(r, 200, "fail");
      lat.add(r.latency);
      ++attempts;
      if (json::parse(r.body).at("status").as_string() == "dead") ++dead;
    }
  });
  double elapsed = since(start);
  Result r = finish("dead_letter", lat, dead, elapsed);
  r.extra["attempts_per_s"] = static_cast<double>(attempts.load()) / elapsed;
  r.extra["claim_p50_ms"] = claim_lat.percentile(50);
  r.extra["claim_p99_ms"] = claim_lat.percentile(99);
  return r;
}

// The server's HTTP ceiling: GET /healthz on the same number of connections.
Result healthz(const Options& o) {
  asio::io_context ioc;
  std::atomic<long long> done{0};
  Latencies lat;
  auto start = Clock::now();
  auto stop_at = start + std::chrono::milliseconds(static_cast<long long>(o.seconds * 1000));
  run_concurrently(ioc, o.connections, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    while (Clock::now() < stop_at) {
      auto r = co_await c.request(http_verb::get, "/healthz");
      expect(r, 200, "healthz");
      lat.add(r.latency);
      ++done;
    }
  });
  return finish("healthz", lat, done, since(start), "req/s");
}

asio::awaitable<void> sleep_for(asio::io_context& ioc, std::chrono::milliseconds d) {
  asio::steady_timer t(ioc, d);
  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

// Wake-up latency: a claimer parked on an empty queue, an enqueue on another connection.
Result wakeup(const Options& o) {
  asio::io_context ioc;
  Latencies from_response, from_send;
  run_concurrently(ioc, 1, [&](int) -> asio::awaitable<void> {
    Client claimer(ioc.get_executor(), o.endpoint), producer(ioc.get_executor(), o.producer_endpoint);
    for (int round = 0; round < o.rounds; ++round) {
      Clock::time_point claimed_at{}, enqueued_at{};
      std::optional<Reply> claim_reply;
      auto parked = [&]() -> asio::awaitable<void> {
        claim_reply = co_await claimer.request(http_verb::post, claim_path(o), R"({"wait_seconds":10})");
        claimed_at = Clock::now();
      };
      asio::co_spawn(ioc, parked(), asio::detached);
      co_await sleep_for(ioc, std::chrono::milliseconds(5));  // let the claim park
      auto sent = Clock::now();
      auto r = co_await producer.request(http_verb::post, messages_path(o), enqueue_body(o.payload_bytes, round));
      enqueued_at = Clock::now();
      expect(r, 201, "enqueue");
      while (!claim_reply) co_await sleep_for(ioc, std::chrono::milliseconds(0));
      expect(*claim_reply, 200, "claim");
      auto body = json::parse(claim_reply->body);
      if (!body.at("claimed").as_bool()) throw std::runtime_error("parked claim woke empty");
      from_response.add_ms(std::max(0.0, std::chrono::duration<double, std::milli>(claimed_at - enqueued_at).count()));
      from_send.add(claimed_at - sent);
      const auto& m = body.at("message");
      auto lease = json::serialize(json::object{{"lease_id", m.at("lease_id")}});
      co_await producer.request(http_verb::post, message_path(o, m.at("id").as_int64(), "succeed"), lease);
    }
  });
  Result r = finish("wakeup", from_response, o.rounds, 0, "rounds");
  r.rate = 0;
  r.extra["from_enqueue_sent_p50_ms"] = from_send.percentile(50);
  r.extra["from_enqueue_sent_p99_ms"] = from_send.percentile(99);
  return r;
}

// Due-time accuracy: failed messages (2 s backoff), claimers parked; delay past retry_after.
Result due_accuracy(const Options& o) {
  asio::io_context ioc;
  Latencies late;
  int n = o.messages;
  run_concurrently(ioc, 1, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    const std::string body = json::serialize(json::object{{"payload", "due"}, {"max_retries", 5}});
    for (int i = 0; i < n; ++i) {
      auto r = co_await c.request(http_verb::post, messages_path(o), body);
      expect(r, 201, "enqueue");
    }
    for (int i = 0; i < n; ++i) {
      auto claimed = co_await c.request(http_verb::post, claim_path(o), "{}");
      auto m = json::parse(claimed.body).at("message");
      auto f = co_await c.request(http_verb::post, message_path(o, m.at("id").as_int64(), "fail"),
                                  R"({"error":"later"})");
      expect(f, 200, "fail");
    }
  });
  ioc.restart();
  run_concurrently(ioc, std::min(n, o.connections), [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    for (;;) {
      auto claimed = co_await c.request(http_verb::post, claim_path(o), R"({"wait_seconds":8})");
      auto at = SystemClock().now();
      auto body = json::parse(claimed.body);
      if (!body.at("claimed").as_bool()) co_return;
      const auto& m = body.at("message");
      auto due = parse_timestamp(std::string(m.at("retry_after").as_string()));
      late.add_ms(static_cast<double>(at - *due));
      std::string lease = json::serialize(json::object{{"lease_id", m.at("lease_id")}});
      co_await c.request(http_verb::post, message_path(o, m.at("id").as_int64(), "succeed"), lease);
    }
  });
  Result r = finish("due_accuracy", late, static_cast<long long>(late.ms.size()), 0, "messages");
  r.rate = 0;
  return r;
}

struct ProcSample {
  double cpu_seconds = 0;
  double rss_mb = 0;
};

ProcSample sample_process(int pid) {
  ProcSample s;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close = content.rfind(')');
  std::istringstream rest(content.substr(close + 2));
  std::string field;
  std::vector<std::string> fields;
  while (rest >> field) fields.push_back(field);
  // After the command: state(0) ... utime is field 14 overall, i.e. index 11 here; stime 12.
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (fields.size() > 12) s.cpu_seconds = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_mb = std::stod(line.substr(6)) / 1024.0;
  }
  return s;
}

asio::awaitable<void> park_one(Client& client, std::string path) {
  try {
    co_await client.request(http_verb::post, std::move(path), R"({"wait_seconds":60})");
  } catch (const std::exception&) {
    // Closed by the measurement when it is done.
  }
}

// A keep-alive connection that made one request and now says nothing.
asio::awaitable<void> idle_one(Client& client) {
  try {
    co_await client.request(http_verb::get, "/healthz");
  } catch (const std::exception&) {
    // Refused (limits.max_connections) or closed by the measurement.
  }
}

// --pollers clients at once, each parked in a long-poll claim (idle_pollers) or idle on a
// keep-alive connection after one request (idle_connections): memory and CPU while nothing
// happens.
Result idle_clients(const Options& o, bool parked) {
  if (o.pid <= 0) throw std::runtime_error("idle needs --pid of the dlqd process");
  asio::io_context ioc;
  ProcSample before_connect = sample_process(o.pid);
  ProcSample settled, after;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < o.pollers; ++i) clients.push_back(std::make_unique<Client>(ioc.get_executor(), o.endpoint));
  for (int i = 0; i < o.pollers; ++i) {
    if (parked) {
      asio::co_spawn(ioc, park_one(*clients[i], claim_path(o)), asio::detached);
    } else {
      asio::co_spawn(ioc, idle_one(*clients[i]), asio::detached);
    }
  }
  auto measure = [&]() -> asio::awaitable<void> {
    co_await sleep_for(ioc, std::chrono::milliseconds(3000));  // everyone connected or parked
    settled = sample_process(o.pid);
    co_await sleep_for(ioc, std::chrono::milliseconds(static_cast<long long>(o.seconds * 1000)));
    after = sample_process(o.pid);
    for (auto& c : clients) c->close();
  };
  asio::co_spawn(ioc, measure(), asio::detached);
  ioc.run();
  Latencies none;
  Result r = finish(parked ? "idle_pollers" : "idle_connections", none, o.pollers, o.seconds,
                    parked ? "pollers" : "connections");
  r.rate = 0;
  r.extra["rss_mb_before"] = before_connect.rss_mb;
  r.extra["rss_mb_parked"] = settled.rss_mb;
  r.extra["cpu_percent_idle"] = 100.0 * (after.cpu_seconds - settled.cpu_seconds) / o.seconds;
  return r;
}

// Claim latency on its own: one connection claims --messages messages (and does not finish them).
Result claim_latency(const Options& o) {
  asio::io_context ioc;
  Latencies lat;
  long long got = 0;
  auto start = Clock::now();
  run_concurrently(ioc, 1, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    for (int i = 0; i < o.messages; ++i) {
      auto r = co_await c.request(http_verb::post, claim_path(o), "{}");
      expect(r, 200, "claim");
      if (!json::parse(r.body).at("claimed").as_bool()) throw std::runtime_error("queue ran dry");
      lat.add(r.latency);
      ++got;
    }
  });
  return finish("claim_latency", lat, got, since(start));
}

// The latency of one GET target (an admin view), one request at a time: --messages requests.
Result get_latency(const Options& o) {
  asio::io_context ioc;
  Latencies lat;
  long long done = 0;
  double bytes = 0;
  auto start = Clock::now();
  run_concurrently(ioc, 1, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    for (int i = 0; i < o.messages; ++i) {
      auto r = co_await c.request(http_verb::get, o.target);
      expect(r, 200, o.target.c_str());
      lat.add(r.latency);
      bytes += static_cast<double>(r.body.size());
      ++done;
    }
  });
  Result r = finish("get", lat, done, since(start), "req/s");
  r.extra["bytes_per_answer"] = done ? bytes / static_cast<double>(done) : 0;
  return r;
}

// Checks the queue's counts (GET /queues/{q}/stats) against --expect: nothing acknowledged lost.
Result expect_counts(const Options& o) {
  asio::io_context ioc;
  json::value stats;
  run_concurrently(ioc, 1, [&](int) -> asio::awaitable<void> {
    Client c(ioc.get_executor(), o.endpoint);
    auto r = co_await c.request(http_verb::get, "/queues/" + o.queue + "/stats");
    expect(r, 200, "stats");
    stats = json::parse(r.body);
  });
  std::string spec = o.expect;
  std::size_t pos = 0;
  long long checked = 0;
  while (pos < spec.size()) {
    auto comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? spec.size() : comma + 1;
    auto eq = item.find('=');
    std::string key = item.substr(0, eq);
    long long want = std::stoll(item.substr(eq + 1));
    long long got = 0;
    if (key == "total") {
      for (const char* k : {"ready", "scheduled", "processing", "succeeded", "dead", "dismissed"}) {
        got += stats.at(k).as_int64();
      }
    } else {
      got = stats.at(key).as_int64();
    }
    if (got != want) {
      throw std::runtime_error("queue " + o.queue + ": " + key + " is " + std::to_string(got) +
                               ", expected " + std::to_string(want) + " (" + json::serialize(stats) + ")");
    }
    ++checked;
  }
  Latencies none;
  return finish("expect", none, checked, 0, "checks");
}

}  // namespace

Result run_workload(const std::string& name, const Options& o) {
  if (name == "enqueue") return enqueue(o);
  if (name == "batch_enqueue") return batch_enqueue(o);
  if (name == "drain") return drain(o);
  if (name == "mixed") return mixed(o);
  if (name == "dead_letter") return dead_letter(o);
  if (name == "healthz") return healthz(o);
  if (name == "wakeup") return wakeup(o);
  if (name == "due_accuracy") return due_accuracy(o);
  if (name == "idle_pollers") return idle_clients(o, true);
  if (name == "expect") return expect_counts(o);
  if (name == "claim_latency") return claim_latency(o);
  if (name == "get") return get_latency(o);
  if (name == "crash_load") return crash_load(o);
  if (name == "idle_connections") return idle_clients(o, false);
  throw std::runtime_error("unknown workload: " + name);
}

// Plain fixed-point numbers (Boost.JSON would print 3.6E3): the script greps these lines.
std::string to_json(const Result& r) {
  auto number = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::string(buf);
  };
  std::string out = "{\"workload\":\"" + r.workload + "\",\"count\":" + std::to_string(r.count) +
                    ",\"seconds\":" + number(r.seconds) + ",\"rate\":" + number(r.rate) +
                    ",\"rate_unit\":\"" + r.rate_unit + "\",\"p50_ms\":" + number(r.p50_ms) +
                    ",\"p99_ms\":" + number(r.p99_ms);
  for (const auto& [k, v] : r.extra) out += ",\"" + k + "\":" + number(v);
  return out + "}";
}

}  // namespace dlq::bench

// The probes of scripts/bench.sh: the server's HTTP ceiling, wake-up and due-time latency, what
// idle clients cost, single-request latencies, and the count check after every workload.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "model/time.hpp"
#include "workload_support.hpp"

namespace dlq::bench {

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

namespace {
asio::awaitable<void> sleep_for(asio::io_context& ioc, std::chrono::milliseconds d) {
  asio::steady_timer t(ioc, d);
  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace dlq::bench

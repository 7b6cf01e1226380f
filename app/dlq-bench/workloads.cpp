// The workloads of scripts/bench.sh. Each drives dlqd through its public HTTP API only, so the
// figures are what a client sees; every rate is counted from answers, never from requests sent.
#include "workloads.hpp"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "workload_support.hpp"

namespace dlq::bench {
namespace {

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
  if (name == "chaos_load") return chaos_load(o);
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

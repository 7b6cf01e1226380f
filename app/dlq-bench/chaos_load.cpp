// The chaos test's load (scripts/chaos.sh): producers, workers and one operator drive every write
// route of dlqd while a nemesis kills, stops and cuts it and its database. Every call carries its
// own X-Request-Id and leaves one JSON line in the history (--out), written when it ends:
//   {"op", "request_id", "args", "invoked_ms", "completed_ms", "outcome", "status", "result"}
// `outcome` is "ok" (2xx), "fail" (an answer that says nothing changed, or no connection at all)
// or "info" (sent, no answer: it may or may not have happened). tests/chaos/check.py reads the
// history and the database and says whether every promise held.
#include <chrono>
#include <ctime>
#include <optional>
#include <fstream>
#include <random>
#include <stdexcept>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "workload_support.hpp"

namespace dlq::bench {
namespace {

long long wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// RFC 3339 in UTC with milliseconds, as dlqd writes times (purge's `before`).
std::string rfc3339(long long ms) {
  std::time_t s = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
  return buf;
}

struct History {
  std::ofstream out;
  long long ok = 0, fail = 0, info = 0;
  void write(const json::object& line) { out << json::serialize(line) << '\n' << std::flush; }
};

// One call, as the history records it.
struct Call {
  int status = 0;
  json::value body;  // the parsed answer of a 2xx, else null
  json::object line;
  bool ok() const { return status >= 200 && status < 300; }
};

// A client of the chaos load: its connection, its history and its own request ids.
class Actor {
 public:
  Actor(asio::any_io_executor ex, asio::ip::tcp::endpoint ep, History& h, std::string name)
      : client_(std::move(ex), ep), history_(h), name_(std::move(name)) {
    client_.set_timeout(std::chrono::seconds(8));
  }

  std::string next_request_id() { return name_ + "-" + std::to_string(++seq_); }

  // Makes the call; the caller adds `result` with record().
  asio::awaitable<Call> call(std::string op, http_verb verb, std::string target, std::string body,
                             json::object args, std::string rid = {}) {
    if (rid.empty()) rid = next_request_id();
    Call c;
    c.line = json::object{{"op", op}, {"request_id", rid}, {"args", std::move(args)},
                          {"invoked_ms", wall_ms()}};
    bool connected = false;
    try {
      co_await client_.connect();
      connected = true;
      auto reply = co_await client_.request(verb, std::move(target), std::move(body), rid);
      c.status = reply.status;
      if (c.ok()) c.body = json::parse(reply.body);
    } catch (const std::exception&) {
      client_.close();
    }
    c.line["completed_ms"] = wall_ms();
    c.line["status"] = c.status;
    // Not connected: the request never left. An answer that is not a 2xx refused it.
    if (c.status == 0 && connected) {
      c.line["outcome"] = "info";
      ++history_.info;
    } else if (c.ok()) {
      c.line["outcome"] = "ok";
      ++history_.ok;
    } else {
      c.line["outcome"] = "fail";
      ++history_.fail;
    }
    co_return c;
  }

  void record(Call& c, json::object result = {}) {
    if (!result.empty()) c.line["result"] = std::move(result);
    history_.write(c.line);
  }

  // After a call that got no answer: the server is away, do not spin.
  asio::awaitable<void> pause(const Call& c) {
    if (c.status != 0 && c.status < 500) co_return;
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(100));
    co_await t.async_wait(asio::use_awaitable);
  }

 private:
  Client client_;
  History& history_;
  std::string name_;
  long long seq_ = 0;
};

json::object lease_args(long long id, const json::value& lease, long long attempt) {
  return json::object{{"id", id}, {"lease_id", lease}, {"attempt", attempt}};
}

asio::awaitable<void> producer(const Options& o, Actor& a, std::mt19937& rng, const std::string& tag,
                               Clock::time_point stop_at) {
  long long n = 0;
  while (Clock::now() < stop_at) {
    if (rng() % 5 == 0) {
      json::array items, ns;
      for (int i = 0; i < 5; ++i) {
        std::string token = tag + "." + std::to_string(n++);
        items.push_back(json::object{{"payload", json::serialize(json::object{{"n", token}})}, {"max_retries", 2}});
        ns.push_back(json::value(token));
      }
      std::string body = json::serialize(json::object{{"messages", std::move(items)}});
      json::object args{{"ns", std::move(ns)}};
      auto c = co_await a.call("enqueue_batch", http_verb::post, messages_path(o) + "/batch",
                               std::move(body), std::move(args));
      json::object result;
      if (c.ok()) {
        json::array ids;
        for (const auto& m : c.body.at("messages").as_array()) ids.push_back(m.at("id"));
        result["ids"] = std::move(ids);
      }
      a.record(c, std::move(result));
      co_await a.pause(c);
      continue;
    }
    std::string token = tag + "." + std::to_string(n++);
    std::string body = json::serialize(
        json::object{{"payload", json::serialize(json::object{{"n", token}})}, {"max_retries", 2}});
    json::object args{{"n", token}};
    auto c = co_await a.call("enqueue", http_verb::post, messages_path(o), std::move(body), std::move(args));
    json::object result;
    if (c.ok()) result["id"] = c.body.at("id");
    a.record(c, std::move(result));
    co_await a.pause(c);
  }
}

// Claims and treats each message one of nine ways, chosen at random: succeed, acknowledge with the
// next claim or through /ack, fail with a retry, fail for good (dead), walk away (its lease
// expires), release, extend then succeed, record an effect then succeed.
asio::awaitable<void> worker(const Options& o, Actor& a, std::mt19937& rng, const std::string& name,
                             Clock::time_point stop_at) {
  std::optional<json::object> pending;  // an acknowledgement riding on the next claim
  while (Clock::now() < stop_at) {
    json::object body{{"visibility_timeout", 2}, {"worker", name}};
    json::object args;
    if (pending) {
      body["ack"] = json::array{json::object{{"id", pending->at("id")}, {"lease_id", pending->at("lease_id")}}};
      args["ack"] = json::array{*pending};
      pending.reset();
    }
    auto claimed = co_await a.call("claim", http_verb::post, claim_path(o) + "?wait=1",
                                   json::serialize(body), std::move(args));
    json::object result;
    bool got = claimed.ok() && claimed.body.at("claimed").as_bool();
    if (claimed.ok()) {
      result["claimed"] = got;
      if (auto* acked = claimed.body.as_object().if_contains("acked")) result["acked"] = *acked;
    }
    if (got) {
      const auto& m = claimed.body.at("message");
      result["id"] = m.at("id");
      result["lease_id"] = m.at("lease_id");
      result["attempt"] = m.at("attempts");
    }
    a.record(claimed, result);
    if (!got) {
      co_await a.pause(claimed);
      continue;
    }
    long long id = result["id"].as_int64();
    json::value lease = result["lease_id"];
    long long attempt = result["attempt"].as_int64();
    auto lease_body = [&](json::object extra) {
      extra["lease_id"] = lease;
      return json::serialize(extra);
    };
    auto succeed = [&]() -> asio::awaitable<void> {
      auto c = co_await a.call("succeed", http_verb::post, message_path(o, id, "succeed"), lease_body(json::object()),
                               lease_args(id, lease, attempt));
      a.record(c);
    };
    int r = static_cast<int>(rng() % 100);
    if (r < 35) {
      co_await succeed();
    } else if (r < 42) {
      pending = lease_args(id, lease, attempt);
    } else if (r < 47) {
      json::array items{json::object{{"id", id}, {"lease_id", lease}}};
      std::string body = json::serialize(json::object{{"items", std::move(items)}});
      auto c = co_await a.call("ack", http_verb::post, "/queues/" + o.queue + "/ack", std::move(body),
                               lease_args(id, lease, attempt));
      json::object res;
      if (c.ok()) res["item_status"] = c.body.at("results").at(0).at("status");
      a.record(c, std::move(res));
    } else if (r < 70) {
      bool dead = r >= 60;
      std::string body = lease_body(json::object{{"error", "chaos"}, {"error_class", dead ? "invalid_input" : "transient"}});
      auto c = co_await a.call("fail", http_verb::post, message_path(o, id, "fail"), std::move(body),
                               lease_args(id, lease, attempt));
      json::object res;
      if (c.ok()) res["status_after"] = c.body.at("status");
      a.record(c, std::move(res));
    } else if (r < 76) {
      // walked away from: the reaper takes the message back
    } else if (r < 82) {
      std::string body = lease_body(json::object{{"delay_seconds", 0}});
      auto c = co_await a.call("release", http_verb::post, message_path(o, id, "release"), std::move(body),
                               lease_args(id, lease, attempt));
      a.record(c);
    } else if (r < 91) {
      std::string body = lease_body(json::object{{"seconds", 2}});
      auto c = co_await a.call("extend", http_verb::post, message_path(o, id, "extend"), std::move(body),
                               lease_args(id, lease, attempt));
      a.record(c);
      if (c.ok()) co_await succeed();
    } else {
      std::string key = "k" + std::to_string(attempt);
      json::object args2 = lease_args(id, lease, attempt);
      args2["key"] = key;
      std::string body = lease_body(json::object{{"key", key}, {"state", "done"}, {"result", "r"}});
      auto c = co_await a.call("effect", http_verb::post, message_path(o, id, "effects"), std::move(body),
                               std::move(args2));
      a.record(c);
      if (c.ok()) co_await succeed();
    }
  }
}

// One dead letter replayed or dismissed; the reason names the request id, for the audit check.
asio::awaitable<void> admin_single(const Options& o, Actor& a, std::string op, std::string action,
                                   long long id) {
  std::string rid = a.next_request_id();
  std::string reason = "chaos " + rid;
  std::string body = json::serialize(json::object{{"reason", reason}});
  json::object args{{"id", id}, {"reason", reason}};
  auto c = co_await a.call(op, http_verb::post, message_path(o, id, action), std::move(body),
                           std::move(args), rid);
  a.record(c);
}

// Two steps, preview then confirm, on a few ids of the list.
asio::awaitable<void> admin_batch(const Options& o, Actor& a, std::string op, std::string path,
                                  std::vector<long long> ids) {
  json::array id_list;
  for (auto id : ids) id_list.push_back(id);
  json::object filter{{"queue", o.queue}, {"ids", id_list}};
  std::string preview_body = json::serialize(json::object{{"filter", filter}, {"dry_run", true}});
  json::object preview_args{{"ids", id_list}};
  auto preview = co_await a.call(op + "_preview", http_verb::post, path,
                                 std::move(preview_body), std::move(preview_args));
  a.record(preview);
  if (!preview.ok()) co_return;
  std::string rid = a.next_request_id();
  std::string reason = "chaos " + rid;
  json::object confirm{{"filter", filter}, {"confirm_token", preview.body.at("confirm_token")},
                       {"reason", reason}};
  if (op == "batch_replay") {
    confirm["delay_seconds"] = 0;
    confirm["rate_per_second"] = 2;  // a run lasts a second or more: the nemesis finds it under way
  }
  json::object args{{"ids", id_list}, {"reason", reason}};
  auto c = co_await a.call(op, http_verb::post, path, json::serialize(confirm), std::move(args), rid);
  json::object res;
  if (c.ok()) {
    auto& answer = c.body.as_object();
    if (auto* v = answer.if_contains("replay_id")) res["replay_id"] = *v;
    if (auto* v = answer.if_contains("dismissed")) res["dismissed"] = *v;
  }
  a.record(c, std::move(res));
}

// The operator: replays and dismisses dead letters one by one and in batches, and purges
// succeeded messages. Each admin call's reason names its request id, for the audit check.
asio::awaitable<void> operator_loop(const Options& o, Actor& a, Client& reader, std::mt19937& rng,
                                    Clock::time_point stop_at) {
  for (long long round = 0; Clock::now() < stop_at; ++round) {
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(150));
    co_await t.async_wait(asio::use_awaitable);
    std::vector<long long> dead;
    try {
      auto list = co_await reader.request(http_verb::get, "/dlq?queue=" + o.queue + "&limit=50");
      if (list.status != 200) continue;
      auto answer = json::parse(list.body);
      for (const auto& m : answer.at("messages").as_array()) dead.push_back(m.at("id").as_int64());
    } catch (const std::exception&) {
      reader.close();
      continue;
    }
    std::shuffle(dead.begin(), dead.end(), rng);
    std::size_t next = 0;
    if (next < dead.size()) co_await admin_single(o, a, "replay", "replay", dead[next++]);
    if (round % 2 == 0 && next < dead.size()) co_await admin_single(o, a, "dismiss", "dismiss", dead[next++]);
    if (round % 4 == 1 && next + 3 <= dead.size()) {
      std::vector<long long> ids(dead.begin() + next, dead.begin() + next + 3);
      co_await admin_batch(o, a, "batch_replay", "/dlq/replay", std::move(ids));
      next += 3;
    }
    if (round % 4 == 3 && next + 2 <= dead.size()) {
      std::vector<long long> ids(dead.begin() + next, dead.begin() + next + 2);
      co_await admin_batch(o, a, "batch_dismiss", "/dlq/dismiss", std::move(ids));
      next += 2;
    }
    if (round % 16 == 5) {
      std::string before = rfc3339(wall_ms() - 2000);
      json::object args{{"before", before}};
      auto c = co_await a.call("purge", http_verb::delete_,
                               messages_path(o) + "?status=succeeded&before=" + before, std::string(),
                               std::move(args));
      json::object res;
      if (c.ok()) res["purged"] = c.body.at("purged");
      a.record(c, std::move(res));
    }
  }
}

}  // namespace

Result chaos_load(const Options& o) {
  asio::io_context ioc;
  History history;
  history.out.open(o.out, std::ios::app);
  if (!history.out) throw std::runtime_error("cannot write " + o.out);
  std::string tag = o.tag.empty() ? std::to_string(wall_ms()) : o.tag;
  auto start = Clock::now();
  auto stop_at = start + std::chrono::milliseconds(static_cast<long long>(o.seconds * 1000));
  // Client i talks to node i % 2 (the same node twice without --producer-port).
  auto endpoint_of = [&](int i) { return i % 2 == 0 ? o.endpoint : o.producer_endpoint; };
  run_concurrently(ioc, o.producers + o.workers + 1, [&](int i) -> asio::awaitable<void> {
    std::string name = tag + (i < o.producers ? "-p" : i < o.producers + o.workers ? "-w" : "-o") +
                       std::to_string(i);
    std::mt19937 rng(static_cast<unsigned>(o.seed * 7919 + i));
    Actor a(ioc.get_executor(), endpoint_of(i), history, name);
    if (i < o.producers) {
      co_await producer(o, a, rng, name, stop_at);
    } else if (i < o.producers + o.workers) {
      co_await worker(o, a, rng, name, stop_at);
    } else {
      Client reader(ioc.get_executor(), o.endpoint);
      reader.set_timeout(std::chrono::seconds(8));
      co_await operator_loop(o, a, reader, rng, stop_at);
    }
  });
  Latencies none;
  Result r = finish("chaos_load", none, history.ok + history.fail + history.info, since(start), "calls");
  r.extra["ok"] = static_cast<double>(history.ok);
  r.extra["fail"] = static_cast<double>(history.fail);
  r.extra["info"] = static_cast<double>(history.info);
  return r;
}

}  // namespace dlq::bench

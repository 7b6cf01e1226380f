// The workloads dlq-bench runs against a live dlqd. Each returns one Result: a rate, latency
// percentiles and workload-specific figures, printed as one JSON object per line.
#pragma once

#include <map>
#include <string>

#include <boost/asio/ip/tcp.hpp>

namespace dlq::bench {

struct Options {
  boost::asio::ip::tcp::endpoint endpoint;
  boost::asio::ip::tcp::endpoint producer_endpoint;  // wakeup: enqueue on another node
  std::string queue;
  int connections = 16;
  int producers = 8;
  int workers = 8;
  int messages = 20000;
  int batch = 100;
  double seconds = 20;
  int rounds = 1000;
  int pollers = 1000;
  int pid = 0;  // dlqd's pid, for the idle measurement
  int payload_bytes = 100;
  std::string expect;  // expect: "ready=20000,succeeded=0" checked against the queue's stats
  std::string target;  // get: the path and query to GET
  std::string out;     // chaos_load: the history file its calls are appended to
  std::string tag;     // chaos_load: prefix of request ids and payload tokens (default: the time)
  int seed = 0;        // chaos_load: seeds each client's choices
  // drain, mixed: acknowledge each message with the worker's next claim (`ack`, http-api B6)
  // instead of a succeed request of its own.
  bool ack_in_claim = false;
};

struct Result {
  std::string workload;
  double rate = 0;          // messages (or requests) per second
  std::string rate_unit;    // "msg/s", "req/s"
  double p50_ms = 0;
  double p99_ms = 0;
  long long count = 0;      // messages or requests done
  double seconds = 0;
  std::map<std::string, double> extra;
};

Result chaos_load(const Options& o);  // chaos_load.cpp
Result run_workload(const std::string& name, const Options& options);
std::string to_json(const Result& r);

}  // namespace dlq::bench

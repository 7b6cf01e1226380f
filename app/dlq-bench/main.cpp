// dlq-bench: the project's load generator. Runs one workload against a running dlqd and prints
// its result as one JSON line on stdout (scripts/bench.sh collects them into a table).
#include <sys/resource.h>

#include <iostream>

#include <boost/asio/ip/address.hpp>
#include <boost/program_options.hpp>

#include "client.hpp"
#include "workloads.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  dlq::bench::Options o;
  std::string workload, host = "127.0.0.1";
  int port = 0, producer_port = 0;
  std::string token;
  po::options_description desc(
      "dlq-bench WORKLOAD --port N [options]\n"
      "workloads: enqueue, batch_enqueue, drain, mixed, dead_letter, healthz, wakeup,\n"
      "           due_accuracy, idle_pollers, idle_connections, claim_latency, get, chaos_load,\n"
      "           expect\nOptions");
  desc.add_options()
      ("help,h", "show this help")
      ("workload", po::value(&workload)->required(), "what to run")
      ("host", po::value(&host), "dlqd address (127.0.0.1)")
      ("port", po::value(&port)->required(), "dlqd port")
      ("producer-port", po::value(&producer_port), "wakeup: enqueue through this node; chaos_load: the second node (default: --port)")
      ("queue", po::value(&o.queue)->default_value("bench"), "queue name")
      ("connections", po::value(&o.connections)->default_value(16), "client connections")
      ("producers", po::value(&o.producers)->default_value(8), "mixed: producer connections")
      ("workers", po::value(&o.workers)->default_value(8), "mixed: worker connections")
      ("messages", po::value(&o.messages)->default_value(20000), "messages to move")
      ("batch", po::value(&o.batch)->default_value(100), "messages per batch request")
      ("seconds", po::value(&o.seconds)->default_value(20), "duration of timed workloads")
      ("rounds", po::value(&o.rounds)->default_value(1000), "wakeup: rounds")
      ("pollers", po::value(&o.pollers)->default_value(1000), "idle_pollers, idle_connections: how many clients")
      ("pid", po::value(&o.pid)->default_value(0), "idle_*: dlqd's pid")
      ("payload-bytes", po::value(&o.payload_bytes)->default_value(100), "payload size")
      ("expect", po::value(&o.expect), "expect: counts such as ready=100,dead=0")
      ("target", po::value(&o.target), "get: the path (and query) to GET, --messages times")
      ("out", po::value(&o.out), "chaos_load: the history file (JSON lines, appended)")
      ("tag", po::value(&o.tag), "chaos_load: prefix of request ids and payload tokens")
      ("seed", po::value(&o.seed)->default_value(0), "chaos_load: seed of the clients' choices")
      ("ack-in-claim", po::bool_switch(&o.ack_in_claim),
       "drain, mixed: acknowledge each message with the next claim (ack) instead of a succeed")
      ("token", po::value(&token), "send Authorization: Bearer TOKEN with every request");
  po::positional_options_description positional;
  positional.add("workload", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "dlq-bench: " << e.what() << "\n" << desc << "\n";
    return 2;
  }
  // Hundreds of parked connections need more descriptors than the usual soft limit.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  dlq::bench::Client::use_token(token);
  o.endpoint = {boost::asio::ip::make_address(host), static_cast<unsigned short>(port)};
  o.producer_endpoint = {o.endpoint.address(),
                         static_cast<unsigned short>(producer_port ? producer_port : port)};
  try {
    auto result = dlq::bench::run_workload(workload, o);
    std::cout << dlq::bench::to_json(result) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dlq-bench " << workload << ": " << e.what() << "\n";
    return 1;
  }
}

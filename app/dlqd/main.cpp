// dlqd: wiring only. config -> store -> core -> http -> run until SIGTERM/SIGINT, then the
// phased shutdown: stop accepting, answer 503, wake long-pollers, let in-flight requests finish
// within a grace period, close connections and the store, exit 0.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>

#include "config/config.hpp"
#include "config/database_url.hpp"
#include "core/access.hpp"
#include "core/leader_heartbeat.hpp"
#include "core/desk.hpp"
#include "core/queue_service.hpp"
#include "core/replay_runner.hpp"
#include "core/retention.hpp"
#include "core/incident_backfill.hpp"
#include "core/task_host.hpp"
#include "core/trials.hpp"
#include "http/api.hpp"
#include "ops/alerts.hpp"
#include "ops/metrics.hpp"
#include "http/lifecycle.hpp"
#include "http/server.hpp"
#include "model/logging.hpp"
#include "model/token_hash.hpp"
#include "store/sql_store.hpp"

namespace asio = boost::asio;
namespace po = boost::program_options;

namespace {

// Dead messages stored before fingerprints (migration 012): start-up gives their backfill up to
// 5 s, so that a small database serves its incidents whole from the first request; the
// incident-backfill task does the rest on the leader.
void start_backfill(dlq::store::Store& store, const dlq::core::Redactor& redactor) {
  asio::io_context boot;
  asio::co_spawn(
      boot, dlq::core::backfill_for(store, redactor, std::chrono::seconds(5)),
      [](std::exception_ptr e, dlq::core::BackfillProgress p) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            dlq::log::error("incident backfill at start-up failed", {{"error", ex.what()}});
          }
          return;
        }
        if (p.written > 0 || !p.done) {
          dlq::log::info("incident backfill at start-up",
                         {{"written", std::to_string(p.written)},
                          {"done", p.done ? "true" : "false"}});
        }
      });
  boot.run();
}

dlq::store::SqliteFaults sqlite_faults(const dlq::Config::Testing::Faults& f) {
  return {.power_loss = f.sqlite_power_loss,
          .power_cut_at_sync = f.power_cut_at_sync,
          .power_cut_tear = f.power_cut_tear,
          .fail_call = f.fail_call,
          .fail_full = f.fail_with == "full"};
}

constexpr auto kShutdownGrace = std::chrono::seconds(10);
constexpr auto kCloseGrace = std::chrono::seconds(5);
constexpr auto kTaskGrace = std::chrono::seconds(5);

struct Options {
  std::optional<std::string> config_path;
  dlq::ConfigOverrides overrides;
  bool print_config = false;
  bool check_config = false;
  bool print_routes = false;
};

// Returns nullopt after printing help; throws po::error on bad flags.
std::optional<Options> parse_flags(int argc, char** argv) {
  po::options_description desc(
      "dlqd: a dead-letter-queue and background-job server\n"
      "Usage: dlqd [options]\n"
      "       dlqd hash-token   (reads a token on stdin, prints its SHA-256 for auth.tokens)\n"
      "Options");
  std::string config_path, listen, db;
  desc.add_options()
      ("help,h", "show this help")
      ("config", po::value(&config_path), "config file (JSON with comments)")
      ("listen", po::value(&listen), "HOST:PORT to listen on (port 0 picks a free port)")
      ("db", po::value(&db), "database URL: sqlite:PATH or postgresql://user@host:port/db")
      ("print-config", "print the merged configuration and exit")
      ("check-config", "validate the configuration and exit")
      ("print-routes", "print the route table (METHOD PATTERN ACCESS per line) and exit")
      ("allow-testing-faults", "accept testing.faults.* (fault tests only: they lose data on "
                               "purpose)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return std::nullopt;
  }
  Options o;
  if (vm.count("config")) o.config_path = config_path;
  if (vm.count("listen")) o.overrides.listen = listen;
  if (vm.count("db")) o.overrides.database_url = db;
  o.print_config = vm.count("print-config") > 0;
  o.check_config = vm.count("check-config") > 0;
  o.print_routes = vm.count("print-routes") > 0;
  o.overrides.allow_testing_faults = vm.count("allow-testing-faults") > 0;
  return o;
}

// Runs on the main context, where the lifecycle's waits must run.
asio::awaitable<void> shutdown_sequence(dlq::http::IoPool& pool, dlq::http::Lifecycle& lifecycle,
                                        dlq::http::Server& server,
                                        dlq::core::QueueService& service,
                                        dlq::core::TaskHost& tasks) {
  dlq::log::info("shutting down");
  lifecycle.begin_shutdown();
  server.stop_accepting();
  service.shutdown();
  const bool drained = co_await lifecycle.requests_drained(kShutdownGrace);
  if (!drained) dlq::log::warn("grace period over; closing connections with requests in flight");
  // Background tasks finish the unit they are in; the store they use closes after them.
  co_await tasks.stop(kTaskGrace);
  server.close_connections();
  // Sessions now end by themselves; if one hangs, stop anyway.
  const bool closed = co_await lifecycle.connections_closed(kCloseGrace);
  if (!closed) {
    dlq::log::warn("connections still open after shutdown; stopping");
    pool.stop();
    co_return;
  }
  pool.release();  // every I/O thread ends once what it still runs is done
}

// SIGHUP's default action ends the process. Held pending from the first line of main (every
// thread started later inherits the mask) until the reload handler exists, so one that arrives
// while the store connects becomes a reload instead.
sigset_t hangup_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  return set;
}

// SIGHUP: auth.tokens and sqs.access_keys (with their secret files) from the config file again,
// together; other keys need a restart. A file that does not load (a secret file that is missing,
// empty or readable by others included), that has no tokens while tokens are in force, or that
// has no access keys while keys are in force, keeps the old tokens and keys: emptying tokens would
// open every route to anyone, on loopback as well, and emptying keys would open the SQS front.
// Only auth.allow_anonymous, in the running config and in the reloaded file, lets a reload empty
// the tokens; nothing lets it empty the keys. `sqs_keys_in_force` counts the keys now in force.
void reload_access(const Options& options, const dlq::Config& running,
                   dlq::core::AccessControl& access, std::size_t& sqs_keys_in_force) {
  if (!options.config_path) {
    dlq::log::warn("SIGHUP: no config file to reload (started without --config)");
    return;
  }
  try {
    dlq::Config fresh = dlq::load_config(options.config_path, options.overrides);
    const bool anonymous_allowed = running.auth.allow_anonymous && fresh.auth.allow_anonymous;
    if (fresh.auth.tokens.empty() && access.enforcing() && !anonymous_allowed) {
      dlq::log::error("SIGHUP: the reloaded config has no tokens, which would open every route "
                      "to anyone; keeping the old tokens and SQS access keys "
                      "(auth.allow_anonymous: true, at start and in the file, allows it)");
      return;
    }
    if (fresh.sqs.access_keys.empty() && sqs_keys_in_force > 0) {
      dlq::log::error("SIGHUP: the reloaded config has no sqs.access_keys, which would open the "
                      "SQS front; keeping the old tokens and SQS access keys (a restart can "
                      "remove them)");
      return;
    }
    access.replace(fresh.auth.tokens);
    access.replace_sqs_keys(fresh.sqs.access_keys);
    sqs_keys_in_force = fresh.sqs.access_keys.size();
    dlq::log::info("access tokens reloaded",
                   {{"tokens", std::to_string(fresh.auth.tokens.size())},
                    {"sqs_access_keys", std::to_string(fresh.sqs.access_keys.size())}});
  } catch (const std::exception& e) {
    dlq::log::error("SIGHUP: config reload failed; keeping the old tokens and SQS access keys",
                    {{"error", e.what()}});
  }
}

int run(const Options& options) {
  dlq::Config config = dlq::load_config(options.config_path, options.overrides);
  if (options.print_config) {
    std::cout << dlq::print_config(config);
    return 0;
  }
  if (options.check_config) {
    std::cout << "config OK\n";
    return 0;
  }
  dlq::log::setup(config.log.level, config.log.format);
  for (const auto& key : config.testing.faults.given) {
    dlq::log::error("testing fault armed: this dlqd loses or refuses writes on purpose",
                    {{"key", "testing.faults." + key}});
  }
  // Every connection is a descriptor: use all the kernel allows us, not the shell's soft limit.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  dlq::store::SqlStoreOptions store_options{
      .target = dlq::parse_database_url(config.database.url,
                                        config.database.connect_timeout_seconds),
      .sqlite_synchronous = config.database.sqlite_synchronous,
      .pool_size = config.database.pool_size,
      .group_commit_max_batch = config.database.group_commit_max_batch,
      .group_commit_max_wait_us = config.database.group_commit_max_wait_us,
      .leader_takeover_ms = dlq::seconds_to_ms(config.database.leader_takeover_seconds),
      .statement_timeout_ms = dlq::seconds_to_ms(config.database.statement_timeout_seconds),
      .sqlite_max_page_count = config.testing.sqlite_max_page_count,
      .sqlite_faults = sqlite_faults(config.testing.faults),
      .answer_before_commit = config.testing.faults.answer_before_commit};
  const int threads = dlq::http::IoPool::io_threads(config.threads);
  if (config.threads > threads) {
    dlq::log::warn("threads lowered to the CPUs available",
                   {{"configured", std::to_string(config.threads)},
                    {"running", std::to_string(threads)}});
  }

  dlq::http::IoPool pool(threads);
  asio::io_context& ioc = pool.main();
  dlq::store::SqlStore store(store_options);
  dlq::SystemClock clock;
  dlq::core::QueueService service(ioc.get_executor(), store, config, clock);
  dlq::core::TaskHost tasks(ioc.get_executor(), clock);
  tasks.add(dlq::core::leader_heartbeat_task(store, store_options.leader_takeover_ms));
  tasks.add(dlq::core::replay_runner_task(store, service));
  tasks.add(dlq::core::retention_task(store, service, config));
  tasks.add(dlq::core::incident_backfill_task(store, service.redactor()));
  start_backfill(store, service.redactor());
  dlq::core::DeadLetterDesk desk(store, service, config, &tasks);
  dlq::core::TrialDesk trials(store, service, config);
  tasks.add(dlq::core::trial_expiry_task(trials));
  dlq::core::AccessControl access(config);
  dlq::ops::Metrics metrics(static_cast<std::size_t>(config.metrics.max_queue_labels));
  service.events().subscribe([&metrics](const dlq::core::Event& e) { metrics.record(e); });
  dlq::ops::Alerts alerts(config, metrics, store.node_id());
  if (alerts.enabled()) {
    service.events().subscribe([&alerts](const dlq::core::Event& e) { alerts.record(e); });
    tasks.add(alerts.delivery_task());
    tasks.add(alerts.threshold_task(service));
  }
  tasks.add(alerts.incident_task(store));  // marks what incidents reach, sent or not
  dlq::http::Lifecycle lifecycle(ioc.get_executor());
  dlq::http::Api api(service, desk, trials, store, tasks, access, metrics, config, lifecycle);
  dlq::http::Server server(pool, api, config, lifecycle);

  std::string bound = server.listen(config.listen);
  api.bound(bound);
  if (!server.bound_to_loopback() && config.auth.tokens.empty() && !config.auth.allow_anonymous) {
    dlq::log::flush();  // the lines logged so far come first
    std::cerr << "dlqd: refusing to listen on " << bound
              << " without access tokens: anyone who can reach it could read and replay every "
                 "message. Configure auth.tokens, listen on a loopback address, or set "
                 "auth.allow_anonymous to true.\n";
    return 2;
  }
  server.start();
  service.start();
  tasks.start();
  store.campaign([&tasks](bool leading) { tasks.set_leader(leading); });

  asio::signal_set reload(ioc, SIGHUP);
  std::size_t sqs_keys_in_force = config.sqs.access_keys.size();
  std::function<void()> await_reload = [&] {
    reload.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      reload_access(options, config, access, sqs_keys_in_force);
      await_reload();
    });
  };
  await_reload();
  // A SIGHUP held since main began is delivered now, to this thread, and runs as a reload.
  const sigset_t hangup = hangup_signal();
  pthread_sigmask(SIG_UNBLOCK, &hangup, nullptr);

  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    reload.cancel();
    asio::co_spawn(ioc, shutdown_sequence(pool, lifecycle, server, service, tasks),
                   asio::detached);
  });

  std::cout << "dlqd listening on http://" << bound << std::endl;
  dlq::log::info("listening", {{"address", bound},
                               {"io_threads", std::to_string(threads)},
                               {"node", store.node_id()},
                               {"access", access.enforcing()
                                              ? std::to_string(access.token_count()) + " tokens"
                                              : std::string("anonymous (loopback only)")},
                               {"database", store_options.target.backend ==
                                                    dlq::DatabaseTarget::Backend::sqlite
                                                ? "sqlite:" + store_options.target.sqlite_path
                                                : std::string("postgresql")}});

  pool.run();
  store.close();
  dlq::log::info("stopped");
  // Connections still counted now are sessions the stopped pool left behind: their frames must
  // not outlive what they point at.
  if (lifecycle.connections() > 0) std::_Exit(0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const sigset_t hangup = hangup_signal();
  pthread_sigmask(SIG_BLOCK, &hangup, nullptr);
  try {
    if (argc == 2 && std::string(argv[1]) == "hash-token") {
      return dlq::hash_token_command(std::cin, std::cout, std::cerr, "dlqd");
    }
    auto options = parse_flags(argc, argv);
    if (!options) return 0;
    if (options->print_routes) {
      // The very table the server binds (http/api.cpp); needs no config or database.
      for (const auto& r : dlq::http::Api::routes()) {
        std::cout << r.method << ' ' << r.pattern << ' ' << dlq::core::to_string(r.access) << '\n';
      }
      return 0;
    }
    return run(*options);
  } catch (const po::error& e) {
    std::cerr << "dlqd: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const dlq::ConfigError& e) {
    std::cerr << "dlqd: invalid configuration:\n" << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    dlq::log::flush();  // the lines logged so far come first
    std::cerr << "dlqd: " << e.what() << "\n";
    return 1;
  }
}

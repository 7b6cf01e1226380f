// The counters, the histograms, the scrape's cache of message counts and the text exposition of
// /metrics.
#include "ops/metrics.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace dlq::ops {

namespace {

// Label values escaped as the text format wants them.
std::string escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The shortest text that reads back as the same double ("0.25", "1796067678.354", "3").
std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

// Writes a family: HELP, TYPE, then one sample per label set.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void sample(std::string_view name, const std::vector<std::string>& keys,
              const std::vector<std::string>& values, double v) {
    out_ += name;
    if (!keys.empty()) {
      out_ += '{';
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i > 0) out_ += ',';
        out_ += keys[i] + "=\"" + escape(values[i]) + '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += number(v);
    out_ += '\n';
  }

  void counter(std::string_view name, std::string_view help, const std::vector<std::string>& keys,
               const Counter& c) {
    family(name, "counter", help);
    for (const auto& [labels, v] : c.values()) sample(name, keys, labels, static_cast<double>(v));
  }

  void histogram(std::string_view name, const std::vector<std::string>& keys,
                 const std::vector<std::string>& values, const Histogram::Snapshot& h) {
    std::vector<std::string> k = keys, v = values;
    k.push_back("le");
    v.emplace_back();
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < Histogram::kBounds.size(); ++i) {
      cumulative += h.counts[i];
      v.back() = number(Histogram::kBounds[i]);
      sample(std::string(name) + "_bucket", k, v, static_cast<double>(cumulative));
    }
    cumulative += h.counts.back();
    v.back() = "+Inf";
    sample(std::string(name) + "_bucket", k, v, static_cast<double>(cumulative));
    sample(std::string(name) + "_sum", keys, values, h.sum_seconds);
    sample(std::string(name) + "_count", keys, values, static_cast<double>(cumulative));
  }

 private:
  std::string& out_;
};

// The process_* basics, from /proc (Linux).
struct ProcessFacts {
  double resident_bytes = 0, virtual_bytes = 0, cpu_seconds = 0, open_fds = 0, max_fds = 0;
};

ProcessFacts read_process() {
  ProcessFacts p;
  long page = sysconf(_SC_PAGESIZE);
  std::ifstream statm("/proc/self/statm");
  double size = 0, resident = 0;
  if (statm >> size >> resident) {
    p.virtual_bytes = size * static_cast<double>(page);
    p.resident_bytes = resident * static_cast<double>(page);
  }
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    p.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') p.open_fds += 1;
    }
    closedir(d);
    p.open_fds -= 1;  // the one opendir held
  }
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) p.max_fds = static_cast<double>(files.rlim_cur);
  return p;
}

double age_seconds(const std::optional<TimeMs>& since, TimeMs now) {
  if (!since) return 0;
  return static_cast<double>(std::max<TimeMs>(0, now - *since)) / 1000.0;
}

}  // namespace

std::string QueueLabels::label(std::string_view queue) {
  std::lock_guard lock(mu_);
  auto it = known_.find(std::string(queue));
  if (it != known_.end()) return *it;
  if (known_.size() >= max_) return "_other";
  return *known_.emplace(queue).first;
}

void Counter::add(std::vector<std::string> labels, std::uint64_t n) {
  std::lock_guard lock(mu_);
  values_[std::move(labels)] += n;
}

std::map<std::vector<std::string>, std::uint64_t> Counter::values() const {
  std::lock_guard lock(mu_);
  return values_;
}

Metrics::Metrics(std::size_t max_queue_labels) : labels_(max_queue_labels) {}

void Metrics::record(const core::Event& e) {
  using K = core::EventKind;
  const Message* m = e.message;
  auto q = [&] { return labels_.label(e.queue); };
  auto n = static_cast<std::uint64_t>(e.count);
  switch (e.kind) {
    case K::enqueued: enqueued_.add({q()}, n); break;
    case K::claimed: claimed_.add({q()}, n); break;
    case K::succeeded:
      succeeded_.add({q()});
      if (m && m->replay_count > 0) replay_outcomes_.add({q(), "succeeded"});
      break;
    case K::failed:
      failed_.add({q(), std::string(m && m->error_class ? to_string(*m->error_class) : "unknown")});
      break;
    case K::dead_lettered:
      dead_lettered_.add(
          {q(), std::string(m && m->dead_reason ? to_string(*m->dead_reason) : "unknown")});
      if (m && m->replay_count > 0) replay_outcomes_.add({q(), "dead_again"});
      break;
    case K::replayed: replayed_.add({q(), std::string(core::to_string(e.mode))}); break;
    case K::lease_expired: lease_expiries_.add({q()}); break;
    case K::purged:
      if (e.by_retention) {
        retention_purged_.add({q(), std::string(e.status ? to_string(*e.status) : "unknown")}, n);
      }
      break;
    case K::dismissed: break;
  }
}

Histogram& Metrics::route_histogram(std::string_view route) {
  std::lock_guard lock(routes_mu_);
  auto it = route_seconds_.find(route);
  if (it == route_seconds_.end()) {
    it = route_seconds_.emplace(std::string(route), std::make_unique<Histogram>()).first;
  }
  return *it->second;
}

void Metrics::http_request(std::string_view route, std::string_view method, int status,
                           std::chrono::nanoseconds took) {
  http_requests_.add({std::string(route), std::string(method), std::to_string(status)});
  route_histogram(route).observe(took);
}

std::optional<Metrics::DatabaseCounts> Metrics::cached_counts(TimeMs now, TimeMs max_age) {
  std::lock_guard lock(stats_mu_);
  if (stats_at_ == 0 || now - stats_at_ >= max_age) return std::nullopt;
  return stats_;
}

void Metrics::keep_counts(DatabaseCounts counts, TimeMs at) {
  std::lock_guard lock(stats_mu_);
  stats_ = std::move(counts);
  stats_at_ = at;
}

std::string Metrics::exposition(const ScrapeInputs& in) {
  std::string out;
  out.reserve(16384);
  Writer w(out);

  // Message counts and ages from the database (as of at most metrics.cache_seconds ago).
  struct Depth {
    long long v[6] = {};
    std::optional<TimeMs> oldest_ready, oldest_dead;
  };
  std::map<std::string, Depth> by_label;
  for (const auto& s : in.queues) {
    Depth& d = by_label[labels_.label(s.queue)];
    long long values[6] = {s.ready, s.scheduled, s.processing, s.dead, s.dismissed, s.succeeded};
    for (int i = 0; i < 6; ++i) d.v[i] += values[i];
    auto older = [](std::optional<TimeMs>& acc, const std::optional<TimeMs>& t) {
      if (t && (!acc || *t < *acc)) acc = t;
    };
    older(d.oldest_ready, s.oldest_ready_since);
    older(d.oldest_dead, s.oldest_dead_at);
  }
  static const char* kStatuses[6] = {"ready", "scheduled", "processing", "dead", "dismissed",
                                     "succeeded"};
  w.family("dlq_messages", "gauge", "Messages per queue and status, from the database.");
  for (const auto& [queue, d] : by_label) {
    for (int i = 0; i < 6; ++i) w.sample("dlq_messages", {"queue", "status"}, {queue, kStatuses[i]}, static_cast<double>(d.v[i]));
  }
  w.family("dlq_oldest_ready_age_seconds", "gauge", "Age of the oldest ready message per queue.");
  for (const auto& [queue, d] : by_label) {
    w.sample("dlq_oldest_ready_age_seconds", {"queue"}, {queue}, age_seconds(d.oldest_ready, in.now));
  }
  w.family("dlq_oldest_dead_age_seconds", "gauge", "Age of the oldest dead message per queue (from dead_at).");
  for (const auto& [queue, d] : by_label) {
    w.sample("dlq_oldest_dead_age_seconds", {"queue"}, {queue}, age_seconds(d.oldest_dead, in.now));
  }

  // Incidents (from the database, as the depths): label values are stored fingerprints, 16 hex
  // digits dlqd made, never worker text.
  w.family("dlq_incidents_open", "gauge", "Incidents with at least one dead message, from the database.");
  w.sample("dlq_incidents_open", {}, {}, static_cast<double>(in.incidents.open));
  w.family("dlq_incident_dead", "gauge",
           "Dead messages of the incidents with the most (metrics.max_incident_labels), the rest under fingerprint=\"_other\".");
  for (const auto& [fingerprint, dead] : in.incidents.top) {
    w.sample("dlq_incident_dead", {"fingerprint"}, {fingerprint}, static_cast<double>(dead));
  }
  if (in.incidents.open > static_cast<long long>(in.incidents.top.size())) {
    w.sample("dlq_incident_dead", {"fingerprint"}, {"_other"}, static_cast<double>(in.incidents.other_dead));
  }

  w.counter("dlq_enqueued_total", "Messages enqueued on this node.", {"queue"}, enqueued_);
  w.counter("dlq_claimed_total", "Messages claimed on this node.", {"queue"}, claimed_);
  w.counter("dlq_succeeded_total", "Messages that succeeded on this node.", {"queue"}, succeeded_);
  w.counter("dlq_failed_total", "Failures reported on this node, by error class.",
            {"queue", "error_class"}, failed_);
  w.counter("dlq_dead_lettered_total", "Messages that went dead on this node, by reason.",
            {"queue", "reason"}, dead_lettered_);
  w.counter("dlq_replayed_total", "Messages replayed on this node (single or batch).",
            {"queue", "mode"}, replayed_);
  w.counter("dlq_replay_outcomes_total",
            "Replayed messages that succeeded or died again, on this node.", {"queue", "outcome"},
            replay_outcomes_);
  w.counter("dlq_lease_expiries_total", "Leases that ran out, reaped on this node.", {"queue"},
            lease_expiries_);
  w.counter("dlq_retention_purged_total", "Messages deleted by retention on this node.",
            {"queue", "status"}, retention_purged_);

  w.family("dlq_long_poll_waiters", "gauge", "Claims parked waiting for work right now.");
  for (const auto& [queue, n] : in.waiters) {
    w.sample("dlq_long_poll_waiters", {"queue"}, {queue}, static_cast<double>(n));
  }

  w.counter("dlq_http_requests_total", "HTTP requests answered, by route template.",
            {"route", "method", "status"}, http_requests_);
  w.family("dlq_http_request_duration_seconds", "histogram",
           "Time from a request's routing to its answer, by route template.");
  {
    std::lock_guard lock(routes_mu_);
    for (const auto& [route, h] : route_seconds_) {
      w.histogram("dlq_http_request_duration_seconds", {"route"}, {route}, h->snapshot());
    }
  }
  // The stages of a write (docs/architecture.md, "Threads"), one histogram each.
  const struct {
    const char* name;
    const char* help;
    const Histogram::Snapshot& seconds;
  } stages[] = {
      {"dlq_store_commit_duration_seconds",
       "Time each write transaction's COMMIT took (its fsync included).",
       in.writes.commit_seconds},
      {"dlq_store_write_wait_seconds",
       "Time each write waited in the queue until its group began (the previous commit).",
       in.writes.wait_seconds},
      {"dlq_store_statements_duration_seconds",
       "Time each write transaction's statements took, BEGIN until COMMIT was sent.",
       in.writes.statements_seconds},
      {"dlq_store_handback_seconds",
       "Time from each write's commit until its request resumed on its I/O thread.",
       in.writes.handback_seconds},
  };
  for (const auto& stage : stages) {
    w.family(stage.name, "histogram", stage.help);
    w.histogram(stage.name, {}, {}, stage.seconds);
  }
  w.family("dlq_store_operations_total", "counter",
           "Write operations applied; several share one commit (group commit).");
  w.sample("dlq_store_operations_total", {}, {}, static_cast<double>(in.writes.operations));
  w.family("dlq_store_commits_total", "counter", "Write transactions committed.");
  w.sample("dlq_store_commits_total", {}, {}, static_cast<double>(in.writes.commits));

  w.family("dlq_alerts_sent_total", "counter", "Alert webhooks delivered.");
  w.sample("dlq_alerts_sent_total", {}, {}, static_cast<double>(alerts_sent_.values()[{}]));
  w.family("dlq_alerts_failed_total", "counter", "Alert webhook deliveries that failed.");
  w.sample("dlq_alerts_failed_total", {}, {}, static_cast<double>(alerts_failed_.values()[{}]));
  w.family("dlq_leader", "gauge", "1 on the node that leads its database (leader-only tasks run here).");
  w.sample("dlq_leader", {}, {}, in.leader ? 1 : 0);
  w.family("dlq_task_runs_total", "counter", "Background task bodies finished, successfully or not.");
  for (const auto& t : in.tasks) w.sample("dlq_task_runs_total", {"task"}, {t.name}, static_cast<double>(t.runs));
  w.family("dlq_task_failures_total", "counter", "Background task bodies that failed (each is retried).");
  for (const auto& t : in.tasks) {
    w.sample("dlq_task_failures_total", {"task"}, {t.name}, static_cast<double>(t.failures));
  }

  auto p = read_process();
  w.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  w.sample("process_resident_memory_bytes", {}, {}, p.resident_bytes);
  w.family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
  w.sample("process_virtual_memory_bytes", {}, {}, p.virtual_bytes);
  w.family("process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.");
  w.sample("process_cpu_seconds_total", {}, {}, p.cpu_seconds);
  w.family("process_open_fds", "gauge", "Number of open file descriptors.");
  w.sample("process_open_fds", {}, {}, p.open_fds);
  w.family("process_max_fds", "gauge", "Maximum number of open file descriptors.");
  w.sample("process_max_fds", {}, {}, p.max_fds);
  w.family("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch in seconds.");
  w.sample("process_start_time_seconds", {}, {},
           std::chrono::duration<double>(started_.time_since_epoch()).count());
  return out;
}

}  // namespace dlq::ops

// The incidents' counts a commit moves: kept prepared, they run with every commit that kills,
// replays, dismisses or deletes a dead message with a fingerprint (the reads:
// incident_desk_sql.cpp; retention: incident_prune_sql.cpp).
#include "store/incident_sql.hpp"

#include <algorithm>
#include <cstdint>

#include <boost/json.hpp>

#include "store/connection.hpp"
#include "store/prepared.hpp"

namespace dlq::store {
namespace json = boost::json;

using soci::into;
using soci::use;

namespace {

// An incident's deaths (and the counts of its members that left) added to its row, created by
// its first death with that death's title, error class and job type.
constexpr const char* kUpsertIncident =
    "INSERT INTO incidents (fingerprint, title, error_class, job_type, dead, replayed, dismissed, "
    "first_dead_at, last_dead_at, last_death_at) VALUES (:fingerprint, :title, :error_class, "
    ":job_type, :dead, :replayed, :dismissed, :first_death, :last_death, :last_death) "
    "ON CONFLICT (fingerprint) DO UPDATE SET dead = incidents.dead + :dead, "
    "alert_level = CASE WHEN incidents.dead + :dead <= 0 THEN 0 ELSE incidents.alert_level END, "
    "replayed = incidents.replayed + :replayed, dismissed = incidents.dismissed + :dismissed, "
    "first_dead_at = CASE WHEN incidents.first_dead_at IS NULL "
    "OR incidents.first_dead_at > :first_death THEN :first_death ELSE incidents.first_dead_at END, "
    "last_dead_at = CASE WHEN incidents.last_dead_at IS NULL "
    "OR incidents.last_dead_at < :last_death THEN :last_death ELSE incidents.last_dead_at END, "
    "last_death_at = CASE WHEN incidents.last_death_at < :last_death THEN :last_death "
    "ELSE incidents.last_death_at END";

struct UpsertIncident {
  std::string fingerprint, title;
  std::optional<std::string> error_class, job_type;
  long long dead = 0, replayed = 0, dismissed = 0, first_death = 0, last_death = 0;

  static std::string sql(const Dialect&) { return kUpsertIncident; }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(fingerprint, "fingerprint"));
    st.exchange(use(title, "title"));
    st.exchange(use(error_class, "error_class"));
    st.exchange(use(job_type, "job_type"));
    st.exchange(use(dead, "dead"));
    st.exchange(use(replayed, "replayed"));
    st.exchange(use(dismissed, "dismissed"));
    st.exchange(use(first_death, "first_death"));
    st.exchange(use(last_death, "last_death"));
  }
};

// Members left and none died: the row exists (its members' deaths made it). One that empties it
// forgets what its alerts told (alert_level, migration 015): its next death opens it again.
struct ExitIncident {
  std::string fingerprint;
  long long dead = 0, replayed = 0, dismissed = 0;

  static std::string sql(const Dialect&) {
    return "UPDATE incidents SET dead = dead + :dead, replayed = replayed + :replayed, "
           "dismissed = dismissed + :dismissed, "
           "alert_level = CASE WHEN dead + :dead <= 0 THEN 0 ELSE alert_level END "
           "WHERE fingerprint = :fingerprint";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(dead, "dead"));
    st.exchange(use(replayed, "replayed"));
    st.exchange(use(dismissed, "dismissed"));
    st.exchange(use(fingerprint, "fingerprint"));
  }
};

// first/last_dead_at read again from the dead messages (two probes of the (fingerprint, dead_at)
// index). Run after the row is locked by this transaction's own change to it, so that on
// PostgreSQL (READ COMMITTED) its snapshot, taken when this statement starts, holds the messages
// of every transaction that changed the row before: the last to commit sees everything.
struct RereadDeadTimes {
  std::string fingerprint;

  static std::string sql(const Dialect&) {
    return "UPDATE incidents SET "
           "first_dead_at = (SELECT MIN(dead_at) FROM messages "
           "WHERE fingerprint = :fingerprint AND status = 'dead'), "
           "last_dead_at = (SELECT MAX(dead_at) FROM messages "
           "WHERE fingerprint = :fingerprint AND status = 'dead') "
           "WHERE fingerprint = :fingerprint";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(fingerprint, "fingerprint"));
  }
};

struct AddQueue {
  std::string fingerprint, queue;
  long long n = 0;

  static std::string sql(const Dialect&) {
    return "INSERT INTO incident_queues (fingerprint, queue, dead) VALUES (:fingerprint, :queue, :n) "
           "ON CONFLICT (fingerprint, queue) DO UPDATE SET dead = incident_queues.dead + :n";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(fingerprint, "fingerprint"));
    st.exchange(use(queue, "queue"));
    st.exchange(use(n, "n"));
  }
};

struct LowerQueue {
  std::string fingerprint, queue;
  long long n = 0;

  static std::string sql(const Dialect&) {
    return "UPDATE incident_queues SET dead = dead - :n "
           "WHERE fingerprint = :fingerprint AND queue = :queue";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(n, "n"));
    st.exchange(use(fingerprint, "fingerprint"));
    st.exchange(use(queue, "queue"));
  }
};

struct AddHour {
  std::string fingerprint;
  long long hour = 0, n = 0;

  static std::string sql(const Dialect&) {
    return "INSERT INTO incident_hours (fingerprint, hour, count) VALUES (:fingerprint, :hour, :n) "
           "ON CONFLICT (fingerprint, hour) DO UPDATE SET count = incident_hours.count + :n";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(fingerprint, "fingerprint"));
    st.exchange(use(hour, "hour"));
    st.exchange(use(n, "n"));
  }
};

// PostgreSQL, a commit whose incidents only gained deaths (a backfill batch, a group of failures
// of many causes): each table's rows in one statement over a JSON array of them, in key order
// (`seq`), instead of a round trip per row; the same upserts as the statements above. SQLite runs
// in-process, where a statement costs no round trip: it keeps those.
struct AddDeathsAtOnce {
  std::string rows;

  static std::string sql(const Dialect&) {
    return "INSERT INTO incidents (fingerprint, title, error_class, job_type, dead, replayed, "
           "dismissed, first_dead_at, last_dead_at, last_death_at) "
           "SELECT v.fingerprint, v.title, v.error_class, v.job_type, v.dead, 0, 0, v.first_death, "
           "v.last_death, v.last_death FROM json_to_recordset(CAST(:rows AS JSON)) AS v(seq BIGINT, "
           "fingerprint TEXT, title TEXT, error_class TEXT, job_type TEXT, dead BIGINT, "
           "first_death BIGINT, last_death BIGINT) ORDER BY v.seq "
           "ON CONFLICT (fingerprint) DO UPDATE SET dead = incidents.dead + EXCLUDED.dead, "
           "first_dead_at = CASE WHEN incidents.first_dead_at IS NULL "
           "OR incidents.first_dead_at > EXCLUDED.first_dead_at THEN EXCLUDED.first_dead_at "
           "ELSE incidents.first_dead_at END, "
           "last_dead_at = CASE WHEN incidents.last_dead_at IS NULL "
           "OR incidents.last_dead_at < EXCLUDED.last_dead_at THEN EXCLUDED.last_dead_at "
           "ELSE incidents.last_dead_at END, "
           "last_death_at = GREATEST(incidents.last_death_at, EXCLUDED.last_death_at)";
  }
  void exchange(soci::statement& st, const Dialect&) { st.exchange(use(rows, "rows")); }
};

struct AddQueuesAtOnce {
  std::string rows;

  static std::string sql(const Dialect&) {
    return "INSERT INTO incident_queues (fingerprint, queue, dead) SELECT v.fingerprint, v.queue, "
           "v.n FROM json_to_recordset(CAST(:rows AS JSON)) AS v(seq BIGINT, fingerprint TEXT, "
           "queue TEXT, n BIGINT) ORDER BY v.seq ON CONFLICT (fingerprint, queue) "
           "DO UPDATE SET dead = incident_queues.dead + EXCLUDED.dead";
  }
  void exchange(soci::statement& st, const Dialect&) { st.exchange(use(rows, "rows")); }
};

struct AddHoursAtOnce {
  std::string rows;

  static std::string sql(const Dialect&) {
    return "INSERT INTO incident_hours (fingerprint, hour, count) SELECT v.fingerprint, v.hour, "
           "v.n FROM json_to_recordset(CAST(:rows AS JSON)) AS v(seq BIGINT, fingerprint TEXT, "
           "hour BIGINT, n BIGINT) ORDER BY v.seq ON CONFLICT (fingerprint, hour) "
           "DO UPDATE SET count = incident_hours.count + EXCLUDED.count";
  }
  void exchange(soci::statement& st, const Dialect&) { st.exchange(use(rows, "rows")); }
};

// Text as a PostgreSQL text parameter holds it: up to its first NUL (libpq's strings end there,
// and JSON's escaped NUL cannot become text).
json::value pg_text(const std::string& s) { return json::value(json::string_view(s.c_str())); }
json::value pg_text(const std::optional<std::string>& s) {
  return s ? pg_text(*s) : json::value(nullptr);
}


}  // namespace

struct IncidentSql::Statements {
  Prepared<UpsertIncident> upsert;
  Prepared<ExitIncident> exit;
  Prepared<RereadDeadTimes> reread;
  Prepared<AddQueue> add_queue;
  Prepared<LowerQueue> lower_queue;
  Prepared<AddHour> add_hour;
  Prepared<AddDeathsAtOnce> deaths_at_once;
  Prepared<AddQueuesAtOnce> queues_at_once;
  Prepared<AddHoursAtOnce> hours_at_once;
};

IncidentSql::IncidentSql(Connection& c) : c_(c), kept_(std::make_unique<Statements>()) {}

IncidentSql::~IncidentSql() = default;

// ---- counting --------------------------------------------------------------------------------

void IncidentSql::note_change(const Message& before, const Message& after) {
  bool was_dead = before.status == Status::dead, is_dead = after.status == Status::dead;
  if (!was_dead && is_dead && after.fingerprint && after.dead_at) {
    IncidentDeath d;
    d.fingerprint = *after.fingerprint;
    d.title = after.title.value_or("");
    // A lease expiry's or a receive count's incident has no error class (the message keeps its
    // earlier failure's).
    if (after.error_class && after.dead_reason != DeadReason::lease_expired &&
        after.dead_reason != DeadReason::max_receive_count) {
      d.error_class = std::string(to_string(*after.error_class));
    }
    d.job_type = after.job_type;
    d.queue = after.queue;
    d.dead_at = *after.dead_at;
    note_death(d);
  } else if (was_dead && !is_dead && before.fingerprint) {
    note_exit(*before.fingerprint, before.queue,
              after.status == Status::dismissed ? IncidentExit::dismissed : IncidentExit::replayed);
  }
}

void IncidentSql::note_death(const IncidentDeath& d) {
  auto [it, created] = incidents_.try_emplace(d.fingerprint);
  Pending& p = it->second;
  if (!p.first_death) {  // the first death this transaction saw names a new incident
    p.title = d.title;
    p.error_class = d.error_class;
    p.job_type = d.job_type;
  }
  p.dead += 1;
  p.first_death = std::min(p.first_death.value_or(d.dead_at), d.dead_at);
  p.last_death = std::max(p.last_death.value_or(d.dead_at), d.dead_at);
  queues_[{d.fingerprint, d.queue}] += 1;
  hours_[{d.fingerprint, d.dead_at / kMillisPerHour * kMillisPerHour}] += 1;
}

void IncidentSql::note_exit(const std::string& fingerprint, const std::string& queue,
                            IncidentExit how) {
  Pending& p = incidents_[fingerprint];
  p.dead -= 1;
  if (how == IncidentExit::replayed) p.replayed += 1;
  if (how == IncidentExit::dismissed) p.dismissed += 1;
  p.exited = true;
  queues_[{fingerprint, queue}] -= 1;
}

void IncidentSql::discard_pending() {
  incidents_.clear();
  queues_.clear();
  hours_.clear();
}

void IncidentSql::before_commit() {
  if (incidents_.empty()) return;
  bool only_deaths = std::all_of(incidents_.begin(), incidents_.end(), [](const auto& kv) {
    return kv.second.first_death && !kv.second.exited;
  });
  if (only_deaths && !c_.is_sqlite()) {
    write_deaths_at_once();
  } else {
    write_each();
  }
  discard_pending();
}

void IncidentSql::write_deaths_at_once() {
  json::array incidents, queues, hours;
  std::int64_t seq = 0;
  for (const auto& [fingerprint, p] : incidents_) {
    incidents.push_back(json::object{{"seq", seq++},
                                     {"fingerprint", pg_text(fingerprint)},
                                     {"title", pg_text(p.title)},
                                     {"error_class", pg_text(p.error_class)},
                                     {"job_type", pg_text(p.job_type)},
                                     {"dead", p.dead},
                                     {"first_death", *p.first_death},
                                     {"last_death", *p.last_death}});
  }
  seq = 0;
  for (const auto& [key, n] : queues_) {
    queues.push_back(json::object{{"seq", seq++},
                                  {"fingerprint", pg_text(key.first)},
                                  {"queue", pg_text(key.second)},
                                  {"n", n}});
  }
  seq = 0;
  for (const auto& [key, n] : hours_) {
    hours.push_back(json::object{
        {"seq", seq++}, {"fingerprint", pg_text(key.first)}, {"hour", key.second}, {"n", n}});
  }
  kept_->deaths_at_once.binds().rows = json::serialize(incidents);
  run_once(c_, kept_->deaths_at_once.on(c_));
  kept_->queues_at_once.binds().rows = json::serialize(queues);
  run_once(c_, kept_->queues_at_once.on(c_));
  kept_->hours_at_once.binds().rows = json::serialize(hours);
  run_once(c_, kept_->hours_at_once.on(c_));
}

void IncidentSql::write_each() {
  for (const auto& [fingerprint, p] : incidents_) {
    if (p.first_death) {
      auto& s = kept_->upsert;
      auto& b = s.binds();
      b.fingerprint = fingerprint;
      b.title = p.title;
      b.error_class = p.error_class;
      b.job_type = p.job_type;
      b.dead = p.dead;
      b.replayed = p.replayed;
      b.dismissed = p.dismissed;
      b.first_death = *p.first_death;
      b.last_death = *p.last_death;
      run_once(c_, s.on(c_));
    } else {
      auto& s = kept_->exit;
      auto& b = s.binds();
      b.fingerprint = fingerprint;
      b.dead = p.dead;
      b.replayed = p.replayed;
      b.dismissed = p.dismissed;
      run_once(c_, s.on(c_));
    }
    if (p.exited) {
      kept_->reread.binds().fingerprint = fingerprint;
      run_once(c_, kept_->reread.on(c_));
    }
  }
  for (const auto& [key, n] : queues_) {
    if (n > 0) {
      auto& b = kept_->add_queue.binds();
      b.fingerprint = key.first;
      b.queue = key.second;
      b.n = n;
      run_once(c_, kept_->add_queue.on(c_));
    } else if (n < 0) {
      auto& b = kept_->lower_queue.binds();
      b.fingerprint = key.first;
      b.queue = key.second;
      b.n = -n;
      run_once(c_, kept_->lower_queue.on(c_));
    }
  }
  for (const auto& [key, n] : hours_) {
    auto& b = kept_->add_hour.binds();
    b.fingerprint = key.first;
    b.hour = key.second;
    b.n = n;
    run_once(c_, kept_->add_hour.on(c_));
  }
}


}  // namespace dlq::store

// The incidents as operators see them: the list and the entry of GET /dlq/incidents, with their
// queues, hours and sample ids, and the gauges of /metrics.
#include "store/incident_desk_sql.hpp"

#include <algorithm>
#include <map>

#include <boost/json.hpp>

#include "store/audit_sql.hpp"
#include "store/connection.hpp"
#include "store/prepared.hpp"

namespace dlq::store {
namespace json = boost::json;

using soci::into;
using soci::use;

namespace {

constexpr const char* kIncidentColumns =
    "i.fingerprint, i.title, i.error_class, i.job_type, i.dead, i.replayed, i.dismissed, "
    "i.first_dead_at, i.last_dead_at, i.last_death_at, i.muted_until, i.mute_reason";

// One row of kIncidentColumns.
struct IncidentRow {
  std::string fingerprint, title;
  std::optional<std::string> error_class, job_type;
  long long dead = 0, replayed = 0, dismissed = 0, last_death_at = 0;
  std::optional<long long> first_dead_at, last_dead_at, muted_until;
  std::optional<std::string> mute_reason;

  void exchange_into(soci::statement& st) {
    st.exchange(into(fingerprint));
    st.exchange(into(title));
    st.exchange(into(error_class));
    st.exchange(into(job_type));
    st.exchange(into(dead));
    st.exchange(into(replayed));
    st.exchange(into(dismissed));
    st.exchange(into(first_dead_at));
    st.exchange(into(last_dead_at));
    st.exchange(into(last_death_at));
    st.exchange(into(muted_until));
    st.exchange(into(mute_reason));
  }
  Incident to_incident() const {
    Incident i;
    i.fingerprint = fingerprint;
    i.title = title;
    if (error_class) i.error_class = parse_error_class(*error_class);
    i.job_type = job_type;
    i.dead = dead;
    i.replayed = replayed;
    i.dismissed = dismissed;
    i.first_dead_at = first_dead_at;
    i.last_dead_at = last_dead_at;
    i.last_death_at = last_death_at;
    i.muted_until = muted_until;
    i.mute_reason = mute_reason;
    return i;
  }
};

// An incident's highest dead ids (the (fingerprint, id) index, read backwards).
struct SampleIds {
  std::string fingerprint;
  long long id = 0;

  static std::string sql(const Dialect&) {
    return "SELECT id FROM messages WHERE fingerprint = :fingerprint AND status = 'dead' "
           "ORDER BY id DESC LIMIT 3";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(into(id));
    st.exchange(use(fingerprint, "fingerprint"));
  }
};

const char* sort_column(IncidentSort s) {
  return s == IncidentSort::dead ? "i.dead" : "i.last_dead_at";
}

}  // namespace

struct IncidentDeskSql::Statements {
  Prepared<SampleIds> samples;
};

IncidentDeskSql::IncidentDeskSql(Connection& c, AuditSql& audit)
    : c_(c), audit_(audit), kept_(std::make_unique<Statements>()) {}

IncidentDeskSql::~IncidentDeskSql() = default;

std::vector<Incident> IncidentDeskSql::list(const IncidentQuery& q) {
  std::string sql = std::string("SELECT ") + kIncidentColumns + " FROM incidents i WHERE i.dead > 0";
  if (q.job_type) sql += " AND i.job_type = :job_type";
  if (q.error_class) sql += " AND i.error_class = :error_class";
  if (q.queue) {
    sql += " AND EXISTS (SELECT 1 FROM incident_queues iq WHERE iq.fingerprint = i.fingerprint "
           "AND iq.queue = :queue AND iq.dead > 0)";
  }
  if (q.since || q.until) {
    // The incident's span first (its row), then one probe of its dead messages' dead_at.
    std::string window;
    if (q.since) {
      sql += " AND i.last_dead_at >= :since";
      window += " AND m.dead_at >= :since";
    }
    if (q.until) {
      sql += " AND i.first_dead_at <= :until";
      window += " AND m.dead_at <= :until";
    }
    sql += " AND EXISTS (SELECT 1 FROM messages m WHERE m.fingerprint = i.fingerprint "
           "AND m.status = 'dead'" + window + ")";
  }
  const std::string column = sort_column(q.sort);
  if (q.after) {
    sql += " AND (" + column + " < :after_value OR (" + column +
           " = :after_value AND i.fingerprint > :after_fingerprint))";
  }
  sql += " ORDER BY " + column + " DESC, i.fingerprint LIMIT :limit";

  std::string job_type = q.job_type.value_or(""), queue = q.queue.value_or("");
  std::string error_class = q.error_class ? std::string(to_string(*q.error_class)) : "";
  long long since = q.since.value_or(0), until = q.until.value_or(0), limit = q.limit;
  long long after_value = q.after ? q.after->value : 0;
  std::string after_fingerprint = q.after ? q.after->fingerprint : "";
  IncidentRow row;
  std::vector<Incident> out;
  soci::statement st = prepare_call(c_, sql, [&](soci::statement& s) {
    row.exchange_into(s);
    if (q.job_type) s.exchange(use(job_type, "job_type"));
    if (q.error_class) s.exchange(use(error_class, "error_class"));
    if (q.queue) s.exchange(use(queue, "queue"));
    if (q.since) s.exchange(use(since, "since"));
    if (q.until) s.exchange(use(until, "until"));
    if (q.after) {
      s.exchange(use(after_value, "after_value"));
      s.exchange(use(after_fingerprint, "after_fingerprint"));
    }
    s.exchange(use(limit, "limit"));
  });
  for_each_row(c_, st, [&] { out.push_back(row.to_incident()); });
  complete(out, q.from_hour, q.hours);
  return out;
}

std::optional<Incident> IncidentDeskSql::find(const std::string& fingerprint, TimeMs from_hour,
                                          int hours) {
  std::string fp = fingerprint;
  IncidentRow row;
  soci::statement st = prepare_call(
      c_, std::string("SELECT ") + kIncidentColumns +
              " FROM incidents i WHERE i.fingerprint = :fingerprint AND i.dead > 0",
      [&](soci::statement& s) {
        row.exchange_into(s);
        s.exchange(use(fp, "fingerprint"));
      });
  if (!run_once(c_, st)) return std::nullopt;
  std::vector<Incident> one{row.to_incident()};
  complete(one, from_hour, hours);
  return std::move(one.front());
}

// Two reads of the incidents with dead messages: their number and dead in all, then the largest
// through incidents_by_dead.
IncidentGauges IncidentDeskSql::gauges(int top) {
  IncidentGauges out;
  long long all_dead = 0;
  {
    soci::statement st = prepare_call(
        c_, "SELECT COUNT(*), COALESCE(SUM(dead), 0) FROM incidents WHERE dead > 0",
        [&](soci::statement& s) {
          s.exchange(into(out.open));
          s.exchange(into(all_dead));
        });
    run_once(c_, st);
  }
  long long limit = top, dead = 0, shown = 0;
  std::string fingerprint;
  if (limit > 0) {
    soci::statement st = prepare_call(
        c_, "SELECT fingerprint, dead FROM incidents WHERE dead > 0 ORDER BY dead DESC, "
            "fingerprint LIMIT :top",
        [&](soci::statement& s) {
          s.exchange(into(fingerprint));
          s.exchange(into(dead));
          s.exchange(use(limit, "top"));
        });
    for_each_row(c_, st, [&] {
      out.top.emplace_back(fingerprint, dead);
      shown += dead;
    });
  }
  out.other_dead = all_dead - shown;
  return out;
}

// The row locked while its previous mute is read, so that the audit entry names the mute this
// one replaced even when two operators mute at once.
std::optional<IncidentMuted> IncidentDeskSql::mute(const IncidentMuteParams& p) {
  std::string fingerprint = p.fingerprint;
  long long found = 0;
  std::optional<long long> stored;
  soci::statement st = prepare_call(
      c_, "SELECT 1, muted_until FROM incidents WHERE fingerprint = :fingerprint" +
              c_.dialect().for_update,
      [&](soci::statement& s) {
        s.exchange(into(found));
        s.exchange(into(stored));
        s.exchange(use(fingerprint, "fingerprint"));
      });
  if (!run_once(c_, st)) return std::nullopt;
  std::optional<TimeMs> previous;
  if (stored && *stored > p.now) previous = *stored;
  IncidentMuted out{p.fingerprint, p.until, p.until ? p.reason : std::nullopt};
  std::optional<long long> until = out.muted_until;
  c_.session() << "UPDATE incidents SET muted_until = :until, mute_reason = :reason "
                  "WHERE fingerprint = :fingerprint",
      use(until, "until"), use(out.mute_reason, "reason"), use(fingerprint, "fingerprint");
  audit_.append(p.audit(previous));
  return out;
}

// One read of the due incidents, then each marked under its row lock in fingerprint order (the
// order every commit locks incidents in) if no other leader marked it since the read.
std::vector<IncidentAlert> IncidentDeskSql::alert(const IncidentAlertParams& p) {
  struct Due {
    std::string fingerprint;
    long long dead = 0, level = 0;
    bool silent = false;
  };
  std::vector<Due> due;
  {
    Due row;
    std::optional<long long> muted_until;
    long long now = p.now, sent_before = p.sent_before, limit = p.limit, send = p.send ? 1 : 0;
    soci::statement st = prepare_call(
        c_, "SELECT fingerprint, dead, alert_level, muted_until FROM incidents "
            "WHERE dead > 0 AND (alert_level = 0 OR dead >= alert_level * 10) "
            "AND (:send = 0 OR alert_sent_at IS NULL OR alert_sent_at <= :sent_before "
            "OR muted_until > :now) ORDER BY last_death_at, fingerprint LIMIT :limit",
        [&](soci::statement& s) {
          s.exchange(into(row.fingerprint));
          s.exchange(into(row.dead));
          s.exchange(into(row.level));
          s.exchange(into(muted_until));
          s.exchange(use(send, "send"));
          s.exchange(use(sent_before, "sent_before"));
          s.exchange(use(now, "now"));
          s.exchange(use(limit, "limit"));
        });
    for_each_row(c_, st, [&] {
      row.silent = !p.send || (muted_until && *muted_until > p.now);
      due.push_back(row);
    });
  }
  std::sort(due.begin(), due.end(),
            [](const Due& a, const Due& b) { return a.fingerprint < b.fingerprint; });
  std::vector<IncidentAlert> out;
  for (const auto& d : due) {
    std::string fingerprint = d.fingerprint;
    long long old_level = d.level, level = incident_alert_level(d.dead), now = p.now;
    int silent = d.silent ? 1 : 0;
    soci::statement mark = prepare_call(
        c_, "UPDATE incidents SET alert_level = :level, alert_sent_at = CASE WHEN :silent = 1 "
            "THEN alert_sent_at ELSE :now END WHERE fingerprint = :fingerprint "
            "AND alert_level = :old_level AND dead > 0",
        [&](soci::statement& s) {
          s.exchange(use(level, "level"));
          s.exchange(use(silent, "silent"));
          s.exchange(use(now, "now"));
          s.exchange(use(fingerprint, "fingerprint"));
          s.exchange(use(old_level, "old_level"));
        });
    mark.execute(true);
    bool marked = mark.get_affected_rows() > 0;
    c_.finish(mark);
    if (!marked || d.silent) continue;
    auto entry = find(fingerprint, p.from_hour, p.hours);
    if (!entry) continue;
    IncidentAlert a;
    if (old_level > 0) a.threshold = level;
    a.incident = std::move(*entry);
    out.push_back(std::move(a));
  }
  return out;
}

// Two statements for the page's queues and hours, one index probe per incident for its samples.
void IncidentDeskSql::complete(std::vector<Incident>& incidents, TimeMs from_hour, int hours) {
  if (incidents.empty()) return;
  std::map<std::string, Incident*> by_fingerprint;
  json::array list;
  for (auto& i : incidents) {
    by_fingerprint[i.fingerprint] = &i;
    list.emplace_back(i.fingerprint);
    i.per_hour.assign(static_cast<std::size_t>(hours), 0);
  }
  std::string fingerprints = json::serialize(list);
  const std::string in = " IN (" + c_.dialect().json_texts("fingerprints") + ")";
  std::string fingerprint, queue;
  long long n = 0, hour = 0;
  {
    soci::statement st = prepare_call(
        c_, "SELECT fingerprint, queue, dead FROM incident_queues WHERE fingerprint" + in +
                " AND dead > 0",
        [&](soci::statement& s) {
          s.exchange(into(fingerprint));
          s.exchange(into(queue));
          s.exchange(into(n));
          s.exchange(use(fingerprints, "fingerprints"));
        });
    for_each_row(c_, st, [&] { by_fingerprint.at(fingerprint)->queues.emplace_back(queue, n); });
  }
  long long from = from_hour, until = from_hour + hours * kMillisPerHour;
  {
    soci::statement st = prepare_call(
        c_, "SELECT fingerprint, hour, count FROM incident_hours WHERE fingerprint" + in +
                " AND hour >= :from AND hour < :until",
        [&](soci::statement& s) {
          s.exchange(into(fingerprint));
          s.exchange(into(hour));
          s.exchange(into(n));
          s.exchange(use(fingerprints, "fingerprints"));
          s.exchange(use(from, "from"));
          s.exchange(use(until, "until"));
        });
    for_each_row(c_, st, [&] {
      auto i = (hour - from_hour) / kMillisPerHour;
      if (i >= 0 && i < hours) by_fingerprint.at(fingerprint)->per_hour[static_cast<std::size_t>(i)] += n;
    });
  }
  auto& samples = kept_->samples;
  for (auto& i : incidents) {
    std::sort(i.queues.begin(), i.queues.end());  // by name, in byte order
    samples.binds().fingerprint = i.fingerprint;
    for_each_row(c_, samples.on(c_), [&] { i.sample_ids.push_back(samples.binds().id); });
  }
}

}  // namespace dlq::store

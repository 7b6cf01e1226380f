// The effects' statements beside their named binds.
#include "store/effect_sql.hpp"

#include <stdexcept>

#include "store/prepared.hpp"

namespace dlq::store {

using soci::into;
using soci::use;

namespace {

// One row of `effects`, read or written.
struct EffectRow {
  static constexpr const char* kColumns =
      "effect_key, state, description, result, attempt, recorded_at, resolved_by";

  std::string key, state;
  std::optional<std::string> description, result, resolved_by;
  long long attempt = 0, recorded_at = 0;

  void exchange_into(soci::statement& st) {
    st.exchange(into(key));
    st.exchange(into(state));
    st.exchange(into(description));
    st.exchange(into(result));
    st.exchange(into(attempt));
    st.exchange(into(recorded_at));
    st.exchange(into(resolved_by));
  }
  Effect to_effect() const {
    auto s = parse_effect_state(state);
    if (!s) throw std::runtime_error("unknown effect state in database: " + state);
    return Effect{key, *s, description, result, static_cast<int>(attempt), recorded_at,
                  resolved_by};
  }
  void assign(const Effect& e) {
    key = e.key;
    state = std::string(to_string(e.state));
    description = e.description;
    result = e.result;
    attempt = e.attempt;
    recorded_at = e.recorded_at;
    resolved_by = e.resolved_by;
  }
};

struct SelectAll {
  EffectRow row;
  long long id = 0;

  static std::string sql(const Dialect&) {
    return std::string("SELECT ") + EffectRow::kColumns +
           " FROM effects WHERE message_id = :id ORDER BY effect_key";
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(id, "id"));
  }
};

struct SelectOne {
  EffectRow row;
  long long id = 0;
  std::string key;

  static std::string sql(const Dialect&) {
    return std::string("SELECT ") + EffectRow::kColumns +
           " FROM effects WHERE message_id = :id AND effect_key = :key";
  }
  void exchange(soci::statement& st, const Dialect&) {
    row.exchange_into(st);
    st.exchange(use(id, "id"));
    st.exchange(use(key, "key"));
  }
};

// A new key, or a changed one (SQLite and PostgreSQL both name the refused row `excluded`).
struct Upsert {
  EffectRow row;
  long long id = 0;

  static std::string sql(const Dialect&) {
    return "INSERT INTO effects (message_id, effect_key, state, description, result, attempt, "
           "recorded_at, resolved_by) VALUES (:id, :key, :state, :description, :result, "
           ":attempt, :recorded_at, :resolved_by) ON CONFLICT (message_id, effect_key) DO UPDATE "
           "SET state = excluded.state, description = excluded.description, "
           "result = excluded.result, attempt = excluded.attempt, "
           "recorded_at = excluded.recorded_at, resolved_by = excluded.resolved_by";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(id, "id"));
    st.exchange(use(row.key, "key"));
    st.exchange(use(row.state, "state"));
    st.exchange(use(row.description, "description"));
    st.exchange(use(row.result, "result"));
    st.exchange(use(row.attempt, "attempt"));
    st.exchange(use(row.recorded_at, "recorded_at"));
    st.exchange(use(row.resolved_by, "resolved_by"));
  }
};

struct DeleteOne {
  long long id = 0;
  std::string key;

  static std::string sql(const Dialect&) {
    return "DELETE FROM effects WHERE message_id = :id AND effect_key = :key";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(id, "id"));
    st.exchange(use(key, "key"));
  }
};

struct SetCount {
  long long id = 0, count = 0;

  static std::string sql(const Dialect&) {
    return "UPDATE messages SET effect_count = :count WHERE id = :id";
  }
  void exchange(soci::statement& st, const Dialect&) {
    st.exchange(use(count, "count"));
    st.exchange(use(id, "id"));
  }
};

}  // namespace

struct EffectSql::Statements {
  Prepared<SelectAll> all;
  Prepared<SelectOne> one;
  Prepared<Upsert> upsert;
  Prepared<DeleteOne> remove;
  Prepared<SetCount> count;
};

EffectSql::EffectSql(Connection& c) : c_(c), kept_(std::make_unique<Statements>()) {}

EffectSql::~EffectSql() = default;

std::vector<Effect> EffectSql::of(MessageId id) {
  auto& s = kept_->all;
  s.binds().id = id;
  std::vector<Effect> out;
  for_each_row(c_, s.on(c_), [&] { out.push_back(s.binds().row.to_effect()); });
  return out;
}

Result<EffectOutcome> EffectSql::record(const Message& current, const EffectParams& p) {
  auto& one = kept_->one;
  one.binds().id = current.id;
  one.binds().key = p.key;
  std::optional<Effect> existing;
  if (run_once(c_, one.on(c_))) existing = one.binds().row.to_effect();
  auto outcome = p.decide(current, existing);
  if (!outcome) return outcome;
  long long count = current.effect_count;
  switch (outcome->op) {
    case EffectOutcome::Op::keep:
      return outcome;
    case EffectOutcome::Op::put: {
      auto& s = kept_->upsert;
      s.binds().id = current.id;
      s.binds().row.assign(outcome->effect);
      run_once(c_, s.on(c_));
      if (!existing) ++count;
      break;
    }
    case EffectOutcome::Op::remove: {
      if (!existing) return outcome;
      auto& s = kept_->remove;
      s.binds().id = current.id;
      s.binds().key = p.key;
      run_once(c_, s.on(c_));
      --count;
      break;
    }
  }
  auto& s = kept_->count;
  s.binds().id = current.id;
  s.binds().count = count;
  run_once(c_, s.on(c_));
  return outcome;
}

void EffectSql::resolve(MessageId id, const std::vector<EffectResolution>& resolutions) {
  for (const auto& r : resolutions) {
    if (r.done) {
      std::string key = r.key;
      std::optional<std::string> actor = r.actor;
      long long in_id = id, at = r.at;
      c_.session() << "UPDATE effects SET state = 'done', result = NULL, resolved_by = :actor, "
                      "recorded_at = :at WHERE message_id = :id AND effect_key = :key",
          use(actor, "actor"), use(at, "at"), use(in_id, "id"), use(key, "key");
    } else {
      auto& s = kept_->remove;
      s.binds().id = id;
      s.binds().key = r.key;
      run_once(c_, s.on(c_));
    }
  }
}

std::vector<MessageId> EffectSql::started_message_ids() {
  long long id = 0;
  auto st = prepare_call(c_,
                         "SELECT DISTINCT message_id FROM effects WHERE state = 'started' "
                         "ORDER BY message_id",
                         [&](soci::statement& s) { s.exchange(into(id)); });
  std::vector<MessageId> out;
  for_each_row(c_, st, [&] { out.push_back(id); });
  return out;
}

void EffectSql::delete_for(const std::string& id_list) {
  std::string ids = id_list;
  c_.session() << "DELETE FROM effects WHERE message_id IN (" + c_.dialect().json_ids("ids") + ")",
      use(ids, "ids");
}

}  // namespace dlq::store

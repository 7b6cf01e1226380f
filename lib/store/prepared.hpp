// Statements with their SQL and their binds side by side. Prepared<S> keeps a statement for the
// connection's life (the hot paths: prepared once, executed many times); prepare_call builds one
// whose text depends on the call (filters). Every `use` names its placeholder, so a bind cannot
// land in another column: SOCI matches each name to its placeholder and refuses one it lacks.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <soci/soci.h>

#include "store/connection.hpp"
#include "store/soci_optional.hpp"

namespace dlq::store {

// `S` holds a statement's buffers and says what it is: `static std::string sql(const Dialect&)`
// and `void exchange(soci::statement&, const Dialect&)`, which registers its into elements (in
// column order) and its named use elements. An `S` with `static constexpr long long
// kReplanFrom = N` is prepared again after N runs, then after 2N, 4N and so on, so that the plan
// PostgreSQL caches for it (made at the fifth run of each preparation) was made after at least
// half of its runs: for a statement whose plan depends on a table's size, where the table may
// grow from nearly empty (a fresh database) while the connection lives. A preparation costs one
// statement and five plans, a few dozen times in a connection's life.
template <class S>
class Prepared {
 public:
  // The buffers: fill the inputs before executing, read the outputs after each fetch.
  S& binds() { return binds_; }

  // The statement, prepared on first use on `c` (always the same connection); run it once per
  // call.
  soci::statement& on(Connection& c) {
    if (replan_from() > 0 && runs_++ == next_plan_) {
      next_plan_ = next_plan_ > 0 ? next_plan_ * 2 : replan_from();
      statement_.reset();  // deallocated: the next preparation is planned afresh
    }
    if (!statement_) {
      statement_.emplace(c.session());
      binds_.exchange(*statement_, c.dialect());
      statement_->alloc();
      statement_->prepare(S::sql(c.dialect()));
      statement_->define_and_bind();
    }
    return *statement_;
  }

 private:
  static constexpr long long replan_from() {
    if constexpr (requires { S::kReplanFrom; }) {
      return S::kReplanFrom;
    } else {
      return 0;
    }
  }

  S binds_;
  long long runs_ = 0;       // runs on this connection
  long long next_plan_ = 0;  // kReplanFrom: the run count at which it is prepared again
  std::optional<soci::statement> statement_;
};

// A statement for this call only: `exchange(st)` registers its into and use elements, whose
// variables must outlive its execution.
template <class Exchange>
soci::statement prepare_call(Connection& c, const std::string& sql, Exchange&& exchange) {
  soci::statement st(c.session());
  std::forward<Exchange>(exchange)(st);
  st.alloc();
  st.prepare(sql);
  st.define_and_bind();
  return st;
}

// Runs `st`, calling `each()` after every row fetched, and leaves no cursor open.
template <class Each>
void for_each_row(Connection& c, soci::statement& st, Each&& each) {
  st.execute(false);
  while (st.fetch()) each();
  c.finish(st);
}

// Runs `st` for its first row (or none, or a statement without results): whether it had one.
inline bool run_once(Connection& c, soci::statement& st) {
  bool got = st.execute(true);
  c.finish(st);
  return got;
}

}  // namespace dlq::store

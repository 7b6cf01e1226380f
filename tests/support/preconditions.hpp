// Boost.Test preconditions on the backend under test: a test that only makes sense on one
// database is reported as skipped on the other (never as passed).
#pragma once

#include <boost/test/unit_test.hpp>

#include "support/pg_admin.hpp"

namespace dlq::test {

inline boost::test_tools::assertion_result on_postgresql(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(test_backend() == Backend::postgresql);
  r.message() << "needs the PostgreSQL backend";
  return r;
}

inline boost::test_tools::assertion_result on_sqlite(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(test_backend() == Backend::sqlite);
  r.message() << "needs the SQLite backend";
  return r;
}

}  // namespace dlq::test

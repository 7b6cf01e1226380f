// The store conformance suite: written once, run against real SQLite and real PostgreSQL
// (DLQ_TEST_BACKEND), each test on a fresh database.
#define BOOST_TEST_MODULE dlq store conformance
#include <boost/test/unit_test.hpp>

// The fault tests (issue 37): power loss, every I/O and database call failing once, damaged
// files. They start the real dlqd with testing.faults armed (--allow-testing-faults) and read what
// it leaves behind. ctest runs them as faults_sqlite and faults_postgres (DLQ_TEST_BACKEND).
#define BOOST_TEST_MODULE dlq faults
#include <boost/test/unit_test.hpp>

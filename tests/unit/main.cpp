// Unit tests: core logic with a controllable clock; no HTTP, no processes.
#define BOOST_TEST_MODULE dlq unit tests
#include <boost/test/unit_test.hpp>

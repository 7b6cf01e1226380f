// Integration tests: the real dlqd on port 0, real HTTP, exact status codes and bodies.
#define BOOST_TEST_MODULE dlq integration tests
#include <boost/test/unit_test.hpp>

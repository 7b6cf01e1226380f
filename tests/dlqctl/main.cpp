// dlqctl end to end: the real dlqctl binary, run as a subprocess against a real dlqd.
#define BOOST_TEST_MODULE dlqctl tests
#include <boost/test/unit_test.hpp>

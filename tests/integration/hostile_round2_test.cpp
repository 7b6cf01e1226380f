// Issue 31, hostile input round two: what an adversary found on the operator's side after the
// first round (issue 16). Each section below is one group of the items; each keeps its
// helpers in a namespace of its own and its cases in a suite of its own. Raw sockets where the
// bytes matter, the real dlqd throughout, both databases where the store is involved.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

// ---------------------------------------------------------------------------------------------
// Items 1, 2 and 14: the method label, Host and Origin, two Authorization headers.
// ---------------------------------------------------------------------------------------------

// (end of items 1, 2 and 14)

// ---------------------------------------------------------------------------------------------
// Item 3: slow readers of /dlq, batch claims and /audit.
// ---------------------------------------------------------------------------------------------

// (end of item 3)

// ---------------------------------------------------------------------------------------------
// Item 5: folded releases and paged attempts.
// ---------------------------------------------------------------------------------------------

// (end of item 5)

// ---------------------------------------------------------------------------------------------
// Items 6 and 15: the number of queues and of previews.
// ---------------------------------------------------------------------------------------------

// (end of items 6 and 15)

// ---------------------------------------------------------------------------------------------
// Items 7 to 11: signals at start-up, reloads, logs and file modes.
// ---------------------------------------------------------------------------------------------

// (end of items 7 to 11)

// ---------------------------------------------------------------------------------------------
// Items 12 and 13: what the server returns for the UI and dlqctl to show (redaction).
// ---------------------------------------------------------------------------------------------

// (end of items 12 and 13)

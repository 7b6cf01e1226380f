// The wake-up scheduler's list of messages becoming due, without a database: earliest due time
// first (arrival order among equal times), and what a full list keeps.
#include <boost/test/unit_test.hpp>

#include "core/wake_scheduler.hpp"

using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kT = 4102444800000;  // 2100-01-01

using Queues = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(wake_scheduler)

BOOST_AUTO_TEST_CASE(due_messages_come_out_earliest_first) {
  DueEvents due(100);
  BOOST_TEST(!due.earliest().has_value());
  BOOST_TEST(due.add("c", kT + 300));
  BOOST_TEST(due.add("a", kT + 100));
  BOOST_TEST(due.add("b", kT + 200));
  BOOST_TEST(due.add("a2", kT + 100));  // the same instant: after the one announced first
  BOOST_TEST(due.size() == 4u);
  BOOST_TEST(*due.earliest() == kT + 100);

  BOOST_TEST(due.take_due(kT + 99).empty());  // nothing is due a moment early
  BOOST_TEST(due.take_due(kT + 200) == Queues({"a", "a2", "b"}));
  BOOST_TEST(*due.earliest() == kT + 300);
  BOOST_TEST(due.take_due(kT + 200).empty());  // taken once
  BOOST_TEST(due.take_due(kT + 1000) == Queues({"c"}));
  BOOST_TEST(!due.earliest().has_value());
  BOOST_TEST(due.size() == 0u);
}

BOOST_AUTO_TEST_CASE(one_entry_per_message_even_for_the_same_queue) {
  DueEvents due(100);
  due.add("q", kT + 10);
  due.add("q", kT + 10);
  due.add("q", kT + 5);
  BOOST_TEST(due.take_due(kT + 10) == Queues({"q", "q", "q"}));  // three claimers to wake
}

BOOST_AUTO_TEST_CASE(a_full_list_keeps_the_earliest_entries) {
  DueEvents due(2);
  BOOST_TEST(due.add("a", kT + 100));
  BOOST_TEST(due.add("b", kT + 300));
  // Later than everything it holds: dropped (the refresh from the database finds it).
  BOOST_TEST(!due.add("late", kT + 400));
  BOOST_TEST(!due.add("tie", kT + 300));
  // Earlier: the latest entry gives way.
  BOOST_TEST(due.add("d", kT + 200));
  BOOST_TEST(due.size() == 2u);
  BOOST_TEST(due.take_due(kT + 1000) == Queues({"a", "d"}));
}

BOOST_AUTO_TEST_SUITE_END()

// A store's life on both databases: it answers ping once open, each store (each dlqd node) has
// an id of its own, and once closed it takes no more work: operations throw instead of hanging.
#include <boost/test/unit_test.hpp>

#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store_lifecycle, StoreFixture)

BOOST_AUTO_TEST_CASE(each_store_has_a_node_id_of_its_own) {
  auto other = open_another();
  const std::string mine = store->node_id();
  BOOST_TEST(!mine.empty());
  BOOST_TEST(other->node_id() != mine);
  BOOST_TEST(store->node_id() == mine);  // for the life of the process
  other->close();
}

BOOST_AUTO_TEST_CASE(a_closed_store_refuses_work) {
  Message m = insert("q", "kept", T);
  BOOST_TEST(wait(store->ping()));
  store->close();
  BOOST_CHECK_THROW(insert("q", "after close", T), ShuttingDown);
  BOOST_CHECK_THROW(wait(store->message_find("q", m.id)), ShuttingDown);
  BOOST_CHECK_THROW(wait(store->ping()), ShuttingDown);
  store->close();  // a second close is harmless (the fixture closes once more)
  // What was committed before the close is there for the next store.
  store = open_another();
  BOOST_TEST(wait(store->message_find("q", m.id))->payload == "kept");
}

BOOST_AUTO_TEST_SUITE_END()

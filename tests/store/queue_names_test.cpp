// The queues that hold messages (limits.max_queues, GET /queues) on both databases: a new name
// over the limit is refused without failing the writes it shares a commit with, a purge that
// empties a queue frees its name, and pages come in byte order of the names.
#include <boost/test/unit_test.hpp>

#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;
namespace asio = boost::asio;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

store::InsertParams one_message(const std::string& queue, long long max_queues) {
  store::NewMessage n;
  n.payload = "p";
  return {queue, {n}, T, max_queues};
}

bool refused_for_limit(const Result<std::vector<store::Inserted>>& r) {
  return !r && r.error().code == Errc::validation_failed && r.error().fields.size() == 1 &&
         r.error().fields[0].field == "queue" && r.error().fields[0].code == "limit";
}

std::vector<std::string> names_of(const std::vector<store::QueueStats>& page) {
  std::vector<std::string> out;
  for (const auto& s : page) out.push_back(s.queue);
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(queue_names, StoreFixture)

BOOST_AUTO_TEST_CASE(a_refused_name_fails_alone_in_its_group_commit) {
  BOOST_REQUIRE(wait(store->messages_insert(one_message("known", 3))));
  // Writes queued together share transactions: 40 to the known queue and 6 new names, 2 of
  // which fit under the limit of 3.
  std::vector<std::future<Result<std::vector<store::Inserted>>>> known, fresh;
  for (int i = 0; i < 40; ++i) {
    known.push_back(asio::co_spawn(ioc, store->messages_insert(one_message("known", 3)),
                                   asio::use_future));
    if (i % 7 == 0) {
      fresh.push_back(asio::co_spawn(
          ioc, store->messages_insert(one_message("new" + std::to_string(i), 3)), asio::use_future));
    }
  }
  ioc.restart();
  auto settle = [&](auto& f) {
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    return f.get();
  };
  for (auto& f : known) BOOST_TEST(settle(f).has_value());
  int admitted = 0, refused = 0;
  for (auto& f : fresh) {
    auto r = settle(f);
    if (r) ++admitted;
    if (refused_for_limit(r)) ++refused;
  }
  BOOST_TEST(admitted == 2);
  BOOST_TEST(refused == 4);
  auto page = wait(store->queues_page({std::nullopt, 100, T}));
  BOOST_TEST(page.size() == 3u);
  for (const auto& s : page) {
    if (s.queue == "known") BOOST_TEST(s.ready == 41);
  }
  // Without a limit every name is admitted.
  BOOST_TEST(wait(store->messages_insert(one_message("unlimited", 0))).has_value());
}

BOOST_AUTO_TEST_CASE(a_purge_that_empties_a_queue_frees_its_name) {
  for (const char* q : {"a", "b"}) BOOST_REQUIRE(wait(store->messages_insert(one_message(q, 2))));
  BOOST_TEST(refused_for_limit(wait(store->messages_insert(one_message("c", 2)))));
  auto claimed = claim("b", T);
  BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
  store::UpdateParams u{"b", claimed[0].id,
                        [](const Message& m, const store::Related&) -> Result<store::Change> {
                          store::Change c;
                          c.next = m;
                          c.next.status = Status::succeeded;
                          c.next.status_at = T;
                          return c;
                        }};
  BOOST_REQUIRE(wait(store->message_update(u)));
  store::PurgeParams p;
  p.status = Status::succeeded;
  p.before = T + 1;
  p.queue = "b";
  BOOST_TEST(wait(store->messages_purge(p)).total == 1);
  BOOST_TEST(names_of(wait(store->queues_page({std::nullopt, 100, T}))) ==
             std::vector<std::string>({"a"}));
  BOOST_TEST(wait(store->messages_insert(one_message("c", 2))).has_value());
  // A purge that leaves messages behind keeps the name.
  BOOST_TEST(names_of(wait(store->queues_page({std::nullopt, 100, T}))) ==
             std::vector<std::string>({"a", "c"}));
}

BOOST_AUTO_TEST_CASE(pages_come_in_byte_order_with_each_queues_counts) {
  for (const char* q : {"qax", "q_x", "q0x", "qAx", "q-x"}) {
    BOOST_REQUIRE(wait(store->messages_insert(one_message(q, 0))));
  }
  BOOST_REQUIRE(wait(store->messages_insert(one_message("qAx", 0))));
  auto first = wait(store->queues_page({std::nullopt, 2, T}));
  BOOST_TEST(names_of(first) == std::vector<std::string>({"q-x", "q0x"}));
  auto second = wait(store->queues_page({std::string("q0x"), 2, T}));
  BOOST_TEST(names_of(second) == std::vector<std::string>({"qAx", "q_x"}));
  BOOST_TEST(second.at(0).ready == 2);
  BOOST_TEST(second.at(1).ready == 1);
  auto last = wait(store->queues_page({std::string("q_x"), 2, T}));
  BOOST_TEST(names_of(last) == std::vector<std::string>({"qax"}));
}

BOOST_AUTO_TEST_SUITE_END()

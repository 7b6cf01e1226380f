// The dead-letter desk's view across queues on both databases: GET /dlq's filter, each member on
// its own and together, its id-ordered pages, and the matched set a batch action takes (in id or
// dead_at order, counted by job type, with its first messages as a sample).
#include <boost/test/unit_test.hpp>

#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

using Ids = std::vector<MessageId>;

core::FailInput failure(ErrorClass cls, bool retryable) {
  core::FailInput in;
  in.error = "boom";
  in.error_class = cls;
  in.retryable = retryable;
  return in;
}

store::NewMessage of_type(std::optional<std::string> job_type) {
  store::NewMessage n;
  n.job_type = std::move(job_type);
  return n;
}

}  // namespace

struct DeskFixture : StoreFixture {
  // The page's ids; its refs (GET /dlq's page fixed by ids) name the same messages and queues.
  Ids dead_ids(store::DeadFilter filter, int limit = 20, std::optional<MessageId> after = {}) {
    Ids out;
    std::vector<std::pair<MessageId, std::string>> expected;
    for (const auto& m : wait(store->messages_dead({filter, limit, after}))) {
      BOOST_TEST(to_string(m.status) == "dead");
      out.push_back(m.id);
      expected.emplace_back(m.id, m.queue);
    }
    std::vector<std::pair<MessageId, std::string>> refs;
    for (const auto& r : wait(store->messages_dead_refs({std::move(filter), limit, after}))) {
      refs.emplace_back(r.id, r.queue);
    }
    BOOST_TEST((refs == expected));
    return out;
  }
};

BOOST_FIXTURE_TEST_SUITE(store_desk, DeskFixture)

// Four dead messages, dying in another order than their ids; a pending and a dismissed one that
// no filter may return.
BOOST_AUTO_TEST_CASE(each_filter_member_narrows_the_dead_view) {
  const Message m1 = dead_message_at("a", "1", T + 300, of_type("email"),
                                     failure(ErrorClass::transient, true));
  const Message m2 = dead_message_at("a", "2", T + 100, of_type("sms"),
                                     failure(ErrorClass::timeout, false));
  const Message m3 = dead_message_at("b", "3", T + 400, of_type("email"),
                                     failure(ErrorClass::transient, false));
  const Message m4 = dead_message_at("b", "4", T + 200, of_type(std::nullopt),
                                     failure(ErrorClass::unknown, true));
  const Message dismissed = dead_message_at("a", "5", T + 250, of_type("email"),
                                            failure(ErrorClass::transient, true));
  store::UpdateParams dismiss;
  dismiss.queue = "a";
  dismiss.id = dismissed.id;
  dismiss.decide = [](const Message& m, const store::Related&) {
    return core::dismiss(m, std::nullopt, std::nullopt, T + 500);
  };
  BOOST_REQUIRE(wait(store->message_update(dismiss)).has_value());
  const Message pending = insert("a", "pending", T, of_type("email"));
  BOOST_REQUIRE((m2.dead_reason == DeadReason::non_retryable));
  BOOST_REQUIRE((m1.dead_reason == DeadReason::retries_exhausted));

  BOOST_TEST((dead_ids({}) == Ids{m1.id, m2.id, m3.id, m4.id}));
  store::DeadFilter f;
  f.queue = "a";
  BOOST_TEST((dead_ids(f) == Ids{m1.id, m2.id}));
  f = {};
  f.job_type = "email";
  BOOST_TEST((dead_ids(f) == Ids{m1.id, m3.id}));
  f = {};
  f.error_class = ErrorClass::transient;
  BOOST_TEST((dead_ids(f) == Ids{m1.id, m3.id}));
  f = {};
  f.dead_reason = DeadReason::non_retryable;
  BOOST_TEST((dead_ids(f) == Ids{m2.id, m3.id}));
  f = {};
  f.since = T + 200;  // inclusive
  BOOST_TEST((dead_ids(f) == Ids{m1.id, m3.id, m4.id}));
  f = {};
  f.until = T + 300;  // inclusive
  BOOST_TEST((dead_ids(f) == Ids{m1.id, m2.id, m4.id}));
  f.since = T + 200;
  BOOST_TEST((dead_ids(f) == Ids{m1.id, m4.id}));
  f = {};
  f.ids = {m4.id, pending.id, m2.id, dismissed.id, m4.id + 1000};
  BOOST_TEST((dead_ids(f) == Ids{m2.id, m4.id}));
  // Together, every member must hold.
  f = {};
  f.queue = "b";
  f.job_type = "email";
  BOOST_TEST((dead_ids(f) == Ids{m3.id}));
  f.error_class = ErrorClass::timeout;
  BOOST_TEST(dead_ids(f).empty());
}

BOOST_AUTO_TEST_CASE(the_dead_view_pages_in_id_order_after_after_id) {
  Ids all;
  for (TimeMs dies : {T + 500, T + 100, T + 400, T + 200, T + 300}) {
    all.push_back(dead_message_at("q", "p", dies).id);
  }
  insert("q", "pending", T);
  BOOST_TEST((dead_ids({}, 2) == Ids{all[0], all[1]}));
  BOOST_TEST((dead_ids({}, 2, all[1]) == Ids{all[2], all[3]}));
  BOOST_TEST((dead_ids({}, 2, all[3]) == Ids{all[4]}));
  BOOST_TEST(dead_ids({}, 2, all[4]).empty());
  BOOST_TEST((dead_ids({}, 100) == all));
  // after_id need not be a dead message's id.
  BOOST_TEST((dead_ids({}, 1, all[2] - 1) == Ids{all[2]}));
}

BOOST_AUTO_TEST_CASE(a_match_takes_id_or_dead_at_order_and_counts_job_types) {
  const MessageId m1 = dead_message_at("a", "1", T + 300, of_type("email")).id;
  const MessageId m2 = dead_message_at("a", "2", T + 100, of_type("sms")).id;
  const MessageId m3 = dead_message_at("b", "3", T + 400, of_type("email")).id;
  const MessageId m4 = dead_message_at("b", "4", T + 200, of_type(std::nullopt)).id;
  const MessageId m5 = dead_message_at("b", "5", T + 100, of_type("email")).id;  // ties m2
  const MessageId m6 = dead_message_at("a", "6", T + 250, of_type("sms")).id;
  insert("a", "pending", T, of_type("email"));

  store::DeadMatchParams p;
  p.sample = 10;
  auto by_id = wait(store->dead_match(p));
  BOOST_TEST((by_id.ids == Ids{m1, m2, m3, m4, m5, m6}));
  p.dead_at_order = true;
  auto by_death = wait(store->dead_match(p));
  // dead_at, then id among messages that died at the same time.
  BOOST_TEST((by_death.ids == Ids{m2, m5, m4, m6, m1, m3}));

  // Most frequent first (the names' order would be none, email, sms).
  using Counts = std::vector<std::pair<std::optional<std::string>, long long>>;
  BOOST_TEST((by_id.by_job_type ==
              Counts{{std::string("email"), 3}, {std::string("sms"), 2}, {std::nullopt, 1}}));
  BOOST_TEST((by_death.by_job_type == by_id.by_job_type));

  // The filter applies to the matched set and its counts alike.
  p.filter.queue = "a";
  auto in_a = wait(store->dead_match(p));
  BOOST_TEST((in_a.ids == Ids{m2, m6, m1}));
  BOOST_TEST((in_a.by_job_type == Counts{{std::string("sms"), 2}, {std::string("email"), 1}}));
}

BOOST_AUTO_TEST_CASE(a_match_samples_its_first_messages_in_its_order) {
  const Message m1 = dead_message_at("a", "first", T + 300);
  const Message m2 = dead_message_at("b", "second", T + 100);
  const Message m3 = dead_message_at("a", "third", T + 200);
  store::DeadMatchParams p;
  p.sample = 2;
  auto by_id = wait(store->dead_match(p));
  BOOST_TEST(by_id.ids.size() == 3u);
  BOOST_REQUIRE_EQUAL(by_id.sample.size(), 2u);
  BOOST_TEST(by_id.sample[0].id == m1.id);
  BOOST_TEST(by_id.sample[0].payload == "first");
  BOOST_TEST(by_id.sample[1].id == m2.id);
  BOOST_TEST(by_id.sample[1].queue == "b");  // sampled across queues
  BOOST_TEST((by_id.sample[1].dead_at == T + 100));

  p.dead_at_order = true;
  auto by_death = wait(store->dead_match(p));
  BOOST_REQUIRE_EQUAL(by_death.sample.size(), 2u);
  BOOST_TEST(by_death.sample[0].id == m2.id);
  BOOST_TEST(by_death.sample[1].id == m3.id);

  p.sample = 0;
  BOOST_TEST(wait(store->dead_match(p)).sample.empty());
  p.sample = 10;
  BOOST_TEST(wait(store->dead_match(p)).sample.size() == 3u);
  p.filter.job_type = "none of these";
  auto none = wait(store->dead_match(p));
  BOOST_TEST(none.ids.empty());
  BOOST_TEST(none.by_job_type.empty());
  BOOST_TEST(none.sample.empty());
}

BOOST_AUTO_TEST_SUITE_END()

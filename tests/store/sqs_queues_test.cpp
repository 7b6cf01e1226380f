// The SQS front's queue registry (sqs_queues, migration 019) on both databases: a change decided
// under the row's lock, the count limits.max_queues is held to, pages by prefix in byte order,
// deletion, a queue's dead letters, an SQS message's attributes, and a retention purge that keeps
// what is not due yet.
#include <boost/test/unit_test.hpp>

#include "store/store_fixture.hpp"

using namespace dlq;
using namespace dlq::test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

// Creates `name` unless it exists; returns the row afterwards.
store::DecideSqsQueue create(const std::string& name, long long* in_use_seen = nullptr) {
  return [name, in_use_seen](const std::optional<store::SqsQueueRow>& existing,
                             long long in_use) -> Result<store::SqsQueueChange> {
    if (in_use_seen) *in_use_seen = in_use;
    if (existing) return store::SqsQueueChange{};
    store::SqsQueueRow row;
    row.name = name;
    row.attributes = R"({"VisibilityTimeout":"40"})";
    row.created_at = T;
    row.updated_at = T;
    return store::SqsQueueChange{true, row};
  };
}

std::vector<std::string> names(const std::vector<store::SqsQueueRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.name);
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(sqs_queues, StoreFixture)

BOOST_AUTO_TEST_CASE(a_change_is_decided_on_the_row_and_counts_every_queue_name) {
  insert("dlqonly", "p", T);  // a queue holding messages counts toward limits.max_queues
  long long in_use = -1;
  auto made = wait(store->sqs_queue_change("orders", create("orders", &in_use)));
  BOOST_REQUIRE(made && *made);
  BOOST_TEST(in_use == 1);
  BOOST_TEST((*made)->attributes == R"({"VisibilityTimeout":"40"})");
  // Again: the decision sees the row, writes nothing and answers it as it is.
  auto again = wait(store->sqs_queue_change("orders", create("orders", &in_use)));
  BOOST_REQUIRE(again && *again);
  BOOST_TEST((*again)->created_at == T);
  auto found = wait(store->sqs_queue_find("orders"));
  BOOST_REQUIRE(found);
  BOOST_TEST(found->tags == "{}");
  BOOST_TEST(!wait(store->sqs_queue_find("nope")));
  // A refusal writes nothing.
  store::DecideSqsQueue refuse = [](const std::optional<store::SqsQueueRow>&,
                                    long long) -> Result<store::SqsQueueChange> {
    return Error(Errc::invalid_state, "no");
  };
  BOOST_TEST(!wait(store->sqs_queue_change("refused", refuse)));
  BOOST_TEST(!wait(store->sqs_queue_find("refused")));
  wait(store->sqs_queue_change("later", create("later", &in_use)));
  BOOST_TEST(in_use == 2);  // orders and dlqonly
}

// limits.max_queues counts registered names when a send admits a new one, but never the queue's
// own name: a first send to a queue CreateQueue made is not refused for it.
BOOST_AUTO_TEST_CASE(a_first_send_counts_registered_names) {
  wait(store->sqs_queue_change("registered", create("registered")));
  store::NewMessage n;
  n.payload = "p";
  auto other = wait(store->messages_insert({"unregistered", {n}, T, 1}));
  BOOST_TEST(!other);
  auto own = wait(store->messages_insert({"registered", {n}, T, 1}));
  BOOST_TEST(own.has_value());
}

BOOST_AUTO_TEST_CASE(pages_come_by_prefix_in_byte_order_and_deleted_names_go) {
  for (const std::string n : {"b-1", "B-2", "a", "b-3", "b_4", "c"}) {
    wait(store->sqs_queue_change(n, create(n)));
  }
  store::SqsQueuePage all;
  BOOST_TEST(names(wait(store->sqs_queues_page(all))) ==
             (std::vector<std::string>{"B-2", "a", "b-1", "b-3", "b_4", "c"}));
  store::SqsQueuePage prefixed;
  prefixed.prefix = "b-";
  prefixed.limit = 1;
  BOOST_TEST(names(wait(store->sqs_queues_page(prefixed))) == (std::vector<std::string>{"b-1"}));
  prefixed.after = "b-1";
  prefixed.limit = 10;
  BOOST_TEST(names(wait(store->sqs_queues_page(prefixed))) == (std::vector<std::string>{"b-3"}));
  BOOST_TEST(wait(store->sqs_queue_delete("b-3")));
  BOOST_TEST(!wait(store->sqs_queue_delete("b-3")));
  BOOST_TEST(wait(store->sqs_queues_page(prefixed)).empty());
}

BOOST_AUTO_TEST_CASE(dead_letters_are_counted_per_queue) {
  dead_message("jobs", "one");
  dead_message("jobs", "two");
  insert("jobs", "alive", T);
  BOOST_TEST(wait(store->dead_count("jobs")) == 2);
  BOOST_TEST(wait(store->dead_count("other")) == 0);
}

BOOST_AUTO_TEST_CASE(message_attributes_are_kept_with_the_message) {
  store::NewMessage with;
  with.sqs_attributes = R"({"City":{"DataType":"String","StringValue":"Any City"}})";
  Message m = insert("attrs", "body", T, with);
  auto found = wait(store->message_find("attrs", m.id));
  BOOST_REQUIRE(found);
  BOOST_TEST(found->sqs_attributes.value_or("") == *with.sqs_attributes);
  BOOST_TEST(!wait(store->message_find("attrs", insert("attrs", "plain", T).id))->sqs_attributes);
}

BOOST_AUTO_TEST_CASE(a_retention_purge_keeps_what_is_not_due_or_too_young) {
  Message old_due = insert("ret", "old", T);
  store::NewMessage later;
  later.run_at = T + 3600000;
  Message old_later = insert("ret", "old but scheduled", T, later);
  Message young = insert("ret", "young", T + 600000);
  store::PurgeParams p;
  p.status = Status::pending;
  p.before = T + 700001;
  p.queue = "ret";
  p.created_before = T + 300000;  // old_due and old_later are older
  p.due_by = T + 700000;          // old_later is not due yet
  auto purged = wait(store->messages_purge(p));
  BOOST_TEST(purged.total == 1);
  BOOST_TEST(!wait(store->message_find("ret", old_due.id)));
  BOOST_TEST(wait(store->message_find("ret", old_later.id)).has_value());
  BOOST_TEST(wait(store->message_find("ret", young.id)).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

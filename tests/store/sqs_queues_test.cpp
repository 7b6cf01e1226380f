// The SQS front's queue registry (sqs_queues, migration 019) on both databases: a change decided
// under the row's lock, the count limits.max_queues is held to, pages by prefix in byte order,
// deletion, a queue's dead letters, an SQS message's attributes, a retention purge that keeps
// what is not due yet; and (issue 39) a dead-letter queue's view of the dead letters stamped with
// it, and a move task's run started once per filter.
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

// A dead letter of `queue` at `at`, stamped with the dead-letter queue `dlq` as a death under a
// RedrivePolicy stamps it.
Message stamped(StoreFixture& f, const std::string& queue, const std::string& payload, TimeMs at,
                const std::string& dlq) {
  Message m = f.dead_message_at(queue, payload, at);
  store::UpdateParams u;
  u.queue = queue;
  u.id = m.id;
  u.decide = [dlq](const Message& current, const store::Related&) -> Result<store::Change> {
    store::Change c{current, {}, std::nullopt};
    c.next.dead_letter_queue = dlq;
    return c;
  };
  auto done = f.wait(f.store->message_update(u));
  if (!done) throw std::runtime_error("stamping failed: " + done.error().message);
  return *done;
}

std::vector<MessageId> ids(const std::vector<Message>& ms) {
  std::vector<MessageId> out;
  for (const auto& m : ms) out.push_back(m.id);
  return out;
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

// A DLQ receive takes the shown dead letters oldest death first and hides them under its receipt;
// a hiding moves only under the latest receipt; the counts split shown from hidden.
BOOST_AUTO_TEST_CASE(a_dead_letter_queue_receives_hides_and_counts_its_dead_letters) {
  Message first = stamped(*this, "src-a", "one", T, "dlq");
  Message second = stamped(*this, "src-b", "two", T + 10, "dlq");
  stamped(*this, "src-c", "elsewhere", T + 20, "other-dlq");
  dead_message_at("src-d", "unstamped", T + 30);
  auto counts = wait(store->sqs_dead_counts("dlq", T + 100));
  BOOST_TEST(counts.visible == 2);
  BOOST_TEST(counts.hidden == 0);
  BOOST_TEST(wait(store->dead_count("dlq")) == 2);  // DeleteQueue refuses while they are there

  store::SqsDeadReceive r{"dlq", 1, T + 100, T + 30100, "receipt-1"};
  auto got = wait(store->sqs_dead_receive(r));
  BOOST_REQUIRE_EQUAL(got.size(), 1u);
  BOOST_TEST(got[0].id == first.id);
  BOOST_TEST((got[0].status == Status::dead));
  BOOST_TEST(got[0].sqs_receipt.value_or("") == "receipt-1");
  BOOST_TEST(got[0].sqs_hidden_until.value_or(0) == T + 30100);
  counts = wait(store->sqs_dead_counts("dlq", T + 200));
  BOOST_TEST(counts.visible == 1);
  BOOST_TEST(counts.hidden == 1);

  // The next receive gets the other; a third, none.
  store::SqsDeadReceive again{"dlq", 10, T + 200, T + 30200, "receipt-2"};
  BOOST_TEST(ids(wait(store->sqs_dead_receive(again))) == std::vector<MessageId>{second.id});
  again.receipt = "receipt-3";
  BOOST_TEST(wait(store->sqs_dead_receive(again)).empty());

  // ChangeMessageVisibility 0 under the latest receipt shows the first again; a stale receipt
  // or another queue's name changes nothing.
  BOOST_TEST(!wait(store->sqs_dead_hide({"dlq", first.id, "receipt-2", T + 300})));
  BOOST_TEST(!wait(store->sqs_dead_hide({"other-dlq", first.id, "receipt-1", T + 300})));
  BOOST_TEST(wait(store->sqs_dead_hide({"dlq", first.id, "receipt-1", T + 300})));
  store::SqsDeadReceive later{"dlq", 10, T + 300, T + 60000, "receipt-4"};
  auto shown = wait(store->sqs_dead_receive(later));
  BOOST_TEST(ids(shown) == std::vector<MessageId>{first.id});
  // Past its hiding, the second shows again too, oldest death first.
  store::SqsDeadReceive past{"dlq", 10, T + 60001, T + 90000, "receipt-5"};
  BOOST_TEST(ids(wait(store->sqs_dead_receive(past))) == std::vector<MessageId>({first.id, second.id}));
  // A filter member selects them on the desk.
  store::DeadListParams desk;
  desk.filter.dead_letter_queue = "dlq";
  BOOST_TEST(ids(wait(store->messages_dead(desk))) == std::vector<MessageId>({first.id, second.id}));
}

// A run started without a preview sees the matched set, its job types and queues, and whether a
// live run has the same filter; what it decides is written with its audit entry, which names the
// run's handle.
BOOST_AUTO_TEST_CASE(a_move_task_run_sees_live_runs_of_its_filter) {
  Message a = stamped(*this, "src", "one", T, "dlq");
  Message b = stamped(*this, "src", "two", T + 10, "dlq");
  const std::string filter = R"({"dead_letter_queue":"dlq"})";
  auto start = [&](std::optional<store::RunStartFacts>* seen) {
    store::RunStartParams p;
    p.filter.dead_letter_queue = "dlq";
    p.canonical_filter = filter;
    p.dead_at_order = true;
    p.handle = [](long long id) { return "handle-" + std::to_string(id); };
    p.decide = [seen, &filter](const store::RunStartFacts& facts) -> Result<store::ConfirmPlan> {
      *seen = facts;
      if (facts.active) return Error(Errc::invalid_state, "There is already a task running");
      store::ReplayRun run;
      run.filter = filter;
      run.created_at = run.start_at = run.paced_from = run.updated_at = T;
      run.rate_per_second = 5;
      run.keep_order = true;
      AuditEntry audit;
      audit.at = T;
      audit.action = "batch_replay";
      audit.details = "{}";
      return store::ConfirmPlan{run, audit};
    };
    return wait(store->run_start(std::move(p)));
  };
  std::optional<store::RunStartFacts> seen;
  auto first = start(&seen);
  BOOST_REQUIRE(first.has_value());
  BOOST_REQUIRE(seen);
  BOOST_TEST(!seen->active);
  BOOST_TEST(seen->ids_now == std::vector<MessageId>({a.id, b.id}));
  BOOST_TEST(seen->queues == std::vector<std::string>{"src"});
  BOOST_REQUIRE(first->run);
  BOOST_TEST(first->run->matched == 2);
  auto audit = wait(store->audit_list({}));
  BOOST_REQUIRE(!audit.empty());
  BOOST_TEST(audit.front().details.value_or("").find("\"task_handle\":\"handle-" +
                                                     std::to_string(first->run->id) + "\"") !=
             std::string::npos);

  auto second = start(&seen);
  BOOST_TEST(!second.has_value());
  BOOST_TEST(seen->active);
  store::RunListParams list;
  list.filter = filter;
  BOOST_TEST(wait(store->replay_runs_list(list)).size() == 1u);
  list.filter = R"({"dead_letter_queue":"other"})";
  BOOST_TEST(wait(store->replay_runs_list(list)).empty());
}

BOOST_AUTO_TEST_SUITE_END()

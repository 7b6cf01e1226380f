// The requests that carry many items, decoded in lib/core: batch enqueue's `messages`, POST
// /ack's `items` and a claim's `ack` — every 422 with its field, code and text, the one bound of
// kMaxBatchItems on each, the items refused on their own, and valid input.
#include <boost/test/unit_test.hpp>

#include <boost/json.hpp>

#include "core/requests.hpp"

namespace json = boost::json;
using namespace dlq;
using namespace dlq::core;

namespace {

json::object obj(const char* text) { return json::parse(text).as_object(); }

json::object member(const char* key, json::value v) {
  json::object o;
  o[key] = std::move(v);
  return o;
}

// `n` items, each made by `item(i)`, under `key` of an object.
template <class Item>
json::object with_items(const char* key, std::size_t n, Item item) {
  json::array items;
  for (std::size_t i = 0; i < n; ++i) items.push_back(item(i));
  return member(key, std::move(items));
}

json::value message(std::size_t i) { return member("payload", json::string("p" + std::to_string(i))); }

json::value ack(std::size_t i) { return member("id", static_cast<std::int64_t>(i + 1)); }

void require_one_error(const FieldErrors& errors, const std::string& field,
                       const std::string& message, const std::string& code) {
  BOOST_TEST_REQUIRE(errors.size() == 1u);
  BOOST_TEST(errors[0].field == field);
  BOOST_TEST(errors[0].message == message);
  BOOST_TEST(errors[0].code == code);
}

// The refusal texts of an acknowledgement list's slots, "" for an item that goes to the store.
std::vector<std::string> refusals(const std::vector<AckSlot>& slots) {
  std::vector<std::string> out;
  for (const auto& s : slots) out.emplace_back(s.refused);
  return out;
}

// One item of every kind an acknowledgement list can hold, in this order: good, id a string,
// not an object, id zero, id a fraction, id beyond int64, lease_id not a string, no id, good
// with a lease.
const char* kMixedItems = R"([{"id":1},{"id":"2"},7,{"id":0},{"id":1.5},{"id":18446744073709551615},
                              {"id":3,"lease_id":5},{"lease_id":"l"},{"id":4,"lease_id":"l4"}])";

const std::vector<std::string> kMixedRefusals = {
    "", "each item needs an integer id", "each item needs an integer id",
    "each item needs an integer id", "each item needs an integer id",
    "each item needs an integer id", "lease_id must be a string", "each item needs an integer id",
    ""};

// The slots and acknowledgements kMixedItems decodes to, however the list arrived.
void check_mixed(const std::vector<AckSlot>& slots, const std::vector<AckItem>& acks) {
  BOOST_TEST(refusals(slots) == kMixedRefusals, boost::test_tools::per_element());
  // Ids are echoed as sent; an item that is no object, or has no id, echoes none.
  BOOST_TEST_REQUIRE(slots.size() == 9u);
  BOOST_TEST(slots[0].id->as_int64() == 1);
  BOOST_TEST(slots[1].id->as_string() == "2");
  BOOST_TEST(slots[2].id == nullptr);
  BOOST_TEST(slots[4].id->is_double());
  BOOST_TEST(slots[5].id->is_uint64());
  BOOST_TEST(slots[6].id->as_int64() == 3);
  BOOST_TEST(slots[7].id == nullptr);
  // Only the good items go to the store, in order.
  BOOST_TEST_REQUIRE(acks.size() == 2u);
  BOOST_TEST(acks[0].id == 1);
  BOOST_TEST(!acks[0].lease_id.has_value());
  BOOST_TEST(acks[1].id == 4);
  BOOST_TEST(*acks[1].lease_id == "l4");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_requests)

BOOST_AUTO_TEST_CASE(one_bound_for_every_list) { BOOST_TEST(kMaxBatchItems == 1000u); }

BOOST_AUTO_TEST_CASE(enqueue_batch_decodes_each_message_as_one_enqueue) {
  Config config;
  QueuePolicy policy = config.defaults;
  policy.max_retries = 5;
  std::vector<EnqueueRequest> out;
  auto errors = decode_enqueue_batch(
      obj(R"({"messages":[{"payload":"a"},{"payload":"b","priority":9,"delay_seconds":2,
                           "job_type":"t","idempotency_key":"k","max_retries":7}]})"),
      config, policy, out);
  BOOST_TEST(errors.empty());
  BOOST_TEST_REQUIRE(out.size() == 2u);
  BOOST_TEST(out[0].message.payload == "a");
  BOOST_TEST(out[0].message.max_retries == 5);  // the queue's policy
  BOOST_TEST(!out[0].delay_ms.has_value());
  BOOST_TEST(out[1].message.payload == "b");
  BOOST_TEST(out[1].message.priority == 9);
  BOOST_TEST(*out[1].delay_ms == 2000);
  BOOST_TEST(*out[1].message.job_type == "t");
  BOOST_TEST(*out[1].message.idempotency_key == "k");
  BOOST_TEST(out[1].message.max_retries == 7);
}

BOOST_AUTO_TEST_CASE(enqueue_batch_needs_messages) {
  Config config;
  std::vector<EnqueueRequest> out;
  require_one_error(decode_enqueue_batch(obj(R"({"message":[{"payload":"a"}]})"), config,
                                         config.defaults, out),
                    "messages", "messages is required", "required");
  BOOST_TEST(out.empty());
}

BOOST_AUTO_TEST_CASE(enqueue_batch_takes_an_array_of_1_to_1000_messages) {
  Config config;
  const std::string text = "messages must be an array of 1 to 1000 messages";
  for (const char* body : {R"({"messages":{}})", R"({"messages":"m"})", R"({"messages":null})",
                           R"({"messages":[]})"}) {
    std::vector<EnqueueRequest> out;
    require_one_error(decode_enqueue_batch(obj(body), config, config.defaults, out), "messages",
                      text, "invalid");
    BOOST_TEST(out.empty());
  }
  std::vector<EnqueueRequest> over;
  require_one_error(decode_enqueue_batch(with_items("messages", 1001, message), config,
                                         config.defaults, over),
                    "messages", text, "invalid");
  BOOST_TEST(over.empty());
  std::vector<EnqueueRequest> full;
  BOOST_TEST(decode_enqueue_batch(with_items("messages", 1000, message), config, config.defaults,
                                  full)
                 .empty());
  BOOST_TEST_REQUIRE(full.size() == 1000u);
  BOOST_TEST(full.back().message.payload == "p999");
}

BOOST_AUTO_TEST_CASE(enqueue_batch_reports_each_message_under_its_index) {
  Config config;
  std::vector<EnqueueRequest> out;
  auto errors = decode_enqueue_batch(
      obj(R"({"messages":[{"payload":"ok"},5,{"priority":10},["x"],{"payload":"y","run_at":"soon"}]})"),
      config, config.defaults, out);
  BOOST_TEST_REQUIRE(errors.size() == 5u);
  BOOST_TEST(errors[0].field == "messages[1]");
  BOOST_TEST(errors[0].message == "each message must be an object");
  BOOST_TEST(errors[0].code == "invalid");
  BOOST_TEST(errors[1].field == "messages[2].payload");
  BOOST_TEST(errors[1].message == "payload is required");
  BOOST_TEST(errors[1].code == "required");
  BOOST_TEST(errors[2].field == "messages[2].priority");
  BOOST_TEST(errors[2].message == "priority must be an integer between 0 and 9");
  BOOST_TEST(errors[2].code == "invalid");
  BOOST_TEST(errors[3].field == "messages[3]");
  BOOST_TEST(errors[3].message == "each message must be an object");
  BOOST_TEST(errors[3].code == "invalid");
  BOOST_TEST(errors[4].field == "messages[4].run_at");
  BOOST_TEST(errors[4].message == "run_at must be an RFC 3339 timestamp");
  BOOST_TEST(errors[4].code == "invalid");
  BOOST_TEST(out.size() == 5u);  // one request per item, whatever it held
}

BOOST_AUTO_TEST_CASE(ack_items_decode_to_slots_and_acknowledgements) {
  auto body = obj(R"({"items":[{"id":7,"lease_id":"l7"},{"id":8}]})");
  AckRequest in;
  BOOST_TEST(decode_ack_items(body, in).empty());
  BOOST_TEST(refusals(in.slots) == (std::vector<std::string>{"", ""}));
  BOOST_TEST_REQUIRE(in.acks.size() == 2u);
  BOOST_TEST(in.acks[0].id == 7);
  BOOST_TEST(*in.acks[0].lease_id == "l7");
  BOOST_TEST(in.acks[1].id == 8);
  BOOST_TEST(!in.acks[1].lease_id.has_value());
  // The slots point into the body: the answer echoes the ids as sent.
  BOOST_TEST(in.slots[0].id == body.at("items").as_array()[0].as_object().if_contains("id"));
}

BOOST_AUTO_TEST_CASE(ack_needs_items) {
  AckRequest in;
  require_one_error(decode_ack_items(obj(R"({"item":[{"id":1}]})"), in), "items",
                    "items is required", "required");
  BOOST_TEST(in.slots.empty());
  BOOST_TEST(in.acks.empty());
}

BOOST_AUTO_TEST_CASE(ack_takes_an_array_of_1_to_1000_items) {
  const std::string text = "items must be an array of 1 to 1000 {id, lease_id} objects";
  for (const char* body : {R"({"items":{"id":1}})", R"({"items":1})", R"({"items":null})",
                           R"({"items":[]})"}) {
    AckRequest in;
    require_one_error(decode_ack_items(obj(body), in), "items", text, "invalid");
    BOOST_TEST(in.slots.empty());
  }
  AckRequest over;
  require_one_error(decode_ack_items(with_items("items", 1001, ack), over), "items", text,
                    "invalid");
  BOOST_TEST(over.acks.empty());
  auto body = with_items("items", 1000, ack);
  AckRequest full;
  BOOST_TEST(decode_ack_items(body, full).empty());
  BOOST_TEST(full.slots.size() == 1000u);
  BOOST_TEST_REQUIRE(full.acks.size() == 1000u);
  BOOST_TEST(full.acks.back().id == 1000);
}

BOOST_AUTO_TEST_CASE(ack_items_that_are_no_acknowledgement_are_refused_on_their_own) {
  auto body = member("items", json::parse(kMixedItems));
  AckRequest in;
  BOOST_TEST(decode_ack_items(body, in).empty());  // the list is fine; its items answer alone
  check_mixed(in.slots, in.acks);
}

BOOST_AUTO_TEST_CASE(claim_ack_is_read_as_ack_items_are) {
  ClaimRequest none;
  BOOST_TEST(decode_claim(obj("{}"), {}, none).empty());
  BOOST_TEST(!none.ack.has_value());  // no "acked" in the answer

  ClaimRequest empty;
  BOOST_TEST(decode_claim(obj(R"({"ack":[]})"), {}, empty).empty());
  BOOST_TEST_REQUIRE(empty.ack.has_value());  // "acked":[] in the answer
  BOOST_TEST(empty.ack->empty());

  auto body = member("ack", json::parse(kMixedItems));
  body["max"] = 2;
  ClaimRequest mixed;
  BOOST_TEST(decode_claim(body, {}, mixed).empty());
  BOOST_TEST_REQUIRE(mixed.ack.has_value());
  check_mixed(*mixed.ack, mixed.command.acks);
  BOOST_TEST(mixed.batch);
}

BOOST_AUTO_TEST_CASE(claim_ack_takes_an_array_of_at_most_1000_items) {
  const std::string text = "ack must be an array of at most 1000 {id, lease_id} objects";
  for (const char* body : {R"({"ack":{"id":1}})", R"({"ack":"1"})", R"({"ack":null})"}) {
    ClaimRequest in;
    require_one_error(decode_claim(obj(body), {}, in), "ack", text, "invalid");
    BOOST_TEST(!in.ack.has_value());
  }
  ClaimRequest over;
  require_one_error(decode_claim(with_items("ack", 1001, ack), {}, over), "ack", text, "invalid");
  BOOST_TEST(!over.ack.has_value());
  BOOST_TEST(over.command.acks.empty());
  auto body = with_items("ack", 1000, ack);
  ClaimRequest full;
  BOOST_TEST(decode_claim(body, {}, full).empty());
  BOOST_TEST_REQUIRE(full.ack.has_value());
  BOOST_TEST(full.ack->size() == 1000u);
  BOOST_TEST(full.command.acks.size() == 1000u);
}

BOOST_AUTO_TEST_CASE(claim_ack_problems_keep_the_documented_field_order) {
  ClaimRequest in;
  auto errors = decode_claim(obj(R"({"ack":5,"max":0,"worker":1})"), {}, in);
  std::vector<std::string> fields;
  for (const auto& e : errors) fields.push_back(e.field);
  BOOST_TEST(fields == (std::vector<std::string>{"worker", "max", "ack"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

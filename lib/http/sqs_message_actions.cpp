// The SQS actions on messages, each mapped onto the queue service (docs/sqs.md): send, receive,
// delete and change visibility, single and batched, with SQS's message attributes, digests and
// receipt handles.
#include "http/sqs_actions.hpp"

#include <set>

#include <boost/json.hpp>

#include "core/lease_tokens.hpp"
#include "http/sqs_fields.hpp"
#include "http/sqs_message_attributes.hpp"
#include "http/sqs_redrive.hpp"
#include "model/sqs_digest.hpp"

namespace dlq::http::sqs {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// ---- receipt handles ---------------------------------------------------------------------------

// A dead letter a dead-letter queue's receive hid carries "d:" and the receive's receipt in place
// of a lease (lease tokens never start so).
constexpr std::string_view kDeadReceipt = "d:";

// Opaque to clients: base64 of "dlq1 <queue> <id> <lease_id>", or of "dlq1 <dead-letter queue>
// <id> d:<receipt>" for a dead letter received through its dead-letter queue.
std::string receipt_handle(const Message& m) {
  if (m.status == Status::dead && m.dead_letter_queue && m.sqs_receipt) {
    return base64_encode("dlq1 " + *m.dead_letter_queue + " " + std::to_string(m.id) + " " +
                         std::string(kDeadReceipt) + *m.sqs_receipt);
  }
  return base64_encode("dlq1 " + m.queue + " " + std::to_string(m.id) + " " + m.lease_id.value_or(""));
}

struct Receipt {
  MessageId id = 0;
  std::string lease_id;
  // A dead letter's: the receipt of the dead-letter queue's receive (lease_id without "d:").
  bool dead() const { return lease_id.starts_with(kDeadReceipt); }
  std::string receipt() const { return lease_id.substr(kDeadReceipt.size()); }
};

// The handle's message and lease, when it decodes and names `queue`; ReceiptHandleIsInvalid
// otherwise.
Receipt decode_receipt(const std::string& handle, const std::string& queue) {
  auto bad = [&]() -> Receipt {
    fail("ReceiptHandleIsInvalid", "The input receipt handle \"" + handle.substr(0, 64) + "\" is not a valid receipt handle.");
  };
  auto raw = base64_decode(handle);
  if (!raw || !raw->starts_with("dlq1 ")) return bad();
  std::string_view rest = std::string_view(*raw).substr(5);
  auto sp1 = rest.find(' ');
  if (sp1 == std::string_view::npos || rest.substr(0, sp1) != queue) return bad();
  rest.remove_prefix(sp1 + 1);
  auto sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos) return bad();
  auto id = parse_int(rest.substr(0, sp2));
  if (!id || *id <= 0 || sp2 + 1 >= rest.size()) return bad();
  return {*id, std::string(rest.substr(sp2 + 1))};
}

}  // namespace

// ---- messages ----------------------------------------------------------------------------------

namespace {

// SQS's bound on a SendMessageBatch's messages together.
constexpr std::size_t kBatchBytes = 1048576;

// One message to send, validated against its queue.
struct Outgoing {
  store::NewMessage message;
  std::string body_md5;
  std::string attributes_md5;
};

Outgoing outgoing(const json::object& in, const store::SqsQueueRow& row, const Config& config,
                  TimeMs now) {
  Outgoing out;
  std::string body = required_text(in, "MessageBody");
  if (body.empty()) invalid("The request must contain a non-empty MessageBody.");
  if (!allowed_text(body)) {
    fail("InvalidMessageContents", "Invalid binary character in the message body: SQS allows "
                                   "#x9, #xA, #xD, #x20 to #xD7FF, #xE000 to #xFFFD, #x10000 to #x10FFFF");
  }
  auto attrs = message_attributes(in);
  auto stored = stored_map(row.attributes);
  long long max_size = config.limits.max_payload_bytes;
  if (auto s = stored.find("MaximumMessageSize"); s != stored.end()) {
    max_size = parse_int(s->second).value_or(max_size);
  }
  std::size_t size = body.size() + attributes_size(attrs);
  if (static_cast<long long>(size) > max_size) {
    invalid("One or more parameters are invalid. Reason: Message must be shorter than " +
            std::to_string(max_size) + " bytes.");
  }
  long long queue_delay = 0;
  if (auto d = stored.find("DelaySeconds"); d != stored.end()) queue_delay = parse_int(d->second).value_or(0);
  long long delay = in_range(integer(in, "DelaySeconds"), "DelaySeconds", 0, 900, queue_delay);
  out.body_md5 = dlq::sqs::md5_hex(body);
  if (!attrs.empty()) {
    out.attributes_md5 = attributes_digest(attrs);
    out.message.sqs_attributes = json::serialize(attributes_json(attrs));
  }
  out.message.payload = std::move(body);
  out.message.max_retries = config.policy_for(row.name).max_retries;
  if (delay > 0) out.message.run_at = now + delay * 1000;
  return out;
}

json::object sent(const Outgoing& o, const Message& m) {
  json::object r{{"MessageId", std::to_string(m.id)}, {"MD5OfMessageBody", o.body_md5}};
  if (!o.attributes_md5.empty()) r["MD5OfMessageAttributes"] = o.attributes_md5;
  return r;
}

[[noreturn]] void enqueue_failed(const Error& e) {
  for (const auto& f : e.fields) {
    if (f.code == "limit") fail("OverLimit", f.message);
  }
  invalid(e.fields.empty() ? e.message : e.fields.front().message);
}

}  // namespace

Actions::Out Actions::send_message(const Call& call, const json::object& in) {
  need(call.who, Role::producer);
  auto row = co_await queue_of(call, in);
  Outgoing o = outgoing(in, row, config_, call.ctx.now);
  std::vector<store::NewMessage> messages;
  messages.push_back(o.message);
  auto result = co_await service_.enqueue(call.ctx, row.name, std::move(messages));
  if (!result) enqueue_failed(result.error());
  co_return sent(o, result->front().message);
}

Actions::Out Actions::send_message_batch(const Call& call, const json::object& in) {
  need(call.who, Role::producer);
  auto row = co_await queue_of(call, in);
  const auto& entries = batch_entries(in);
  std::vector<Outgoing> good;
  std::vector<std::string> good_ids;
  json::array failed;
  std::size_t total = 0;
  for (const auto& e : entries) {
    const auto& entry = e.as_object();
    std::string id(entry.at("Id").as_string());
    try {
      good.push_back(outgoing(entry, row, config_, call.ctx.now));
      total += good.back().message.payload.size() +
               (good.back().message.sqs_attributes ? good.back().message.sqs_attributes->size() : 0);
      good_ids.push_back(id);
    } catch (const SqsError& err) {
      failed.push_back(batch_failure(id, err));
    }
  }
  if (total > kBatchBytes) {
    fail("BatchRequestTooLong", "Batch requests cannot be longer than 1048576 bytes.");
  }
  json::array successful;
  if (!good.empty()) {
    std::vector<store::NewMessage> messages;
    for (const auto& o : good) messages.push_back(o.message);
    auto result = co_await service_.enqueue(call.ctx, row.name, std::move(messages));
    if (!result) enqueue_failed(result.error());
    for (std::size_t i = 0; i < good.size(); ++i) {
      json::object r = sent(good[i], (*result)[i].message);
      r["Id"] = good_ids[i];
      successful.push_back(std::move(r));
    }
  }
  co_return json::object{{"Successful", std::move(successful)}, {"Failed", std::move(failed)}};
}

namespace {

// AttributeNames and MessageSystemAttributeNames, together: which system attributes to return.
std::set<std::string> system_attribute_names(const json::object& in) {
  static const std::set<std::string, std::less<>> kServedNames = {
      "All", "ApproximateReceiveCount", "SentTimestamp", "ApproximateFirstReceiveTimestamp"};
  static const std::set<std::string, std::less<>> kOmitted = {
      "SenderId", "MessageDeduplicationId", "MessageGroupId", "SequenceNumber", "AWSTraceHeader",
      "DeadLetterQueueSourceArn", "SqsManagedSseEnabled"};
  std::set<std::string> out;
  for (const char* key : {"AttributeNames", "MessageSystemAttributeNames"}) {
    for (auto& n : strings(in, key)) {
      if (!kServedNames.contains(n) && !kOmitted.contains(n)) {
        fail("InvalidAttributeName", "Unknown Attribute " + n + ".");
      }
      out.insert(std::move(n));
    }
  }
  return out;
}

bool wanted_attribute(const std::vector<std::string>& filters, const std::string& name) {
  for (const auto& f : filters) {
    if (f == "All" || f == ".*" || f == name) return true;
    if (f.size() > 2 && f.ends_with(".*") && name.starts_with(f.substr(0, f.size() - 1))) return true;
  }
  return false;
}

// `source_arn`: a dead letter's source queue (DeadLetterQueueSourceArn), else empty.
json::object received(const Message& m, const std::set<std::string>& system,
                      const std::vector<std::string>& filters, const std::string& source_arn) {
  json::object r{{"MessageId", std::to_string(m.id)},
                 {"ReceiptHandle", receipt_handle(m)},
                 {"MD5OfBody", dlq::sqs::md5_hex(m.payload)},
                 {"Body", m.payload}};
  bool all = system.contains("All");
  json::object attributes;
  if (all || system.contains("ApproximateReceiveCount")) {
    attributes["ApproximateReceiveCount"] = std::to_string(m.attempts - m.life_attempts);
  }
  if (all || system.contains("SentTimestamp")) {
    attributes["SentTimestamp"] = std::to_string(m.created_at);
  }
  if (all || system.contains("ApproximateFirstReceiveTimestamp")) {
    attributes["ApproximateFirstReceiveTimestamp"] =
        std::to_string(m.first_attempt_at.value_or(m.created_at));
  }
  if (!source_arn.empty() && (all || system.contains("DeadLetterQueueSourceArn"))) {
    attributes["DeadLetterQueueSourceArn"] = source_arn;
  }
  if (!attributes.empty()) r["Attributes"] = std::move(attributes);
  std::vector<Attribute> returned;
  for (auto& a : stored_attributes(m.sqs_attributes)) {
    if (wanted_attribute(filters, a.digest.name)) returned.push_back(std::move(a));
  }
  if (!returned.empty()) {
    r["MD5OfMessageAttributes"] = attributes_digest(returned);
    r["MessageAttributes"] = attributes_json(returned);
  }
  return r;
}

}  // namespace

Actions::Out Actions::receive_message(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  auto stored = stored_map(row.attributes);
  long long queue_wait = 0;
  if (auto w = stored.find("ReceiveMessageWaitTimeSeconds"); w != stored.end()) {
    queue_wait = parse_int(w->second).value_or(0);
  }
  core::ClaimCommand cmd;
  cmd.queue = row.name;
  cmd.max = static_cast<int>(in_range(integer(in, "MaxNumberOfMessages"), "MaxNumberOfMessages", 1, 10, 1));
  cmd.wait_ms = in_range(integer(in, "WaitTimeSeconds"), "WaitTimeSeconds", 0, 20, queue_wait) * 1000;
  if (auto v = integer(in, "VisibilityTimeout")) {
    cmd.visibility_ms = in_range(v, "VisibilityTimeout", 0, 43200, 0) * 1000;
  }
  cmd.worker = call.who.name;
  auto system = system_attribute_names(in);
  auto filters = strings(in, "MessageAttributeNames");
  json::array messages;
  // A dead-letter queue shows the dead letters stamped with it first, oldest death first.
  if (service_.sqs_queues().names_as_target(row.name)) {
    store::SqsDeadReceive dead;
    dead.dlq = row.name;
    dead.max = cmd.max;
    dead.now = call.ctx.now;
    TimeMs visibility = cmd.visibility_ms.value_or(service_.sqs_queues().visibility_ms(row.name).value_or(
        seconds_to_ms(config_.policy_for(row.name).visibility_timeout)));
    dead.hidden_until = call.ctx.now + visibility;
    dead.receipt = core::new_lease_token();
    for (const auto& m : co_await store_.sqs_dead_receive(std::move(dead))) {
      messages.push_back(received(m, system, filters, queue_arn(config_, m.queue)));
    }
    if (!messages.empty()) co_return json::object{{"Messages", std::move(messages)}};
  }
  auto outcome = co_await service_.claim(call.ctx, std::move(cmd));
  for (auto& m : outcome.messages) {
    if (m.payload_withheld) {
      // Past the claim's payload budget: read again while its lease holds (none: it ended).
      std::string lease = m.lease_id.value_or("");
      auto again = co_await service_.find_leased(call.ctx, row.name, m.id, lease);
      if (!again) continue;
      m.payload = std::move(again->payload);
      m.sqs_attributes = std::move(again->sqs_attributes);
    }
    messages.push_back(received(m, system, filters, {}));
  }
  json::object out;
  if (!messages.empty()) out["Messages"] = std::move(messages);
  co_return out;
}

Actions::Out Actions::delete_message(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  Receipt r = decode_receipt(required_text(in, "ReceiptHandle"), row.name);
  if (r.dead()) {
    need(call.who, Role::admin);  // deleting a dead letter dismisses it
    std::vector<std::pair<MessageId, std::string>> one;  // GCC 12: no braced list in co_await
    one.emplace_back(r.id, r.receipt());
    co_await dismiss_dead(call, row.name, std::move(one), "DeleteMessage");
    co_return json::object{};
  }
  // A lease no longer current, or a repeat: success, nothing changed (as SQS documents).
  co_await service_.succeed(call.ctx, row.name, r.id, r.lease_id);
  co_return json::object{};
}

Actions::Out Actions::delete_message_batch(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  const auto& entries = batch_entries(in);
  std::vector<core::AckItem> items;
  std::vector<std::pair<MessageId, std::string>> dead;
  std::vector<std::string> ids;
  json::array failed;
  for (const auto& e : entries) {
    const auto& entry = e.as_object();
    std::string id(entry.at("Id").as_string());
    try {
      Receipt r = decode_receipt(required_text(entry, "ReceiptHandle"), row.name);
      if (r.dead()) {
        dead.emplace_back(r.id, r.receipt());
      } else {
        items.push_back({r.id, r.lease_id});
      }
      ids.push_back(id);
    } catch (const SqsError& err) {
      failed.push_back(batch_failure(id, err));
    }
  }
  // Deleting dead letters dismisses them: admin, or the whole request is refused.
  if (!dead.empty()) need(call.who, Role::admin);
  json::array successful;
  if (!items.empty()) {
    // One transaction; a stale lease or a repeat is a success as for DeleteMessage.
    co_await service_.succeed_many(call.ctx, row.name, std::move(items));
  }
  if (!dead.empty()) co_await dismiss_dead(call, row.name, std::move(dead), "DeleteMessageBatch");
  for (const auto& id : ids) successful.push_back(json::object{{"Id", id}});
  co_return json::object{{"Successful", std::move(successful)}, {"Failed", std::move(failed)}};
}

namespace {

// n > 0: the lease now ends n seconds from now; 0: released, due at once, no failure. A dead
// letter's: its hiding from the dead-letter queue's receives ends then.
awaitable<void> change_visibility(core::QueueService& service, store::Store& store,
                                  const core::RequestContext& ctx, const std::string& queue,
                                  const Receipt& r, long long seconds) {
  if (r.dead()) {
    store::SqsDeadHide hide{queue, r.id, r.receipt(), ctx.now + seconds * 1000};
    if (!co_await store.sqs_dead_hide(std::move(hide))) {
      fail("ReceiptHandleIsInvalid", "The receipt handle has expired: the dead letter was "
                                     "received again, replayed or dismissed since.");
    }
    co_return;
  }
  // Two statements, not one conditional: GCC 12 mishandles co_await in both arms of ?:.
  std::optional<Result<Message>> result;
  if (seconds > 0) {
    result.emplace(co_await service.extend(ctx, queue, r.id, r.lease_id, seconds * 1000,
                                           std::nullopt));
  } else {
    result.emplace(co_await service.release(ctx, queue, r.id, r.lease_id, 0));
  }
  if (!*result) {
    fail("ReceiptHandleIsInvalid", "The receipt handle has expired: the message is no longer "
                                   "held under it.");
  }
}

long long visibility_of(const json::object& in) {
  auto v = integer(in, "VisibilityTimeout");
  if (!v) fail("MissingParameter", "The request must contain the parameter VisibilityTimeout.");
  return in_range(v, "VisibilityTimeout", 0, 43200, 0);
}

}  // namespace

Actions::Out Actions::change_message_visibility(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  Receipt r = decode_receipt(required_text(in, "ReceiptHandle"), row.name);
  long long seconds = visibility_of(in);
  co_await change_visibility(service_, store_, call.ctx, row.name, r, seconds);
  co_return json::object{};
}

Actions::Out Actions::change_message_visibility_batch(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  const auto& entries = batch_entries(in);
  json::array successful, failed;
  for (const auto& e : entries) {
    const auto& entry = e.as_object();
    std::string id(entry.at("Id").as_string());
    try {
      Receipt r = decode_receipt(required_text(entry, "ReceiptHandle"), row.name);
      long long seconds = visibility_of(entry);
      co_await change_visibility(service_, store_, call.ctx, row.name, r, seconds);
      successful.push_back(json::object{{"Id", id}});
    } catch (const SqsError& err) {
      failed.push_back(batch_failure(id, err));
    }
  }
  co_return json::object{{"Successful", std::move(successful)}, {"Failed", std::move(failed)}};
}

}  // namespace dlq::http::sqs

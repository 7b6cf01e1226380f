// The message routes: each decodes (lib/core), calls the QueueService and encodes.
#include "http/api_messages.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "core/effect_requests.hpp"
#include "http/api_support.hpp"
#include "http/lifecycle.hpp"
#include "http/message_stream.hpp"

namespace dlq::http {
namespace json = boost::json;
using namespace support;

namespace {

// The answer's items for an acknowledgement list, in the order sent: {"id", "status", "error"}.
// A refused item is a validation problem; the others carry their store outcome's status, in
// the order of the slots that went to the store.
json::array ack_results(const std::vector<core::AckSlot>& slots,
                        const std::vector<Result<Message>>& results) {
  json::array out;
  out.reserve(slots.size());
  std::size_t next = 0;
  for (const auto& slot : slots) {
    int status = 200;
    std::string error;
    if (!slot.refused.empty()) {
      status = status_for(Errc::validation_failed);
      error = slot.refused;
    } else if (const auto& r = results.at(next++); !r) {
      Error e = r.error();  // a copy: result::error() returns by value
      status = status_for(e.code);
      error = std::move(e.message);
    }
    json::object item;
    item["id"] = slot.id ? *slot.id : json::value(nullptr);
    item["status"] = status;
    item["error"] = status == 200 ? json::value(nullptr) : json::value(error);
    out.push_back(std::move(item));
  }
  return out;
}

// The claimed messages whose payloads the store withheld (core::kClaimPayloadBytes), read again
// by id when their turn comes; one whose lease ended meanwhile is left out (its worker could no
// longer settle it).
class ClaimedLater final : public LaterMessages {
 public:
  ClaimedLater(core::QueueService& service, core::RequestContext ctx, std::string queue)
      : service_(service), ctx_(context_for_later(std::move(ctx))), queue_(std::move(queue)) {}

  void add(const Message& m) { leases_.emplace_back(m.id, m.lease_id.value_or("")); }
  std::size_t size() const override { return leases_.size(); }
  boost::asio::awaitable<std::optional<Message>> read(std::size_t position) override {
    const auto& [id, lease_id] = leases_.at(position);
    co_return co_await service_.find_leased(ctx_, queue_, id, lease_id);
  }

 private:
  core::QueueService& service_;
  core::RequestContext ctx_;
  std::string queue_;
  std::vector<std::pair<MessageId, std::string>> leases_;
};

// Splits the claimed messages where their payloads were withheld (always a tail, in claim
// order): those before are written from memory, the rest read again. A batch of small messages
// (the common case) has no tail and costs no query more.
std::unique_ptr<LaterMessages> withheld_tail(core::QueueService& service,
                                             std::vector<Message>& claimed,
                                             const core::RequestContext& ctx,
                                             const std::string& queue) {
  auto tail = std::find_if(claimed.begin(), claimed.end(),
                           [](const Message& m) { return m.payload_withheld; });
  if (tail == claimed.end()) return nullptr;
  auto later = std::make_unique<ClaimedLater>(service, ctx, queue);
  for (auto it = tail; it != claimed.end(); ++it) later->add(*it);
  claimed.erase(tail, claimed.end());
  return later;
}

}  // namespace

MessageHandlers::MessageHandlers(core::QueueService& service, const Config& config,
                                 const Lifecycle& lifecycle)
    : service_(service), config_(config), lifecycle_(lifecycle) {}

Response MessageHandlers::answer(const Request& req, const Result<Message>& result,
                                 Audience audience) const {
  if (!result) return problem_from_error(context(config_, req), result.error());
  return text_response(200, message_text(*result, {audience, false}, service_.redactor()));
}

void MessageHandlers::close_if_shutting_down(Response& r) const {
  r.close = lifecycle_.shutting_down();
}

MessageHandlers::R MessageHandlers::enqueue(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::EnqueueRequest in;
  FieldErrors errors = core::decode_enqueue(body, config_, config_.policy_for(*queue), in);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.message.run_at = first_claimable(in.delay_ms, in.message.run_at, ctx.now);
  std::vector<store::NewMessage> messages{std::move(in.message)};
  auto inserted = co_await service_.enqueue(ctx, *queue, std::move(messages));
  if (!inserted) co_return problem_from_error(context(config_, req), inserted.error());
  const auto& item = inserted->at(0);
  co_return text_response(item.created ? 201 : 200,
                          message_text(item.message, {Audience::owner, false}, service_.redactor()));
}

MessageHandlers::R MessageHandlers::enqueue_batch(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  std::vector<core::EnqueueRequest> items;
  FieldErrors errors =
      core::decode_enqueue_batch(body, config_, config_.policy_for(*queue), items);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  std::vector<store::NewMessage> messages;
  messages.reserve(items.size());
  for (auto& item : items) {
    item.message.run_at = first_claimable(item.delay_ms, item.message.run_at, ctx.now);
    messages.push_back(std::move(item.message));
  }
  auto inserted = co_await service_.enqueue(ctx, *queue, std::move(messages));
  if (!inserted) co_return problem_from_error(context(config_, req), inserted.error());
  std::vector<Message> answered;
  answered.reserve(inserted->size());
  for (auto& item : *inserted) answered.push_back(std::move(item.message));
  // Built in a local: g++ 12 mishandles temporaries with destructors inside co_await.
  auto answer = std::make_shared<MessageListStream>(
      MessageListStream::Shape{R"({"messages":[)", true, ""}, std::move(answered),
      MessageView{Audience::owner, false}, service_.redactor());
  co_return co_await streamed_response(201, std::move(answer));
}

MessageHandlers::R MessageHandlers::list(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  store::ListParams params;
  params.queue = *queue;
  FieldErrors errors = core::decode_list(req.query, params);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  // The page is fixed by its ids; its messages are read and written one at a time, so a page
  // of large messages is never held whole, however slowly the client reads (architecture.md,
  // "Bounds").
  auto ctx = request_context(config_, service_.clock(), req);
  auto ids = co_await service_.list_ids(ctx, params);
  auto page = std::make_unique<QueuePage>(service_, ctx, std::move(params.queue), std::move(ids));
  auto answer = std::make_shared<MessageListStream>(
      MessageListStream::Shape{R"({"messages":[)", true, ""}, std::vector<Message>{},
      MessageView{Audience::people, false}, service_.redactor(), std::move(page));
  co_return co_await streamed_response(200, std::move(answer));
}

MessageHandlers::R MessageHandlers::show(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  auto found =
      co_await service_.find(request_context(config_, service_.clock(), req), queue, id);
  if (!found) co_return problem_from_error(context(config_, req), found.error());
  co_return text_response(200, message_text(*found, {Audience::people, false}, service_.redactor()));
}

MessageHandlers::R MessageHandlers::claim(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::ClaimRequest in;
  FieldErrors errors = core::decode_claim(body, req.query, in);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  in.command.queue = *queue;
  auto outcome = co_await service_.claim(ctx, std::move(in.command));
  if (outcome.client_gone) {
    Response r;  // nobody to answer
    r.close = true;
    co_return r;
  }
  std::vector<Message>& claimed = outcome.messages;
  // With `ack`, "acked" is the answer's last member (http-api B6); without, Part A's answer.
  std::string acked;
  if (in.ack) acked = R"(,"acked":)" + json::serialize(ack_results(*in.ack, outcome.acked));

  std::string out = claimed.empty() ? R"({"claimed":false,)" : R"({"claimed":true,)";
  MessageView view{Audience::owner, true};
  if (in.batch) {
    // Up to 100 messages: written one at a time (see list), the first 256 KiB of payloads from
    // memory and those the store withheld read again when their turn comes.
    auto later = withheld_tail(service_, claimed, ctx, *queue);
    MessageListStream::Shape shape{out + R"("messages":[)", false, std::move(acked)};
    auto answer = std::make_shared<MessageListStream>(std::move(shape), std::move(claimed), view,
                                                    service_.redactor(), std::move(later));
    Response r = co_await streamed_response(200, std::move(answer));
    close_if_shutting_down(r);
    co_return r;
  } else if (claimed.empty()) {
    out += R"("message":null)" + acked + "}";
  } else {
    out += R"("message":)";
    append_message(out, claimed.front(), view, service_.redactor());
    out += acked + "}";
  }
  Response r = text_response(200, std::move(out));
  close_if_shutting_down(r);
  co_return r;
}

MessageHandlers::R MessageHandlers::succeed(const Request& req, const RouteMatch& m) {
  std::optional<std::string> lease_id;
  MessageCall call;
  auto decode = [&lease_id](const json::object& b) { return core::decode_succeed(b, lease_id); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.succeed(call.ctx, call.queue, call.id, std::move(lease_id));
  co_return answer(req, result, Audience::owner);
}

MessageHandlers::R MessageHandlers::ack(const Request& req, const RouteMatch& m) {
  auto queue = queue_param(m.params.at(0));
  if (!queue) co_return unknown_queue(config_, req);
  json::object body;
  if (auto bad = read_object(config_, req, body)) co_return *bad;
  core::AckRequest in;
  FieldErrors errors = core::decode_ack_items(body, in);
  auto ctx = request_context(config_, service_.clock(), req, &errors);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  std::vector<Result<Message>> results;
  if (!in.acks.empty()) results = co_await service_.succeed_many(ctx, *queue, std::move(in.acks));
  json::object body_out;
  body_out["results"] = ack_results(in.slots, results);
  co_return json_response(200, body_out);
}

MessageHandlers::R MessageHandlers::fail(const Request& req, const RouteMatch& m) {
  core::FailInput in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_fail(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.fail(call.ctx, call.queue, call.id, std::move(in));
  co_return answer(req, result, Audience::owner);
}

MessageHandlers::R MessageHandlers::replay(const Request& req, const RouteMatch& m) {
  core::ReplayRequest in;
  MessageCall call;
  auto decode = [&in, this](const json::object& b) { return core::decode_replay(b, config_, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  in.input.run_at = first_claimable(in.delay_ms, in.input.run_at, call.ctx.now);
  bool dry_run = in.dry_run;
  auto result =
      co_await service_.replay(call.ctx, call.queue, call.id, std::move(in.input), dry_run);
  if (result && dry_run) {
    co_return text_response(200, R"({"dry_run":true,"message":)" +
                                     message_text(*result, {Audience::people, false}, service_.redactor()) +
                                     "}");
  }
  co_return answer(req, result, Audience::people);
}

MessageHandlers::R MessageHandlers::extend(const Request& req, const RouteMatch& m) {
  core::ExtendRequest in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_extend(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.extend(call.ctx, call.queue, call.id, std::move(in.lease_id),
                                         in.duration_ms, std::move(in.checkpoint));
  co_return answer(req, result, Audience::owner);
}

MessageHandlers::R MessageHandlers::release(const Request& req, const RouteMatch& m) {
  core::ReleaseRequest in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_release(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result =
      co_await service_.release(call.ctx, call.queue, call.id, std::move(in.lease_id), in.delay_ms);
  co_return answer(req, result, Audience::owner);
}

MessageHandlers::R MessageHandlers::dismiss(const Request& req, const RouteMatch& m) {
  std::optional<std::string> reason;
  MessageCall call;
  auto decode = [&reason](const json::object& b) { return core::decode_dismiss(b, reason); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto result = co_await service_.dismiss(call.ctx, call.queue, call.id, std::move(reason));
  co_return answer(req, result, Audience::people);
}

MessageHandlers::R MessageHandlers::effect(const Request& req, const RouteMatch& m) {
  core::EffectInput in;
  MessageCall call;
  auto decode = [&in](const json::object& b) { return core::decode_effect(b, in); };
  if (auto early = prepare_message_call(config_, service_.clock(), req, m, call, decode)) {
    co_return *early;
  }
  auto outcome = co_await service_.record_effect(call.ctx, call.queue, call.id, std::move(in));
  if (!outcome) co_return problem_from_error(context(config_, req), outcome.error());
  // The worker's own record, as stored (nothing masked); a cleared key answers "cleared".
  json::object body = effect_json(outcome->effect, Audience::owner, service_.redactor());
  if (outcome->cleared) {
    body["state"] = "cleared";
    body["description"] = nullptr;
    body["result"] = nullptr;
  }
  co_return json_response(200, body);
}

MessageHandlers::R MessageHandlers::attempts(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  store::HistoryPage page;
  FieldErrors errors = core::decode_attempts(req.query, page);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto history = co_await service_.attempts(request_context(config_, service_.clock(), req),
                                            std::move(queue), id, page);
  if (!history) co_return problem_from_error(context(config_, req), history.error());
  json::array items;
  items.reserve(history->entries.size());
  for (const auto& a : history->entries) items.push_back(attempt_json(a, service_.redactor()));
  json::array effects;
  effects.reserve(history->effects.size());
  for (const auto& e : history->effects) {
    effects.push_back(effect_json(e, Audience::people, service_.redactor()));
  }
  json::object body;
  std::size_t count = items.size();
  body["attempts"] = std::move(items);
  body["count"] = count;
  body["next_after"] =
      history->next_after ? json::value(*history->next_after) : json::value(nullptr);
  body["effects"] = std::move(effects);
  co_return json_response(200, body);
}

MessageHandlers::R MessageHandlers::versions(const Request& req, const RouteMatch& m) {
  std::string queue;
  MessageId id = 0;
  if (!message_target(m, queue, id)) co_return message_not_found(config_, req);
  core::VersionsPage page;
  FieldErrors errors = core::decode_versions(req.query, page);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  auto view = co_await service_.versions(request_context(config_, service_.clock(), req),
                                         std::move(queue), id, page);
  if (!view) co_return problem_from_error(context(config_, req), view.error());
  const core::Redactor& redactor = service_.redactor();
  json::array items;
  items.reserve(view->versions.size());
  for (const auto& v : view->versions) {
    json::object o;
    o["version"] = v.version;
    o["payload"] = redactor.payload(v.payload);
    o["at"] = format_rfc3339(v.at);
    o["actor"] = v.actor ? json::value(*v.actor) : json::value(nullptr);
    o["reason"] = v.reason ? json::value(*v.reason) : json::value(nullptr);
    items.push_back(std::move(o));
  }
  json::object body;
  std::size_t count = items.size();
  body["versions"] = std::move(items);
  body["count"] = count;
  body["next_after"] = view->next_after ? json::value(*view->next_after) : json::value(nullptr);
  co_return json_response(200, body);
}

}  // namespace dlq::http

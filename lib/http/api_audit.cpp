// GET /audit: the audit log's entries as JSON, a page streamed one entry at a time.
#include "http/api_audit.hpp"

#include <boost/json.hpp>

#include "http/api_support.hpp"
#include "http/message_stream.hpp"
#include "model/json_text.hpp"

namespace dlq::http {
namespace json = boost::json;
using namespace support;

namespace {

// A JSON text member stored by the writer; shown as JSON (null when absent or unreadable).
json::value stored_json(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  std::error_code ec;
  json::value v = json::parse(*text, ec);
  if (ec) return nullptr;
  return v;
}

json::object entry_json(const AuditEntry& e) {
  json::object o;
  o["id"] = e.id;
  o["at"] = format_rfc3339(e.at);
  o["actor"] = e.actor ? json::value(*e.actor) : json::value(nullptr);
  o["action"] = e.action;
  o["queue"] = e.queue ? json::value(*e.queue) : json::value(nullptr);
  json::array ids;
  for (auto id : e.message_ids) ids.emplace_back(id);
  o["message_ids"] = std::move(ids);
  o["filter"] = stored_json(e.filter);
  o["reason"] = e.reason ? json::value(*e.reason) : json::value(nullptr);
  o["details"] = stored_json(e.details);
  return o;
}

// The page fixed by its ids and written one entry at a time, each read when its turn comes: an
// entry can carry two payloads (a payload edit), so the page's entries are never held at once
// (architecture.md, "Bounds"). An entry no longer stored is left out; `count` counts those written.
class EntryStream final : public BodyStream {
 public:
  EntryStream(core::QueueService& service, core::RequestContext ctx, std::vector<long long> ids,
              json::value next)
      : service_(service), ctx_(context_for_later(std::move(ctx))), ids_(std::move(ids)),
        next_(std::move(next)) {}

  boost::asio::awaitable<std::string> next() override {
    if (done_) co_return std::string();
    if (!opened_) {
      opened_ = true;
      co_return "{\"entries\":[";
    }
    while (position_ < ids_.size()) {
      auto entry = co_await service_.audit_entry(ctx_, ids_[position_++]);
      if (!entry) continue;
      std::string out = written_++ > 0 ? "," : "";
      append_json(out, entry_json(*entry));
      co_return out;
    }
    done_ = true;
    co_return "],\"count\":" + std::to_string(written_) +
        ",\"next_after_id\":" + json::serialize(next_) + "}";
  }

 private:
  core::QueueService& service_;
  core::RequestContext ctx_;
  std::vector<long long> ids_;
  json::value next_;
  std::size_t position_ = 0;
  std::size_t written_ = 0;
  bool opened_ = false;
  bool done_ = false;
};

}  // namespace

AuditHandlers::AuditHandlers(core::QueueService& service, const Config& config)
    : service_(service), config_(config) {}

AuditHandlers::R AuditHandlers::audit(const Request& req, const RouteMatch&) {
  store::AuditQuery query;
  FieldErrors errors = core::decode_audit(req.query, query);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  const int limit = query.limit;
  query.limit = limit + 1;  // one more tells whether another page follows
  auto ctx = request_context(config_, service_.clock(), req);
  auto ids = co_await service_.audit_ids(ctx, std::move(query));
  json::value next = trim_page(ids, limit, [](long long id) { return id; });
  auto answer =
      std::make_shared<EntryStream>(service_, std::move(ctx), std::move(ids), std::move(next));
  co_return co_await streamed_response(200, std::move(answer));
}

}  // namespace dlq::http

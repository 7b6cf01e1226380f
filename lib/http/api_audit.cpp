// GET /audit: the audit log's entries as JSON, a page streamed one entry at a time.
#include "http/api_audit.hpp"

#include <boost/json.hpp>

#include "http/api_support.hpp"
#include "http/message_stream.hpp"

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

// The page written one entry at a time: an entry can carry two payloads (a payload edit), so the
// page's whole text is never held (architecture.md, "Bounds"); each entry is freed once written.
class EntryStream final : public BodyStream {
 public:
  EntryStream(std::vector<AuditEntry> entries, json::value next)
      : entries_(std::move(entries)), next_(std::move(next)) {}

  boost::asio::awaitable<std::string> next() override {
    if (done_) co_return std::string();
    if (position_ == entries_.size()) {
      done_ = true;
      co_return "],\"count\":" + std::to_string(entries_.size()) +
          ",\"next_after_id\":" + json::serialize(next_) + "}";
    }
    std::string out = position_ == 0 ? "{\"entries\":[" : ",";
    out += json::serialize(entry_json(entries_[position_]));
    entries_[position_++] = AuditEntry{};
    co_return out;
  }

 private:
  std::vector<AuditEntry> entries_;
  json::value next_;
  std::size_t position_ = 0;
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
  auto entries =
      co_await service_.audit(request_context(config_, service_.clock(), req), std::move(query));
  json::value next = trim_page(entries, limit, [](const AuditEntry& e) { return e.id; });
  if (entries.empty()) {
    co_return json_response(200, json::object{{"entries", json::array{}}, {"count", 0},
                                              {"next_after_id", std::move(next)}});
  }
  co_return co_await streamed_response(
      200, std::make_shared<EntryStream>(std::move(entries), std::move(next)));
}

}  // namespace dlq::http

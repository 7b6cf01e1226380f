// GET /audit: the operators' audit log, newest first, keyset-paged by after_id.
#include <boost/json.hpp>

#include "http/api.hpp"
#include "http/api_support.hpp"

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

}  // namespace

Api::R Api::audit(const Request& req, const RouteMatch&) {
  store::AuditQuery query;
  FieldErrors errors = core::decode_audit(req.query, query);
  if (!errors.empty()) co_return validation_problem(context(config_, req), errors);
  const int limit = query.limit;
  query.limit = limit + 1;  // one more tells whether another page follows
  auto entries =
      co_await service_.audit(request_context(config_, service_.clock(), req), std::move(query));
  json::value next = trim_page(entries, limit, [](const AuditEntry& e) { return e.id; });
  json::array items;
  for (const auto& e : entries) items.push_back(entry_json(e));
  json::object body;
  std::size_t count = items.size();
  body["entries"] = std::move(items);
  body["count"] = count;
  body["next_after_id"] = std::move(next);
  co_return json_response(200, body);
}

}  // namespace dlq::http

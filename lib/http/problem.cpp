// Problem details: the mapping from dlq's error codes to HTTP status, slug and title.
#include "http/problem.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "model/percent.hpp"

namespace dlq::http {
namespace json = boost::json;

namespace {

struct Mapping {
  int status;
  std::string_view slug;
  std::string_view title;
};

Mapping mapping_for(Errc code) {
  switch (code) {
    case Errc::unknown_queue: return {404, "unknown-queue", "Unknown queue"};
    case Errc::message_not_found: return {404, "message-not-found", "Message not found"};
    case Errc::invalid_state: return {409, "invalid-state", "Invalid state"};
    case Errc::lease_lost: return {409, "lease-lost", "Lease lost"};
    case Errc::already_succeeded: return {409, "already-succeeded", "Already succeeded"};
    case Errc::idempotency_conflict:
      return {409, "idempotency-conflict", "Idempotency key in flight"};
    case Errc::preview_stale: return {409, "preview-stale", "Preview is stale"};
    case Errc::validation_failed: return {422, "validation-failed", "Validation failed"};
    case Errc::replay_not_found: return {404, "replay-not-found", "Replay run not found"};
    case Errc::replay_limit: return {409, "replay-limit", "Replay limit reached"};
    case Errc::trial_not_found: return {404, "trial-not-found", "Trial run not found"};
  }
  return {500, "internal-error", "Internal server error"};
}

json::object base_problem(const ProblemContext& ctx, int status, std::string_view slug,
                          std::string_view title, std::string_view detail,
                          std::string_view error) {
  json::object o;
  std::string type = ctx.base;
  type += '/';
  type += slug;
  o["type"] = type;
  o["title"] = title;
  o["status"] = status;
  // The path as received, but never raw bytes that would make the answer invalid UTF-8.
  o["instance"] = percent_encode_unprintable(ctx.instance);
  o["detail"] = detail;
  o["error"] = error;
  return o;
}

Response to_response(int status, const json::object& body) {
  Response r;
  r.status = status;
  r.content_type = "application/problem+json";
  r.body = json::serialize(body);
  return r;
}

}  // namespace

Response problem(const ProblemContext& ctx, int status, std::string_view slug,
                 std::string_view title, std::string_view detail, std::string_view error) {
  return to_response(status, base_problem(ctx, status, slug, title, detail, error));
}

int status_for(Errc code) { return mapping_for(code).status; }

Response problem_from_error(const ProblemContext& ctx, const Error& e) {
  if (e.code == Errc::validation_failed) return validation_problem(ctx, e.fields);
  Mapping m = mapping_for(e.code);
  return problem(ctx, m.status, m.slug, m.title, e.message, e.message);
}

Response validation_problem(const ProblemContext& ctx, const FieldErrors& errors) {
  std::string detail;
  for (const auto& e : errors) detail += (detail.empty() ? "" : "; ") + e.message;
  json::object o = base_problem(ctx, 422, "validation-failed", "Validation failed", detail,
                                "validation failed");
  json::array list;
  for (const auto& e : errors) {
    json::object item;
    item["field"] = e.field;
    item["message"] = e.message;
    item["code"] = e.code;
    list.push_back(std::move(item));
  }
  o["errors"] = std::move(list);
  return to_response(422, o);
}

}  // namespace dlq::http

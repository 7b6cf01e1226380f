// The SQS front: protocols, authentication and error shapes around the actions
// (sqs_*_actions.cpp). Two codecs over one mapping: the JSON 1.0 protocol (X-Amz-Target) and the
// query protocol (form fields, XML answers; sqs_query.cpp) for SDKs from before late 2023.
#include "http/api_sqs.hpp"

#include <boost/json.hpp>

#include "core/sigv4.hpp"
#include "http/api_support.hpp"
#include "http/sqs_actions.hpp"
#include "http/sqs_query.hpp"
#include "model/logging.hpp"

namespace dlq::http {
namespace json = boost::json;

namespace {

constexpr std::string_view kJsonType = "application/x-amz-json-1.0";
constexpr std::string_view kXmlType = "text/xml";
constexpr std::string_view kTargetPrefix = "AmazonSQS.";

// Which codec a request speaks: JSON names its action in X-Amz-Target, the query protocol in its
// form's Action.
enum class Protocol { json, query };

Protocol protocol_of(const Request& req) {
  return req.header("x-amz-target") ? Protocol::json : Protocol::query;
}

Response sqs_answer(const Request& req, Protocol p, int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = std::string(p == Protocol::json ? kJsonType : kXmlType);
  r.body = std::move(body);
  r.headers.emplace_back("x-amzn-RequestId", req.request_id);
  return r;
}

Response error_answer(const Request& req, Protocol p, const std::string& name,
                      const std::string& message) {
  int status = sqs::error_status(name);
  bool sender = status < 500;
  if (p == Protocol::query) {
    return sqs_answer(req, p, status,
                      sqs::query::error_xml(sender, sqs::error_code(name), message, req.request_id));
  }
  Response r = sqs_answer(
      req, p, status,
      json::serialize(json::object{{"__type", "com.amazonaws.sqs#" + name}, {"message", message}}));
  r.headers.emplace_back("x-amzn-query-error",
                         sqs::error_code(name) + (sender ? ";Sender" : ";Receiver"));
  return r;
}

// The action a request names and its members in the JSON protocol's shape, or the error to
// answer. `query`: the form body, or the query string when the body is empty.
struct Decoded {
  std::string action;
  json::object in;
  std::string error, message;
};

Decoded decode_json(const Request& req) {
  Decoded d;
  const std::string* target = req.header("x-amz-target");
  if (!target || !target->starts_with(kTargetPrefix) ||
      !sqs::Actions::known(std::string_view(*target).substr(kTargetPrefix.size()))) {
    d.error = "UnknownOperationException";
    d.message = "X-Amz-Target must name an SQS action (AmazonSQS.<Action>)";
    return d;
  }
  d.action = target->substr(kTargetPrefix.size());
  if (!req.body.empty()) {
    boost::system::error_code ec;
    json::value doc = json::parse(req.body, ec);
    if (ec || !doc.is_object()) {
      d.error = "SerializationException";
      d.message = "the body must be a JSON object";
      return d;
    }
    d.in = std::move(doc.as_object());
  }
  return d;
}

Decoded decode_query(const Request& req) {
  Decoded d;
  try {
    std::string_view form = req.body;
    if (form.empty()) {
      auto mark = req.target.find('?');
      if (mark != std::string::npos) form = std::string_view(req.target).substr(mark + 1);
    }
    auto parsed = sqs::query::parse(form);
    if (!sqs::Actions::known(parsed.action)) {
      d.error = "InvalidAction";
      d.message = "The action " + parsed.action + " is not valid for this endpoint.";
      return d;
    }
    d.action = std::move(parsed.action);
    d.in = std::move(parsed.in);
  } catch (const sqs::query::CodecError& e) {
    d.error = e.name();
    d.message = e.what();
  }
  return d;
}

// The signature refusals' SQS names.
std::pair<std::string, std::string> refusal(core::sigv4::Verdict v) {
  using enum core::sigv4::Verdict;
  switch (v) {
    case missing:
      return {"MissingAuthenticationToken", "the request must be signed with AWS Signature "
                                            "Version 4 (an sqs.access_keys key)"};
    case presigned:
      return {"MissingAuthenticationToken", "presigned URLs are not accepted: sign the request's "
                                            "Authorization header"};
    case security_token:
      return {"InvalidClientTokenId", "temporary credentials (X-Amz-Security-Token) are not "
                                      "accepted: use an sqs.access_keys key"};
    case malformed:
      return {"MissingAuthenticationToken", "the Authorization header is not a valid AWS4-HMAC-SHA256 "
                                            "signature with a signed host"};
    case unknown_key:
      return {"InvalidClientTokenId", "the security token included in the request is invalid"};
    case bad_scope:
    case skewed:
    case bad_signature:
    case ok:
      break;
  }
  return {"SignatureDoesNotMatch", "the request signature we calculated does not match the "
                                   "signature you provided (check the key, the region and the "
                                   "clock)"};
}

}  // namespace

SqsHandlers::SqsHandlers(core::QueueService& service, core::DeadLetterDesk& desk,
                         store::Store& store, const core::AccessControl& access,
                         const Config& config)
    : service_(service),
      access_(access),
      config_(config),
      actions_(std::make_unique<sqs::Actions>(service, desk, store, config)) {
  if (!config.sqs.public_url.empty()) actions_->set_base_url(config.sqs.public_url);
}

SqsHandlers::~SqsHandlers() = default;

void SqsHandlers::bound(const std::string& address) {
  if (config_.sqs.public_url.empty()) actions_->set_base_url("http://" + address);
}

Response SqsHandlers::refused(const Request& req, const std::string& message) {
  return error_answer(req, protocol_of(req), "AccessDenied", message);
}

SqsHandlers::R SqsHandlers::sqs(const Request& req, const RouteMatch& m) {
  const Protocol p = protocol_of(req);
  // Who asks: a SigV4 key, anyone (no keys and no tokens), or nobody (tokens without keys).
  core::Principal who;
  switch (access_.sqs_mode()) {
    case core::SqsMode::refused:
      co_return error_answer(req, p, "AccessDenied",
                             "auth.tokens are configured but sqs.access_keys are not: the SQS "
                             "front needs access keys (docs/sqs.md)");
    case core::SqsMode::anonymous:
      who = {"anonymous", {Role::admin}};
      break;
    case core::SqsMode::keys: {
      auto keys = access_.sqs_keys();
      core::sigv4::Request signed_request{req.method, req.path,
                                          req.target.find('?') == std::string::npos
                                              ? std::string_view()
                                              : std::string_view(req.target).substr(req.target.find('?') + 1),
                                          &req.headers, req.body};
      auto verdict = core::sigv4::verify(
          signed_request, config_.sqs.region, "sqs", std::chrono::system_clock::now(),
          [&keys](std::string_view id) -> std::optional<std::string> {
            const auto* key = keys->find(id);
            if (!key) return std::nullopt;
            return key->secret;
          });
      if (verdict.verdict != core::sigv4::Verdict::ok) {
        auto [name, message] = refusal(verdict.verdict);
        co_return error_answer(req, p, name, message);
      }
      who = keys->find(verdict.access_key_id)->principal;
      break;
    }
  }
  Decoded decoded = p == Protocol::json ? decode_json(req) : decode_query(req);
  if (!decoded.error.empty()) co_return error_answer(req, p, decoded.error, decoded.message);
  const std::string& action = decoded.action;
  if (!sqs::Actions::served(action)) {
    co_return error_answer(req, p, "UnsupportedOperation", action + " is not supported by dlq");
  }
  const json::object& in = decoded.in;
  sqs::Call call;
  call.who = std::move(who);
  if (m.params.size() == 1) {
    auto queue = support::queue_param(m.params.front());
    call.path_queue = queue.value_or(std::string(m.params.front()));
  }
  call.ctx = support::request_context(config_, service_.clock(), req);
  call.ctx.actor = call.who.name;
  // The handlers only note what went wrong: the answer is made after them (GCC 12 mishandles a
  // co_return inside a handler: the exception object was read after it was freed).
  std::string failure, message;
  try {
    json::object out = co_await actions_->run(action, call, in);
    co_return sqs_answer(req, p, 200,
                         p == Protocol::json
                             ? json::serialize(out)
                             : sqs::query::result_xml(action, out, req.request_id));
  } catch (const sqs::SqsError& e) {
    failure = e.name();
    message = e.what();
  } catch (const DatabaseUnavailable& e) {
    log::warn("database unavailable", {{"path", req.path}, {"request_id", req.request_id},
                                       {"error", e.what()}});
    failure = "ServiceUnavailable";
  } catch (const ShuttingDown&) {
    failure = "ServiceUnavailable";
  } catch (const std::exception& e) {
    log::error("request failed", {{"path", req.path}, {"request_id", req.request_id},
                                  {"error", e.what()}});
    failure = "InternalFailure";
  }
  if (message.empty()) {
    message = failure == "ServiceUnavailable"
                  ? "the database cannot be reached or the server is shutting down; retry later"
                  : "the server could not complete the request";
  }
  co_return error_answer(req, p, failure, message);
}

}  // namespace dlq::http

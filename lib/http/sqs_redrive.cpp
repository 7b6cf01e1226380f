// RedrivePolicy and RedriveAllowPolicy (issue 39): parsing, the target's checks, and the queues
// that name a dead-letter queue.
#include "http/sqs_redrive.hpp"

#include <boost/json.hpp>

#include "core/sqs_queue_set.hpp"
#include "core/transitions.hpp"
#include "http/sqs_actions.hpp"
#include "http/sqs_fields.hpp"

namespace dlq::http::sqs {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

json::object policy_object(const std::string& given, std::string_view name) {
  boost::system::error_code ec;
  json::value doc = json::parse(given, ec);
  if (ec || !doc.is_object()) invalid("Value " + given + " for parameter " + std::string(name) + " is invalid. Reason: must be a JSON object.");
  return std::move(doc.as_object());
}

// maxReceiveCount as a number or a string of digits.
std::optional<long long> count_of(const json::value& v) {
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64()) return v.as_uint64() > 1000 ? 1001 : static_cast<long long>(v.as_uint64());
  if (v.is_string()) return parse_int(v.as_string());
  return std::nullopt;
}

}  // namespace

std::string queue_arn(const Config& config, std::string_view name) {
  return "arn:aws:sqs:" + config.sqs.region + ":" + config.sqs.account_id + ":" + std::string(name);
}

std::optional<std::string> arn_queue(const Config& config, std::string_view arn) {
  std::string prefix = queue_arn(config, "");
  if (!arn.starts_with(prefix)) return std::nullopt;
  std::string name(arn.substr(prefix.size()));
  if (!valid_queue_name(name)) return std::nullopt;
  return name;
}

std::string redrive_policy_text(const std::string& given, const Config& config) {
  if (given.empty()) return given;
  json::object o = policy_object(given, "RedrivePolicy");
  for (const auto& member : o) {
    if (member.key() != "deadLetterTargetArn" && member.key() != "maxReceiveCount") {
      invalid("Value " + given + " for parameter RedrivePolicy is invalid. Reason: Redrive policy "
              "contains an unknown member " + std::string(member.key()) + ".");
    }
  }
  const json::value* arn = o.if_contains("deadLetterTargetArn");
  const json::value* count = o.if_contains("maxReceiveCount");
  if (!arn || !count) {
    invalid("Value " + given + " for parameter RedrivePolicy is invalid. Reason: Redrive policy "
            "does not contain mandatory attribute: " +
            (arn ? "maxReceiveCount" : "deadLetterTargetArn") + ".");
  }
  if (!arn->is_string() || !arn_queue(config, arn->as_string())) {
    invalid("Value " + given + " for parameter RedrivePolicy is invalid. Reason: Dead-letter "
            "target must be a queue of region " + config.sqs.region + " and account " +
            config.sqs.account_id + ".");
  }
  auto n = count_of(*count);
  if (!n || *n < 1 || *n > 1000) {
    invalid("Value " + given + " for parameter RedrivePolicy is invalid. Reason: Invalid value for "
            "maxReceiveCount: must be an integer from 1 to 1000.");
  }
  return json::serialize(json::object{{"deadLetterTargetArn", arn->as_string()},
                                      {"maxReceiveCount", *n}});
}

std::string redrive_allow_policy_text(const std::string& given) {
  if (given.empty()) return given;
  json::object o = policy_object(given, "RedriveAllowPolicy");
  const json::value* permission = o.if_contains("redrivePermission");
  const json::value* sources = o.if_contains("sourceQueueArns");
  std::string_view p = permission && permission->is_string() ? std::string_view(permission->as_string())
                                                            : std::string_view();
  if (p != "allowAll" && p != "denyAll" && p != "byQueue") {
    invalid("Value " + given + " for parameter RedriveAllowPolicy is invalid. Reason: "
            "redrivePermission must be allowAll, denyAll or byQueue.");
  }
  json::object out{{"redrivePermission", p}};
  if (p == "byQueue") {
    if (!sources || !sources->is_array() || sources->as_array().empty() ||
        sources->as_array().size() > 10) {
      invalid("Value " + given + " for parameter RedriveAllowPolicy is invalid. Reason: byQueue "
              "needs sourceQueueArns, 1 to 10 queue ARNs.");
    }
    for (const auto& a : sources->as_array()) {
      if (!a.is_string()) {
        invalid("Value " + given + " for parameter RedriveAllowPolicy is invalid. Reason: "
                "sourceQueueArns must list ARNs.");
      }
    }
    out["sourceQueueArns"] = *sources;
  } else if (sources) {
    invalid("Value " + given + " for parameter RedriveAllowPolicy is invalid. Reason: "
            "sourceQueueArns is allowed only with redrivePermission byQueue.");
  }
  return json::serialize(out);
}

bool redrive_allowed(const std::string& allow_text, std::string_view source_arn) {
  if (allow_text.empty()) return true;
  boost::system::error_code ec;
  json::value doc = json::parse(allow_text, ec);
  if (ec || !doc.is_object()) return true;  // stored only after the check above
  const auto& o = doc.as_object();
  const auto* p = o.if_contains("redrivePermission");
  if (!p || !p->is_string() || p->as_string() == "allowAll") return true;
  if (p->as_string() == "denyAll") return false;
  if (const auto* sources = o.if_contains("sourceQueueArns"); sources && sources->is_array()) {
    for (const auto& a : sources->as_array()) {
      if (a.is_string() && a.as_string() == source_arn) return true;
    }
  }
  return false;
}

awaitable<void> Actions::check_redrive(const std::string& source,
                                       const std::map<std::string, std::string>& given) {
  auto it = given.find("RedrivePolicy");
  if (it == given.end() || it->second.empty()) co_return;
  auto redrive = core::SqsQueueSet::parse_redrive(it->second);
  if (!redrive) invalid("Value for parameter RedrivePolicy is invalid.");
  if (redrive->target == source) {
    invalid("Value " + it->second + " for parameter RedrivePolicy is invalid. Reason: A queue "
            "cannot be its own dead-letter queue.");
  }
  auto target = co_await store_.sqs_queue_find(redrive->target);
  if (!target) {
    invalid("Value " + it->second + " for parameter RedrivePolicy is invalid. Reason: Dead letter "
            "target does not exist.");
  }
  auto allow = stored_map(target->attributes);
  auto a = allow.find("RedriveAllowPolicy");
  if (!redrive_allowed(a == allow.end() ? std::string() : a->second, queue_arn(config_, source))) {
    invalid("Value " + it->second + " for parameter RedrivePolicy is invalid. Reason: Queue " +
            queue_arn(config_, source) + " is not allowed to use " + redrive->target +
            " as its dead-letter queue (its RedriveAllowPolicy).");
  }
}

awaitable<std::vector<std::string>> Actions::source_queues(const std::string& dlq,
                                                          std::optional<std::string> after,
                                                          std::size_t limit) {
  // The registry is small (limits.max_queues): read it through, in name order.
  std::vector<std::string> out;
  store::SqsQueuePage page;
  page.limit = 1000;
  page.after = std::move(after);
  for (;;) {
    auto rows = co_await store_.sqs_queues_page(page);
    for (const auto& r : rows) {
      auto redrive = core::SqsQueueSet::parse(r.attributes).redrive;
      if (!redrive || redrive->target != dlq) continue;
      out.push_back(r.name);
      if (out.size() >= limit) co_return out;
    }
    if (static_cast<int>(rows.size()) < page.limit) co_return out;
    page.after = rows.back().name;
  }
}

Actions::Out Actions::list_dead_letter_source_queues(const Call& call, const json::object& in) {
  need(call.who, Role::reader);
  auto row = co_await queue_of(call, in);
  auto max = integer(in, "MaxResults");
  auto limit = static_cast<std::size_t>(in_range(max, "MaxResults", 1, 1000, 1000));
  std::optional<std::string> after;
  if (auto token = text(in, "NextToken")) {
    after = base64_decode(*token);
    if (!after || !valid_queue_name(*after)) invalid("Invalid NextToken value.");
  }
  auto names = co_await source_queues(row.name, std::move(after), limit + 1);
  bool more = names.size() > limit;
  if (more) names.resize(limit);
  json::array urls;
  for (const auto& n : names) urls.emplace_back(queue_url(n));
  json::object out{{"queueUrls", std::move(urls)}};
  if (more && max) out["NextToken"] = base64_encode(names.back());
  co_return out;
}

// ---- dead letters through their dead-letter queue ----------------------------------------------

namespace {

constexpr std::size_t kDismissBatch = 1000;

store::DismissBatchParams dismissal(const Call& call, const std::string& dlq,
                                    std::vector<MessageId> ids, std::string reason,
                                    std::string sqs_action,
                                    std::map<MessageId, std::string> receipts) {
  store::DismissBatchParams batch;
  batch.ids = std::move(ids);
  // Still a dead letter of this queue, and (for a delete) under the latest receive's receipt: a
  // stale handle succeeds and changes nothing, as SQS documents.
  batch.decide = [dlq, reason, receipts = std::move(receipts), actor = call.who.name,
                  now = call.ctx.now](const Message& m,
                                      const store::Related&) -> Result<store::Change> {
    if (m.status != Status::dead || m.dead_letter_queue != dlq) {
      return Error(Errc::invalid_state, "no longer a dead letter of " + dlq);
    }
    if (auto r = receipts.find(m.id); r != receipts.end() && m.sqs_receipt != r->second) {
      return Error(Errc::invalid_state, "received again since");
    }
    return core::dismiss(m, reason, actor, now);
  };
  batch.audit = [dlq, reason, sqs_action, actor = call.who.name, now = call.ctx.now](
                    const std::vector<MessageId>& dismissed, long long skipped) {
    AuditEntry e;
    e.at = now;
    e.actor = actor;
    e.action = "dismiss";
    e.message_ids = dismissed;
    e.filter = json::serialize(json::object{{"dead_letter_queue", dlq}});
    e.reason = reason;
    e.details = json::serialize(json::object{{"status", "dismissed"},
                                             {"dismissed", static_cast<long long>(dismissed.size())},
                                             {"skipped", skipped},
                                             {"sqs_action", sqs_action}});
    return e;
  };
  return batch;
}

}  // namespace

awaitable<void> Actions::dismiss_dead(const Call& call, const std::string& dlq,
                                      std::vector<std::pair<MessageId, std::string>> receipts,
                                      std::string sqs_action) {
  std::vector<MessageId> ids;
  std::map<MessageId, std::string> by_id;
  for (auto& [id, receipt] : receipts) {
    if (by_id.emplace(id, std::move(receipt)).second) ids.push_back(id);
  }
  auto done = co_await store_.messages_dismiss_batch(
      dismissal(call, dlq, std::move(ids), "deleted through SQS", std::move(sqs_action),
                std::move(by_id)));
  for (const auto& m : done.messages) {
    service_.publish(core::EventKind::dismissed, m, call.ctx.now, call.who.name);
  }
}

awaitable<void> Actions::purge_dead(const Call& call, const std::string& dlq) {
  store::DeadMatchParams match;
  match.filter.dead_letter_queue = dlq;
  match.sample = 0;
  auto matched = co_await store_.dead_match(std::move(match));
  const auto& ids = matched.ids;
  for (std::size_t from = 0; from < ids.size(); from += kDismissBatch) {
    std::vector<MessageId> part(ids.begin() + static_cast<std::ptrdiff_t>(from),
                                ids.begin() + static_cast<std::ptrdiff_t>(
                                                  std::min(ids.size(), from + kDismissBatch)));
    auto done = co_await store_.messages_dismiss_batch(
        dismissal(call, dlq, std::move(part), "purged through SQS", "PurgeQueue", {}));
    for (const auto& m : done.messages) {
      service_.publish(core::EventKind::dismissed, m, call.ctx.now, call.who.name);
    }
  }
}

}  // namespace dlq::http::sqs

// The SQS actions on queues and the registry, each mapped onto the store's sqs_queues and the
// queue service (docs/sqs.md); the dispatch of every action.
#include "http/sqs_actions.hpp"

#include <map>

#include <boost/json.hpp>

#include "core/retention.hpp"
#include "http/sqs_fields.hpp"
#include "http/sqs_redrive.hpp"
#include "model/logging.hpp"

namespace dlq::http::sqs {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// ---- queue attributes --------------------------------------------------------------------------

struct Settable {
  std::string_view name;
  long long lo, hi;
};
// MaximumMessageSize's upper end is limits.max_payload_bytes (checked where it is known).
constexpr Settable kSettable[] = {{"VisibilityTimeout", 0, 43200},
                                  {"DelaySeconds", 0, 900},
                                  {"ReceiveMessageWaitTimeSeconds", 0, 20},
                                  {"MessageRetentionPeriod", 60, 1209600},
                                  {"MaximumMessageSize", 1024, INT64_MAX}};
constexpr std::string_view kReadOnly[] = {
    "QueueArn", "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp", "LastModifiedTimestamp"};
// JSON documents, checked and stored normalised (sqs_redrive.cpp); "" removes one.
constexpr std::string_view kPolicies[] = {"RedrivePolicy", "RedriveAllowPolicy"};
constexpr std::string_view kUnsupported[] = {
    "FifoQueue",          "Policy",           "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled", "ContentBasedDeduplication", "DeduplicationScope",
    "FifoThroughputLimit"};

// The attributes a CreateQueue or SetQueueAttributes gives, validated; the policies normalised.
std::map<std::string, std::string> settable_attributes(std::map<std::string, std::string> given,
                                                       const Config& config) {
  for (auto& entry : given) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& name = entry.first;
    const std::string& value = entry.second;
    if (listed(kUnsupported, name)) fail("UnsupportedOperation", name + " is not supported by dlq");
    if (listed(kReadOnly, name)) fail("InvalidAttributeName", name + " is read-only.");
    if (name == "RedrivePolicy") {
      entry.second = redrive_policy_text(value, config);
      continue;
    }
    if (name == "RedriveAllowPolicy") {
      entry.second = redrive_allow_policy_text(value);
      continue;
    }
    auto it = std::find_if(std::begin(kSettable), std::end(kSettable),
                           [&](const Settable& s) { return s.name == name; });
    if (it == std::end(kSettable)) fail("InvalidAttributeName", "Unknown Attribute " + name + ".");
    long long hi = name == "MaximumMessageSize" ? config.limits.max_payload_bytes : it->hi;
    auto v = parse_int(value);
    if (!v || *v < it->lo || *v > hi) {
      fail("InvalidAttributeValue", "Invalid value for the parameter " + name + ": must be an "
                                    "integer from " + std::to_string(it->lo) + " to " +
                                    std::to_string(hi) + ".");
    }
  }
  return given;
}

}  // namespace

Actions::Actions(core::QueueService& service, core::DeadLetterDesk& desk, store::Store& store,
                 const Config& config)
    : service_(service), desk_(desk), store_(store), config_(config) {}

namespace {
constexpr std::string_view kServed[] = {
    "CreateQueue",          "GetQueueUrl",          "ListQueues",
    "DeleteQueue",          "GetQueueAttributes",   "SetQueueAttributes",
    "TagQueue",             "UntagQueue",           "ListQueueTags",
    "ListDeadLetterSourceQueues", "PurgeQueue",     "SendMessage",
    "SendMessageBatch",     "ReceiveMessage",       "DeleteMessage",
    "DeleteMessageBatch",   "ChangeMessageVisibility", "ChangeMessageVisibilityBatch",
    "StartMessageMoveTask", "CancelMessageMoveTask", "ListMessageMoveTasks"};
constexpr std::string_view kNotServed[] = {"AddPermission", "RemovePermission"};
}  // namespace

bool Actions::known(std::string_view action) {
  return listed(kServed, action) || listed(kNotServed, action);
}
bool Actions::served(std::string_view action) { return listed(kServed, action); }

std::string Actions::queue_url(std::string_view queue) const {
  return base_url_ + "/" + config_.sqs.account_id + "/" + std::string(queue);
}

awaitable<store::SqsQueueRow> Actions::queue_of(const Call& call, const json::object& in) {
  std::optional<std::string> name = call.path_queue;
  if (auto url = text(in, "QueueUrl")) {
    // Any host: the path's last two segments, the account and the queue.
    std::string_view path = *url;
    if (auto scheme = path.find("://"); scheme != std::string_view::npos) {
      path.remove_prefix(scheme + 3);
      auto slash = path.find('/');
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    }
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    auto last = path.rfind('/');
    std::string_view queue = last == std::string_view::npos ? path : path.substr(last + 1);
    std::string_view head = last == std::string_view::npos ? std::string_view() : path.substr(0, last);
    auto account_at = head.rfind('/');
    std::string_view account = account_at == std::string_view::npos ? head : head.substr(account_at + 1);
    if (account != config_.sqs.account_id) {
      fail("QueueDoesNotExist", "The specified queue does not exist.");
    }
    name = std::string(queue);
  }
  if (!name) fail("MissingParameter", "The request must contain the parameter QueueUrl.");
  if (!valid_queue_name(*name)) fail("QueueDoesNotExist", "The specified queue does not exist.");
  // The node's registry, reloaded at most once a second, answers; a name it lacks is looked up
  // (created on another node since). Another node's change shows within a second.
  co_await service_.refresh_sqs_queues(service_.clock().now());
  if (auto held = service_.sqs_queues().row(*name)) co_return std::move(*held);
  auto row = co_await store_.sqs_queue_find(*name);
  if (!row) fail("QueueDoesNotExist", "The specified queue does not exist.");
  service_.sqs_queues().put(*row);
  co_return std::move(*row);
}

// The decision runs on a store thread inside a commit group, where an exception must not escape:
// an SqsError is carried back and thrown here.
awaitable<std::optional<store::SqsQueueRow>> Actions::change_queue(std::string name,
                                                                  store::DecideSqsQueue decide) {
  std::optional<SqsError> refused;
  store::DecideSqsQueue guarded = [&refused, decide = std::move(decide)](
                                      const std::optional<store::SqsQueueRow>& existing,
                                      long long in_use) -> Result<store::SqsQueueChange> {
    try {
      return decide(existing, in_use);
    } catch (const SqsError& e) {
      refused.emplace(e);
      return Error(Errc::invalid_state, e.what());
    }
  };
  auto changed = co_await store_.sqs_queue_change(std::move(name), std::move(guarded));
  if (refused) throw *refused;
  if (!changed) fail("InternalFailure", changed.error().message);
  co_return std::move(*changed);
}

awaitable<std::optional<store::SqsQueueRow>> Actions::change_existing(
    std::string name, std::function<void(store::SqsQueueRow&)> edit) {
  store::DecideSqsQueue decide = [edit = std::move(edit)](
                                     const std::optional<store::SqsQueueRow>& existing,
                                     long long) -> Result<store::SqsQueueChange> {
    if (!existing) fail("QueueDoesNotExist", "The specified queue does not exist.");
    store::SqsQueueChange change{true, *existing};
    edit(change.row);
    return change;
  };
  co_return co_await change_queue(std::move(name), std::move(decide));
}

awaitable<json::object> Actions::run(std::string_view action, const Call& call,
                                     const json::object& in) {
  using Fn = Out (Actions::*)(const Call&, const json::object&);
  static const std::map<std::string_view, Fn> kTable = {
      {"CreateQueue", &Actions::create_queue},
      {"GetQueueUrl", &Actions::get_queue_url},
      {"ListQueues", &Actions::list_queues},
      {"DeleteQueue", &Actions::delete_queue},
      {"GetQueueAttributes", &Actions::get_queue_attributes},
      {"SetQueueAttributes", &Actions::set_queue_attributes},
      {"TagQueue", &Actions::tag_queue},
      {"UntagQueue", &Actions::untag_queue},
      {"ListQueueTags", &Actions::list_queue_tags},
      {"ListDeadLetterSourceQueues", &Actions::list_dead_letter_source_queues},
      {"PurgeQueue", &Actions::purge_queue},
      {"SendMessage", &Actions::send_message},
      {"SendMessageBatch", &Actions::send_message_batch},
      {"ReceiveMessage", &Actions::receive_message},
      {"DeleteMessage", &Actions::delete_message},
      {"DeleteMessageBatch", &Actions::delete_message_batch},
      {"ChangeMessageVisibility", &Actions::change_message_visibility},
      {"ChangeMessageVisibilityBatch", &Actions::change_message_visibility_batch},
      {"StartMessageMoveTask", &Actions::start_message_move_task},
      {"CancelMessageMoveTask", &Actions::cancel_message_move_task},
      {"ListMessageMoveTasks", &Actions::list_message_move_tasks},
  };
  auto it = kTable.find(action);
  if (it == kTable.end()) fail("UnsupportedOperation", std::string(action) + " is not supported by dlq");
  co_return co_await (this->*(it->second))(call, in);
}

// ---- queues ------------------------------------------------------------------------------------

Actions::Out Actions::create_queue(const Call& call, const json::object& in) {
  need_any(call.who);
  std::string name = required_text(in, "QueueName");
  if (!valid_queue_name(name)) {
    invalid("Can only include alphanumeric characters, hyphens, or underscores. 1 to 64 in "
            "length (dlq's queue names; .fifo queues are not supported)");
  }
  auto given = settable_attributes(string_map(in, "Attributes"), config_);
  co_await check_redrive(name, given);
  std::erase_if(given, [](const auto& kv) { return kv.second.empty(); });  // a policy of ""
  auto tags = string_map(in, "tags");
  const bool admin = call.who.may(Role::admin);
  const TimeMs now = call.ctx.now;
  const long long max_queues = config_.limits.max_queues;
  const Config& config = config_;
  store::DecideSqsQueue decide = [&](const std::optional<store::SqsQueueRow>& existing,
                                     long long in_use) -> Result<store::SqsQueueChange> {
    if (existing) {
      // Re-creating: each given attribute must equal the effective value.
      auto stored = stored_map(existing->attributes);
      for (const auto& [k, v] : given) {
        std::string effective;
        if (auto s = stored.find(k); s != stored.end()) effective = s->second;
        else if (listed(kPolicies, k)) effective = "";
        else if (k == "VisibilityTimeout") effective = std::to_string(static_cast<long long>(config.policy_for(name).visibility_timeout));
        else if (k == "MessageRetentionPeriod") effective = "345600";
        else if (k == "MaximumMessageSize") effective = std::to_string(config.limits.max_payload_bytes);
        else effective = "0";
        bool same = listed(kPolicies, k) ? effective == v : parse_int(effective) == parse_int(v);
        if (!same) {
          fail("QueueNameExists", "A queue already exists with the same name and a different value for attribute " + k);
        }
      }
      return store::SqsQueueChange{};
    }
    if (!admin) fail("AccessDenied", "creating a queue needs the admin role (docs/access.md)");
    if (max_queues > 0 && in_use >= max_queues) {
      fail("OverLimit", "too many queues: at most " + std::to_string(max_queues) +
                            " (limits.max_queues)");
    }
    store::SqsQueueRow row;
    row.name = name;
    row.attributes = map_text(given);
    row.tags = map_text(tags);
    row.created_at = now;
    row.updated_at = now;
    if (given.contains("MessageRetentionPeriod")) row.retention_set_at = now;
    return store::SqsQueueChange{true, std::move(row)};
  };
  auto changed = co_await change_queue(name, std::move(decide));
  if (!changed) fail("InternalFailure", "the queue could not be created");
  if (changed->created_at == call.ctx.now && changed->updated_at == call.ctx.now) {
    log::info("sqs queue created", {{"queue", name}, {"actor", call.who.name}});
  }
  service_.sqs_queues().put(*changed);
  co_return json::object{{"QueueUrl", queue_url(name)}};
}

Actions::Out Actions::get_queue_url(const Call& call, const json::object& in) {
  need_any(call.who);
  std::string name = required_text(in, "QueueName");
  if (auto owner = text(in, "QueueOwnerAWSAccountId"); owner && *owner != config_.sqs.account_id) {
    fail("QueueDoesNotExist", "The specified queue does not exist.");
  }
  json::object by_name{{"QueueUrl", queue_url(name)}};
  auto row = co_await queue_of(call, by_name);
  co_return json::object{{"QueueUrl", queue_url(row.name)}};
}

Actions::Out Actions::list_queues(const Call& call, const json::object& in) {
  need(call.who, Role::reader);
  store::SqsQueuePage page;
  page.prefix = text(in, "QueueNamePrefix").value_or("");
  auto max = integer(in, "MaxResults");
  int limit = static_cast<int>(in_range(max, "MaxResults", 1, 1000, 1000));
  if (auto token = text(in, "NextToken")) {
    auto after = base64_decode(*token);
    if (!after || !valid_queue_name(*after)) invalid("Invalid NextToken value.");
    page.after = *after;
  }
  page.limit = limit + 1;
  auto rows = co_await store_.sqs_queues_page(page);
  json::object out;
  json::array urls;
  bool more = static_cast<int>(rows.size()) > limit;
  if (more) rows.resize(static_cast<std::size_t>(limit));
  for (const auto& r : rows) urls.emplace_back(queue_url(r.name));
  out["QueueUrls"] = std::move(urls);
  // SQS pages only when asked to (MaxResults); without it, the first 1,000.
  if (more && max) out["NextToken"] = base64_encode(rows.back().name);
  co_return out;
}

Actions::Out Actions::delete_queue(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  long long dead = co_await store_.dead_count(row.name);
  if (dead > 0) {
    invalid("queue " + row.name + " holds " + std::to_string(dead) +
            " dead letters (its own, or those its sources' RedrivePolicy sent it): replay or "
            "dismiss on the desk first");
  }
  co_await store_.sqs_queue_delete(row.name);
  service_.sqs_queues().erase(row.name);
  log::info("sqs queue deleted", {{"queue", row.name}, {"actor", call.who.name}});
  std::vector<Status> statuses = {Status::pending, Status::processing, Status::succeeded,
                                  Status::dismissed};
  co_await core::sqs_purge(store_, service_, call.ctx, row.name, std::move(statuses),
                           INT64_MAX, "DeleteQueue");
  co_return json::object{};
}

Actions::Out Actions::get_queue_attributes(const Call& call, const json::object& in) {
  need_any(call.who);
  auto row = co_await queue_of(call, in);
  auto wanted = strings(in, "AttributeNames");
  static const std::vector<std::string_view> kAll = {
      "VisibilityTimeout", "DelaySeconds", "ReceiveMessageWaitTimeSeconds",
      "MessageRetentionPeriod", "MaximumMessageSize", "QueueArn", "ApproximateNumberOfMessages",
      "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
      "CreatedTimestamp", "LastModifiedTimestamp", "RedrivePolicy", "RedriveAllowPolicy"};
  std::vector<std::string_view> names;
  bool all = std::find(wanted.begin(), wanted.end(), "All") != wanted.end();
  for (const auto& w : wanted) {
    if (w == "All") continue;
    if (std::find(kAll.begin(), kAll.end(), w) == kAll.end() && !listed(kUnsupported, w)) {
      fail("InvalidAttributeName", "Unknown Attribute " + w + ".");
    }
  }
  for (auto n : kAll) {
    if (all || std::find(wanted.begin(), wanted.end(), n) != wanted.end()) names.push_back(n);
  }
  auto stored = stored_map(row.attributes);
  std::optional<store::QueueStats> stats;
  json::object attributes;
  for (auto n : names) {
    std::string key(n);
    if (auto s = stored.find(key); s != stored.end()) {
      attributes[key] = s->second;
    } else if (listed(kPolicies, n)) {
      continue;  // only when set, as SQS answers
    } else if (n == "VisibilityTimeout") {
      attributes[key] = std::to_string(static_cast<long long>(config_.policy_for(row.name).visibility_timeout));
    } else if (n == "DelaySeconds" || n == "ReceiveMessageWaitTimeSeconds") {
      attributes[key] = "0";
    } else if (n == "MessageRetentionPeriod") {
      attributes[key] = "345600";
    } else if (n == "MaximumMessageSize") {
      attributes[key] = std::to_string(config_.limits.max_payload_bytes);
    } else if (n == "QueueArn") {
      attributes[key] = queue_arn(config_, row.name);
    } else if (n == "CreatedTimestamp") {
      attributes[key] = std::to_string(row.created_at / 1000);
    } else if (n == "LastModifiedTimestamp") {
      attributes[key] = std::to_string(row.updated_at / 1000);
    } else {
      if (!stats) {
        auto got = co_await service_.stats(call.ctx, row.name);
        stats = got.empty() ? store::QueueStats{} : got.front();
        // A dead-letter queue also counts the dead letters stamped with it.
        auto dead = co_await store_.sqs_dead_counts(row.name, call.ctx.now);
        stats->ready += dead.visible;
        stats->processing += dead.hidden;
      }
      long long v = n == "ApproximateNumberOfMessages" ? stats->ready
                    : n == "ApproximateNumberOfMessagesNotVisible" ? stats->processing
                                                                   : stats->scheduled;
      attributes[key] = std::to_string(v);
    }
  }
  json::object out;
  if (!attributes.empty()) out["Attributes"] = std::move(attributes);
  co_return out;
}

Actions::Out Actions::set_queue_attributes(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  auto given = settable_attributes(string_map(in, "Attributes"), config_);
  co_await check_redrive(row.name, given);
  const TimeMs now = call.ctx.now;
  auto changed = co_await change_existing(row.name, [&](store::SqsQueueRow& next) {
    auto stored = stored_map(next.attributes);
    for (const auto& [k, v] : given) {
      if (v.empty() && listed(kPolicies, k)) {
        stored.erase(k);
      } else {
        stored[k] = v;
      }
    }
    next.attributes = map_text(stored);
    next.updated_at = now;
    if (given.contains("MessageRetentionPeriod")) next.retention_set_at = now;
  });
  if (changed) service_.sqs_queues().put(*changed);
  log::info("sqs queue attributes set", {{"queue", row.name}, {"actor", call.who.name},
                                         {"attributes", map_text(given)}});
  co_return json::object{};
}

Actions::Out Actions::tag_queue(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  auto given = string_map(in, "Tags");
  for (const auto& [k, v] : given) {
    if (k.empty() || k.size() > 128 || v.size() > 256) {
      invalid("Tag keys must be 1 to 128 characters and values at most 256.");
    }
  }
  auto changed = co_await change_existing(row.name, [&](store::SqsQueueRow& next) {
    auto tags = stored_map(next.tags);
    for (const auto& [k, v] : given) tags[k] = v;
    if (tags.size() > 50) invalid("Too many tags: a queue holds at most 50.");
    next.tags = map_text(tags);
  });
  if (changed) service_.sqs_queues().put(*changed);
  co_return json::object{};
}

Actions::Out Actions::untag_queue(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  auto keys = strings(in, "TagKeys");
  auto changed = co_await change_existing(row.name, [&](store::SqsQueueRow& next) {
    auto tags = stored_map(next.tags);
    for (const auto& k : keys) tags.erase(k);
    next.tags = map_text(tags);
  });
  if (changed) service_.sqs_queues().put(*changed);
  co_return json::object{};
}

Actions::Out Actions::list_queue_tags(const Call& call, const json::object& in) {
  need(call.who, Role::reader);
  auto row = co_await queue_of(call, in);
  json::object tags;
  for (const auto& [k, v] : stored_map(row.tags)) tags[k] = v;
  json::object out;
  if (!tags.empty()) out["Tags"] = std::move(tags);
  co_return out;
}

Actions::Out Actions::purge_queue(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  std::vector<Status> statuses = {Status::pending, Status::processing};
  co_await core::sqs_purge(store_, service_, call.ctx, row.name, std::move(statuses),
                           call.ctx.now + 1, "PurgeQueue");
  co_await purge_dead(call, row.name);  // a dead-letter queue's dead letters are dismissed
  co_return json::object{};
}

}  // namespace dlq::http::sqs

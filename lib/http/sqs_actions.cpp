// The SQS actions, each mapped onto the queue service and the registry (docs/sqs.md).
#include "http/sqs_actions.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <boost/json.hpp>
#include <openssl/evp.h>

#include "core/retention.hpp"
#include "model/logging.hpp"
#include "model/sqs_digest.hpp"

namespace dlq::http::sqs {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// ---- errors ------------------------------------------------------------------------------------

struct ErrorKind {
  std::string_view name;
  int status;
  std::string_view code;  // empty: the name itself
};
constexpr ErrorKind kErrors[] = {
    {"QueueDoesNotExist", 400, "AWS.SimpleQueueService.NonExistentQueue"},
    {"QueueNameExists", 400, "QueueAlreadyExists"},
    {"ReceiptHandleIsInvalid", 404, ""},
    {"EmptyBatchRequest", 400, "AWS.SimpleQueueService.EmptyBatchRequest"},
    {"TooManyEntriesInBatchRequest", 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"},
    {"InvalidBatchEntryId", 400, "AWS.SimpleQueueService.InvalidBatchEntryId"},
    {"BatchEntryIdsNotDistinct", 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"},
    {"BatchRequestTooLong", 400, "AWS.SimpleQueueService.BatchRequestTooLong"},
    {"UnsupportedOperation", 400, "AWS.SimpleQueueService.UnsupportedOperation"},
    {"OverLimit", 403, ""},
    {"AccessDenied", 403, ""},
    {"MissingAuthenticationToken", 403, ""},
    {"InvalidClientTokenId", 403, ""},
    {"SignatureDoesNotMatch", 403, ""},
    {"ServiceUnavailable", 503, ""},
    {"InternalFailure", 500, ""},
};

[[noreturn]] void fail(std::string name, const std::string& message) {
  throw SqsError(std::move(name), message);
}
[[noreturn]] void invalid(const std::string& message) { fail("InvalidParameterValue", message); }

// ---- reading members ---------------------------------------------------------------------------

const json::value* member(const json::object& in, std::string_view name) {
  const json::value* v = in.if_contains(name);
  return v && !v->is_null() ? v : nullptr;
}

std::optional<std::string> text(const json::object& in, std::string_view name) {
  const json::value* v = member(in, name);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail("SerializationException", std::string(name) + " must be a string");
  return std::string(v->as_string());
}

std::string required_text(const json::object& in, std::string_view name) {
  auto v = text(in, name);
  if (!v) fail("MissingParameter", "the request must contain the parameter " + std::string(name));
  return *v;
}

std::optional<long long> integer(const json::object& in, std::string_view name) {
  const json::value* v = member(in, name);
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<long long>(v->as_uint64());
  }
  fail("SerializationException", std::string(name) + " must be an integer");
}

long long in_range(std::optional<long long> v, std::string_view name, long long lo, long long hi,
                   long long fallback) {
  if (!v) return fallback;
  if (*v < lo || *v > hi) {
    invalid("Value " + std::to_string(*v) + " for parameter " + std::string(name) +
            " is invalid. Reason: must be between " + std::to_string(lo) + " and " +
            std::to_string(hi) + ".");
  }
  return *v;
}

const json::array* array(const json::object& in, std::string_view name) {
  const json::value* v = member(in, name);
  if (!v) return nullptr;
  if (!v->is_array()) fail("SerializationException", std::string(name) + " must be a list");
  return &v->as_array();
}

std::vector<std::string> strings(const json::object& in, std::string_view name) {
  std::vector<std::string> out;
  if (const auto* list = array(in, name)) {
    for (const auto& v : *list) {
      if (!v.is_string()) fail("SerializationException", std::string(name) + " must list strings");
      out.emplace_back(v.as_string());
    }
  }
  return out;
}

// A map of strings (Attributes, Tags).
std::map<std::string, std::string> string_map(const json::object& in, std::string_view name) {
  std::map<std::string, std::string> out;
  const json::value* v = member(in, name);
  if (!v) return out;
  if (!v->is_object()) fail("SerializationException", std::string(name) + " must be a map");
  for (const auto& [k, value] : v->as_object()) {
    if (!value.is_string()) fail("SerializationException", std::string(name) + " values must be strings");
    out.emplace(std::string(k), std::string(value.as_string()));
  }
  return out;
}

std::optional<long long> parse_int(std::string_view s) {
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// ---- base64 ------------------------------------------------------------------------------------

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * text.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t size = static_cast<std::size_t>(n);
  if (text.size() >= 1 && text[text.size() - 1] == '=') --size;  // EVP counts padding as zeros
  if (text.size() >= 2 && text[text.size() - 2] == '=') --size;
  out.resize(size);
  return out;
}

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
constexpr std::string_view kNotYet[] = {"RedrivePolicy", "RedriveAllowPolicy"};
constexpr std::string_view kUnsupported[] = {
    "FifoQueue",          "Policy",           "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled", "ContentBasedDeduplication", "DeduplicationScope",
    "FifoThroughputLimit"};

template <class List>
bool listed(const List& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// The attributes a CreateQueue or SetQueueAttributes gives, validated.
std::map<std::string, std::string> settable_attributes(const std::map<std::string, std::string>& given,
                                                       const Config& config) {
  for (const auto& entry : given) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& name = entry.first;
    const std::string& value = entry.second;
    if (listed(kUnsupported, name)) fail("UnsupportedOperation", name + " is not supported by dlq");
    if (listed(kReadOnly, name)) fail("InvalidAttributeName", name + " is read-only.");
    if (listed(kNotYet, name)) {
      fail("InvalidAttributeValue", name + " is not supported yet (dead-letter queues come with "
                                           "the query protocol)");
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

std::map<std::string, std::string> stored_map(const std::string& text) {
  std::map<std::string, std::string> out;
  boost::system::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec || !doc.is_object()) return out;
  for (const auto& [k, v] : doc.as_object()) {
    if (v.is_string()) out.emplace(std::string(k), std::string(v.as_string()));
  }
  return out;
}

std::string map_text(const std::map<std::string, std::string>& m) {
  json::object o;
  for (const auto& [k, v] : m) o[k] = v;
  return json::serialize(o);
}

// ---- messages ----------------------------------------------------------------------------------

// SQS's allowed characters: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF (the JSON
// parser already holds the text to valid UTF-8).
bool allowed_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = 0;
    std::size_t len = 1;
    if (c < 0x80) cp = c;
    else if ((c >> 5) == 0x6) { cp = c & 0x1f; len = 2; }
    else if ((c >> 4) == 0xe) { cp = c & 0x0f; len = 3; }
    else { cp = c & 0x07; len = 4; }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    bool ok = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
              (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
    if (!ok) return false;
    i += len;
  }
  return true;
}

struct Attribute {
  dlq::sqs::MessageAttribute digest;  // binary_value decoded
  std::string binary_base64;          // as sent
};

bool valid_attribute_name(std::string_view n) {
  if (n.empty() || n.size() > 256 || n.front() == '.' || n.back() == '.') return false;
  if (n.find("..") != std::string_view::npos) return false;
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::string l = lower(n);
  if (l.starts_with("aws.") || l.starts_with("amazon.")) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// MessageAttributes as sent, validated: at most 10, SQS's name and DataType rules.
std::vector<Attribute> message_attributes(const json::object& in) {
  std::vector<Attribute> out;
  const json::value* v = member(in, "MessageAttributes");
  if (!v) return out;
  if (!v->is_object()) fail("SerializationException", "MessageAttributes must be a map");
  if (v->as_object().size() > 10) {
    invalid("Number of message attributes [" + std::to_string(v->as_object().size()) +
            "] exceeds the allowed maximum [10].");
  }
  for (const auto& [key, value] : v->as_object()) {
    std::string name(key);
    if (!valid_attribute_name(name)) invalid("Message attribute name '" + name + "' is invalid.");
    if (!value.is_object()) fail("SerializationException", "a message attribute must be a map");
    const auto& a = value.as_object();
    Attribute attr;
    attr.digest.name = name;
    attr.digest.data_type = required_text(a, "DataType");
    const std::string& type = attr.digest.data_type;
    std::string base = type.substr(0, type.find('.'));
    if (type.size() > 256 || (base != "String" && base != "Number" && base != "Binary") ||
        (type.size() > base.size() && type.size() == base.size() + 1)) {
      invalid("The type of message attribute '" + name + "' is invalid.");
    }
    if (base == "Binary") {
      auto b64 = text(a, "BinaryValue");
      auto raw = b64 ? base64_decode(*b64) : std::nullopt;
      if (!raw || raw->empty()) invalid("Message attribute '" + name + "' must contain a non-empty BinaryValue.");
      attr.binary_base64 = *b64;
      attr.digest.binary_value = std::move(*raw);
    } else {
      auto s = text(a, "StringValue");
      if (!s || s->empty()) invalid("Message attribute '" + name + "' must contain a non-empty message attribute value.");
      if (!allowed_text(*s)) fail("InvalidMessageContents", "Message attribute '" + name + "' contains invalid characters.");
      if (base == "Number") {
        char* end = nullptr;
        std::strtod(s->c_str(), &end);
        if (end != s->c_str() + s->size()) invalid("Message attribute '" + name + "' must be a number.");
      }
      attr.digest.string_value = std::move(*s);
    }
    out.push_back(std::move(attr));
  }
  return out;
}

std::size_t attributes_size(const std::vector<Attribute>& attrs) {
  std::size_t n = 0;
  for (const auto& a : attrs) {
    n += a.digest.name.size() + a.digest.data_type.size() +
         (a.digest.string_value ? a.digest.string_value->size() : a.digest.binary_value->size());
  }
  return n;
}

// As SQS writes them: {"name": {"DataType", "StringValue" | "BinaryValue" (base64)}}; also how
// they are stored.
json::object attributes_json(const std::vector<Attribute>& attrs) {
  json::object o;
  for (const auto& a : attrs) {
    json::object v{{"DataType", a.digest.data_type}};
    if (a.digest.string_value) v["StringValue"] = *a.digest.string_value;
    else v["BinaryValue"] = a.binary_base64;
    o[a.digest.name] = std::move(v);
  }
  return o;
}

std::vector<Attribute> stored_attributes(const std::optional<std::string>& text) {
  std::vector<Attribute> out;
  if (!text) return out;
  boost::system::error_code ec;
  auto doc = json::parse(*text, ec);
  if (ec || !doc.is_object()) return out;
  for (const auto& [k, v] : doc.as_object()) {
    if (!v.is_object()) continue;
    const auto& a = v.as_object();
    Attribute attr;
    attr.digest.name = std::string(k);
    if (const auto* t = a.if_contains("DataType"); t && t->is_string()) attr.digest.data_type = std::string(t->as_string());
    if (const auto* s = a.if_contains("StringValue"); s && s->is_string()) {
      attr.digest.string_value = std::string(s->as_string());
    } else if (const auto* b = a.if_contains("BinaryValue"); b && b->is_string()) {
      attr.binary_base64 = std::string(b->as_string());
      attr.digest.binary_value = base64_decode(attr.binary_base64).value_or("");
    } else {
      continue;
    }
    out.push_back(std::move(attr));
  }
  return out;
}

std::string attributes_digest(const std::vector<Attribute>& attrs) {
  std::vector<dlq::sqs::MessageAttribute> list;
  for (const auto& a : attrs) list.push_back(a.digest);
  return dlq::sqs::attributes_md5(std::move(list));
}

// ---- receipt handles ---------------------------------------------------------------------------

// Opaque to clients: base64 of "dlq1 <queue> <id> <lease_id>".
std::string receipt_handle(const Message& m) {
  return base64_encode("dlq1 " + m.queue + " " + std::to_string(m.id) + " " + m.lease_id.value_or(""));
}

struct Receipt {
  MessageId id = 0;
  std::string lease_id;
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

// ---- batches -----------------------------------------------------------------------------------

// The batch's entries, checked as a whole: 1–10, distinct valid Ids.
const json::array& batch_entries(const json::object& in) {
  const json::array* entries = array(in, "Entries");
  if (!entries || entries->empty()) fail("EmptyBatchRequest", "There should be at least one entry in the request.");
  if (entries->size() > 10) {
    fail("TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent " +
                                             std::to_string(entries->size()) + ".");
  }
  std::set<std::string> ids;
  for (const auto& e : *entries) {
    if (!e.is_object()) fail("SerializationException", "a batch entry must be a map");
    auto id = text(e.as_object(), "Id");
    bool valid = id && !id->empty() && id->size() <= 80 &&
                 std::all_of(id->begin(), id->end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
                 });
    if (!valid) fail("InvalidBatchEntryId", "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.");
    if (!ids.insert(*id).second) fail("BatchEntryIdsNotDistinct", "Id " + *id + " repeated.");
  }
  return *entries;
}

json::object batch_failure(const std::string& id, const SqsError& e) {
  return json::object{{"Id", id},
                      {"SenderFault", error_status(e.name()) < 500},
                      {"Code", e.name()},
                      {"Message", e.what()}};
}

bool valid_name(std::string_view name) { return valid_queue_name(name); }

void need(const core::Principal& who, Role role) {
  if (!who.may(role)) {
    fail("AccessDenied", "the key's roles do not include " + std::string(to_string(role)) +
                             " (docs/access.md)");
  }
}

// Any role: the actions every key may run.
void need_any(const core::Principal& who) {
  if (who.roles.empty()) fail("AccessDenied", "the key holds no role");
}

}  // namespace

int error_status(std::string_view name) {
  for (const auto& e : kErrors) {
    if (e.name == name) return e.status;
  }
  return 400;
}

std::string error_code(std::string_view name) {
  for (const auto& e : kErrors) {
    if (e.name == name) return std::string(e.code.empty() ? e.name : e.code);
  }
  return std::string(name);
}

Actions::Actions(core::QueueService& service, store::Store& store, const Config& config)
    : service_(service), store_(store), config_(config) {}

namespace {
constexpr std::string_view kServed[] = {
    "CreateQueue",          "GetQueueUrl",          "ListQueues",
    "DeleteQueue",          "GetQueueAttributes",   "SetQueueAttributes",
    "TagQueue",             "UntagQueue",           "ListQueueTags",
    "ListDeadLetterSourceQueues", "PurgeQueue",     "SendMessage",
    "SendMessageBatch",     "ReceiveMessage",       "DeleteMessage",
    "DeleteMessageBatch",   "ChangeMessageVisibility", "ChangeMessageVisibilityBatch"};
constexpr std::string_view kNotServed[] = {"AddPermission", "RemovePermission",
                                           "StartMessageMoveTask", "CancelMessageMoveTask",
                                           "ListMessageMoveTasks"};
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
  if (!valid_name(*name)) fail("QueueDoesNotExist", "The specified queue does not exist.");
  auto row = co_await store_.sqs_queue_find(*name);
  if (!row) {
    service_.sqs_queues().erase(*name);
    fail("QueueDoesNotExist", "The specified queue does not exist.");
  }
  service_.sqs_queues().put(row->name, row->attributes);
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
  };
  auto it = kTable.find(action);
  if (it == kTable.end()) fail("UnsupportedOperation", std::string(action) + " is not supported by dlq");
  co_return co_await (this->*(it->second))(call, in);
}

// ---- queues ------------------------------------------------------------------------------------

Actions::Out Actions::create_queue(const Call& call, const json::object& in) {
  need_any(call.who);
  std::string name = required_text(in, "QueueName");
  if (!valid_name(name)) {
    invalid("Can only include alphanumeric characters, hyphens, or underscores. 1 to 64 in "
            "length (dlq's queue names; .fifo queues are not supported)");
  }
  auto given = settable_attributes(string_map(in, "Attributes"), config_);
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
        else if (k == "VisibilityTimeout") effective = std::to_string(static_cast<long long>(config.policy_for(name).visibility_timeout));
        else if (k == "MessageRetentionPeriod") effective = "345600";
        else if (k == "MaximumMessageSize") effective = std::to_string(config.limits.max_payload_bytes);
        else effective = "0";
        if (parse_int(effective) != parse_int(v)) {
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
  service_.sqs_queues().put(name, changed->attributes);
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
    if (!after || !valid_name(*after)) invalid("Invalid NextToken value.");
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
            " dead letters: replay or dismiss on the desk first");
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
      "CreatedTimestamp", "LastModifiedTimestamp"};
  std::vector<std::string_view> names;
  bool all = std::find(wanted.begin(), wanted.end(), "All") != wanted.end();
  for (const auto& w : wanted) {
    if (w == "All") continue;
    if (std::find(kAll.begin(), kAll.end(), w) == kAll.end() && !listed(kNotYet, w) &&
        !listed(kUnsupported, w)) {
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
    } else if (n == "VisibilityTimeout") {
      attributes[key] = std::to_string(static_cast<long long>(config_.policy_for(row.name).visibility_timeout));
    } else if (n == "DelaySeconds" || n == "ReceiveMessageWaitTimeSeconds") {
      attributes[key] = "0";
    } else if (n == "MessageRetentionPeriod") {
      attributes[key] = "345600";
    } else if (n == "MaximumMessageSize") {
      attributes[key] = std::to_string(config_.limits.max_payload_bytes);
    } else if (n == "QueueArn") {
      attributes[key] = "arn:aws:sqs:" + config_.sqs.region + ":" + config_.sqs.account_id + ":" + row.name;
    } else if (n == "CreatedTimestamp") {
      attributes[key] = std::to_string(row.created_at / 1000);
    } else if (n == "LastModifiedTimestamp") {
      attributes[key] = std::to_string(row.updated_at / 1000);
    } else {
      if (!stats) {
        auto got = co_await service_.stats(call.ctx, row.name);
        stats = got.empty() ? store::QueueStats{} : got.front();
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
  const TimeMs now = call.ctx.now;
  store::DecideSqsQueue decide = [&](const std::optional<store::SqsQueueRow>& existing,
                                     long long) -> Result<store::SqsQueueChange> {
    if (!existing) fail("QueueDoesNotExist", "The specified queue does not exist.");
    store::SqsQueueRow next = *existing;
    auto stored = stored_map(next.attributes);
    for (const auto& [k, v] : given) stored[k] = v;
    next.attributes = map_text(stored);
    next.updated_at = now;
    if (given.contains("MessageRetentionPeriod")) next.retention_set_at = now;
    return store::SqsQueueChange{true, std::move(next)};
  };
  auto changed = co_await change_queue(row.name, std::move(decide));
  if (changed) service_.sqs_queues().put(row.name, changed->attributes);
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
  store::DecideSqsQueue decide = [&](const std::optional<store::SqsQueueRow>& existing,
                                     long long) -> Result<store::SqsQueueChange> {
    if (!existing) fail("QueueDoesNotExist", "The specified queue does not exist.");
    store::SqsQueueRow next = *existing;
    auto tags = stored_map(next.tags);
    for (const auto& [k, v] : given) tags[k] = v;
    if (tags.size() > 50) invalid("Too many tags: a queue holds at most 50.");
    next.tags = map_text(tags);
    return store::SqsQueueChange{true, std::move(next)};
  };
  co_await change_queue(row.name, std::move(decide));
  co_return json::object{};
}

Actions::Out Actions::untag_queue(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  auto keys = strings(in, "TagKeys");
  store::DecideSqsQueue decide = [&](const std::optional<store::SqsQueueRow>& existing,
                                     long long) -> Result<store::SqsQueueChange> {
    if (!existing) fail("QueueDoesNotExist", "The specified queue does not exist.");
    store::SqsQueueRow next = *existing;
    auto tags = stored_map(next.tags);
    for (const auto& k : keys) tags.erase(k);
    next.tags = map_text(tags);
    return store::SqsQueueChange{true, std::move(next)};
  };
  co_await change_queue(row.name, std::move(decide));
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

Actions::Out Actions::list_dead_letter_source_queues(const Call& call, const json::object& in) {
  need(call.who, Role::reader);
  co_await queue_of(call, in);
  co_return json::object{{"queueUrls", json::array{}}};  // no redrive policies yet
}

Actions::Out Actions::purge_queue(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto row = co_await queue_of(call, in);
  std::vector<Status> statuses = {Status::pending, Status::processing};
  co_await core::sqs_purge(store_, service_, call.ctx, row.name, std::move(statuses),
                           call.ctx.now + 1, "PurgeQueue");
  co_return json::object{};
}

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

json::object received(const Message& m, const std::set<std::string>& system,
                      const std::vector<std::string>& filters) {
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
  auto outcome = co_await service_.claim(call.ctx, std::move(cmd));
  json::array messages;
  for (auto& m : outcome.messages) {
    if (m.payload_withheld) {
      // Past the claim's payload budget: read again while its lease holds (none: it ended).
      std::string lease = m.lease_id.value_or("");
      auto again = co_await service_.find_leased(call.ctx, row.name, m.id, lease);
      if (!again) continue;
      m.payload = std::move(again->payload);
      m.sqs_attributes = std::move(again->sqs_attributes);
    }
    messages.push_back(received(m, system, filters));
  }
  json::object out;
  if (!messages.empty()) out["Messages"] = std::move(messages);
  co_return out;
}

Actions::Out Actions::delete_message(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  Receipt r = decode_receipt(required_text(in, "ReceiptHandle"), row.name);
  // A lease no longer current, or a repeat: success, nothing changed (as SQS documents).
  co_await service_.succeed(call.ctx, row.name, r.id, r.lease_id);
  co_return json::object{};
}

Actions::Out Actions::delete_message_batch(const Call& call, const json::object& in) {
  need(call.who, Role::worker);
  auto row = co_await queue_of(call, in);
  const auto& entries = batch_entries(in);
  std::vector<core::AckItem> items;
  std::vector<std::string> ids;
  json::array failed;
  for (const auto& e : entries) {
    const auto& entry = e.as_object();
    std::string id(entry.at("Id").as_string());
    try {
      Receipt r = decode_receipt(required_text(entry, "ReceiptHandle"), row.name);
      items.push_back({r.id, r.lease_id});
      ids.push_back(id);
    } catch (const SqsError& err) {
      failed.push_back(batch_failure(id, err));
    }
  }
  json::array successful;
  if (!items.empty()) {
    // One transaction; a stale lease or a repeat is a success as for DeleteMessage.
    co_await service_.succeed_many(call.ctx, row.name, std::move(items));
    for (const auto& id : ids) successful.push_back(json::object{{"Id", id}});
  }
  co_return json::object{{"Successful", std::move(successful)}, {"Failed", std::move(failed)}};
}

namespace {

// n > 0: the lease now ends n seconds from now; 0: released, due at once, no failure.
awaitable<void> change_visibility(core::QueueService& service, const core::RequestContext& ctx,
                                  const std::string& queue, const Receipt& r, long long seconds) {
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
  co_await change_visibility(service_, call.ctx, row.name, r, seconds);
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
      co_await change_visibility(service_, call.ctx, row.name, r, seconds);
      successful.push_back(json::object{{"Id", id}});
    } catch (const SqsError& err) {
      failed.push_back(batch_failure(id, err));
    }
  }
  co_return json::object{{"Successful", std::move(successful)}, {"Failed", std::move(failed)}};
}

}  // namespace dlq::http::sqs

// What the SQS actions share: errors, members, base64, the registry's maps, batches, roles.
#include "http/sqs_fields.hpp"

#include <charconv>
#include <set>

#include <boost/json.hpp>
#include <openssl/evp.h>

namespace dlq::http::sqs {
namespace json = boost::json;

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
    {"ResourceNotFoundException", 404, ""},
};

}  // namespace

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

}  // namespace dlq::http::sqs

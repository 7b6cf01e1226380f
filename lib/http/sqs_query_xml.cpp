// The SQS query protocol's answers: the actions' JSON answers and errors as the XML that
// botocore's query parser reads (names from the 2012-11-05 model).
#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <iterator>
#include <optional>

#include <boost/json.hpp>

#include "http/sqs_query.hpp"

namespace dlq::http::sqs::query {
namespace json = boost::json;

namespace {

// ---- the answers -------------------------------------------------------------------------------

constexpr std::string_view kProlog = "<?xml version=\"1.0\"?>";

// No output shape in the model: the answer is the Response element with its metadata only.
constexpr std::string_view kNoResult[] = {
    "DeleteMessage",  "DeleteQueue",    "PurgeQueue",    "SetQueueAttributes",
    "TagQueue",       "UntagQueue",     "ChangeMessageVisibility",
    "AddPermission",  "RemovePermission"};

// Lists are flattened: one element per item, named for the item, no wrapper.
struct ListItem {
  std::string_view member, item;
};
constexpr ListItem kListItems[] = {
    {"QueueUrls", "QueueUrl"},
    {"queueUrls", "QueueUrl"},  // ListDeadLetterSourceQueues
    {"Messages", "Message"},
    {"Failed", "BatchResultErrorEntry"},
    {"StringListValues", "StringListValue"},
    {"BinaryListValues", "BinaryListValue"},
};

// Maps are flattened too: <Attribute><Name>k</Name><Value>v</Value></Attribute> per entry.
struct MapEntry {
  std::string_view member, entry, key, value;
};
constexpr MapEntry kMapEntries[] = {
    {"Attributes", "Attribute", "Name", "Value"},
    {"MessageAttributes", "MessageAttribute", "Name", "Value"},
    {"MessageSystemAttributes", "MessageSystemAttribute", "Name", "Value"},
    {"Tags", "Tag", "Key", "Value"},
};

std::string item_name(std::string_view member, std::string_view action) {
  // The batches' Successful and ListMessageMoveTasks' Results: <{Action}ResultEntry>.
  if (member == "Successful" || member == "Results") return std::string(action) + "ResultEntry";
  for (const auto& l : kListItems) {
    if (l.member == member) return std::string(l.item);
  }
  return std::string(member);
}

const MapEntry* map_entry(std::string_view member) {
  for (const auto& m : kMapEntries) {
    if (m.member == member) return &m;
  }
  return nullptr;
}

std::optional<std::string> scalar_text(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string:
      return std::string(v.get_string());
    case json::kind::bool_:
      return std::string(v.get_bool() ? "true" : "false");
    case json::kind::int64:
      return std::to_string(v.get_int64());
    case json::kind::uint64:
      return std::to_string(v.get_uint64());
    case json::kind::double_: {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v.get_double());
      return std::string(buf, r.ptr);
    }
    default:
      return std::nullopt;
  }
}

void open_tag(std::string& x, std::string_view name) {
  x += '<';
  x += name;
  x += '>';
}

void close_tag(std::string& x, std::string_view name) {
  x += "</";
  x += name;
  x += '>';
}

void element(std::string& x, std::string_view name, std::string_view text) {
  open_tag(x, name);
  x += xml_text(text);
  close_tag(x, name);
}

void write_members(std::string& x, const json::object& o, std::string_view action);

// One value as the element `name`: text, or a structure's members; null writes nothing.
void write_value(std::string& x, std::string_view name, const json::value& v,
                 std::string_view action) {
  if (auto text = scalar_text(v)) {
    element(x, name, *text);
  } else if (v.is_object()) {
    open_tag(x, name);
    write_members(x, v.get_object(), action);
    close_tag(x, name);
  }
}

void write_member(std::string& x, std::string_view name, const json::value& v,
                  std::string_view action) {
  if (v.is_array()) {
    std::string item = item_name(name, action);
    for (const auto& e : v.get_array()) write_value(x, item, e, action);
  } else if (const MapEntry* m = v.is_object() ? map_entry(name) : nullptr) {
    for (const auto& kv : v.get_object()) {
      if (kv.value().is_null()) continue;
      open_tag(x, m->entry);
      element(x, m->key, kv.key());
      write_value(x, m->value, kv.value(), action);
      close_tag(x, m->entry);
    }
  } else if (!v.is_object() || !v.get_object().empty()) {
    write_value(x, name, v, action);
  }
}

void write_members(std::string& x, const json::object& o, std::string_view action) {
  for (const auto& kv : o) write_member(x, kv.key(), kv.value(), action);
}

void write_request_id(std::string& x, std::string_view request_id) {
  element(x, "RequestId", request_id);
}

}  // namespace

std::string result_xml(std::string_view action, const json::object& out,
                       std::string_view request_id) {
  std::string response = std::string(action) + "Response";
  std::string x(kProlog);
  x += "<" + response + " xmlns=\"" + std::string(kNamespace) + "\">";
  if (std::find(std::begin(kNoResult), std::end(kNoResult), action) == std::end(kNoResult)) {
    std::string result = std::string(action) + "Result";
    open_tag(x, result);
    write_members(x, out, action);
    close_tag(x, result);
  }
  open_tag(x, "ResponseMetadata");
  write_request_id(x, request_id);
  close_tag(x, "ResponseMetadata");
  close_tag(x, response);
  return x;
}

std::string error_xml(bool sender, std::string_view code, std::string_view message,
                      std::string_view request_id) {
  std::string x(kProlog);
  x += "<ErrorResponse xmlns=\"" + std::string(kNamespace) + "\">";
  open_tag(x, "Error");
  element(x, "Type", sender ? "Sender" : "Receiver");
  element(x, "Code", code);
  element(x, "Message", message);
  x += "<Detail/>";
  close_tag(x, "Error");
  write_request_id(x, request_id);
  close_tag(x, "ErrorResponse");
  return x;
}

std::string xml_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t start = i;
    auto cp = next_code_point(s, i);
    if (!cp || !xml_char(*cp)) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      continue;
    }
    switch (*cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;  // so that `]]>` cannot end anything
      case '"': out += "&quot;"; break;
      case '\r': out += "&#xD;"; break;  // parsers turn a raw CR (and CRLF) into LF
      case '\n': out += "&#xA;"; break;
      case '\t': out += "&#x9;"; break;
      default: out.append(s.substr(start, i - start));
    }
  }
  return out;
}

}  // namespace dlq::http::sqs::query

// SQS message attributes (docs/sqs.md): SendMessage's MessageAttributes checked by SQS's rules,
// as stored with the message and returned, their size and their MD5; and SQS's character set.
#include "http/sqs_message_attributes.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <boost/json.hpp>

#include "http/sqs_fields.hpp"
#include "http/sqs_query.hpp"

namespace dlq::http::sqs {
namespace json = boost::json;

namespace {

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

}  // namespace

// SQS's allowed characters: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF, XML's Char
// (malformed UTF-8 is not allowed either).
bool allowed_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto cp = query::next_code_point(s, i);
    if (!cp || !query::xml_char(*cp)) return false;
  }
  return true;
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

}  // namespace dlq::http::sqs

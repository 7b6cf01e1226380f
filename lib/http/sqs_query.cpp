// The SQS query protocol's requests: the form's flattened fields to the JSON protocol's request
// (names from the 2012-11-05 model). The answers' XML: sqs_query_xml.cpp.
#include "http/sqs_query.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <boost/url/encoding_opts.hpp>
#include <boost/url/pct_string_view.hpp>

namespace dlq::http::sqs::query {
namespace json = boost::json;
namespace urls = boost::urls;

namespace {

constexpr auto npos = std::string_view::npos;

[[noreturn]] void invalid(const std::string& message) {
  throw CodecError("InvalidParameterValue", message);
}

}  // namespace

bool xml_char(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

std::optional<char32_t> next_code_point(std::string_view s, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  std::size_t len = 0;
  char32_t cp = 0, least = 0;
  if ((lead & 0xE0) == 0xC0) len = 2, cp = lead & 0x1F, least = 0x80;
  else if ((lead & 0xF0) == 0xE0) len = 3, cp = lead & 0x0F, least = 0x800;
  else if ((lead & 0xF8) == 0xF0) len = 4, cp = lead & 0x07, least = 0x10000;
  bool ok = len > 0 && i + len <= s.size();
  for (std::size_t k = 1; ok && k < len; ++k) {
    ok = (byte(i + k) & 0xC0) == 0x80;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (!ok || cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return std::nullopt;
  }
  i += len;
  return cp;
}

namespace {

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (!next_code_point(s, i)) return false;
  }
  return true;
}


// ---- the form ----------------------------------------------------------------------------------

// One field; inside a structure, its key is relative to it ("1.Name" within "Attribute.").
struct Field {
  std::string key;
  std::string value;
};

std::string decoded(std::string_view part) {
  auto pct = urls::make_pct_string_view(part);
  if (!pct) invalid("malformed percent-encoding in \"" + std::string(part.substr(0, 64)) + "\"");
  urls::encoding_opts opt;
  opt.space_as_plus = true;  // x-www-form-urlencoded: `+` is a space, %2B a plus
  std::string out = pct->decode(opt);
  // The JSON protocol's parser holds every string to UTF-8; the actions rely on it.
  if (!valid_utf8(out)) invalid("the parameter \"" + std::string(part.substr(0, 64)) + "\" is not UTF-8");
  return out;
}

// The form's fields in order, each key given once. Characters outside RFC 3986's query set (a raw
// space, `[`, UTF-8) are taken as they are: only the escapes are checked.
std::vector<Field> fields_of(std::string_view form) {
  std::vector<Field> out;
  std::set<std::string, std::less<>> seen;
  while (!form.empty()) {
    std::size_t amp = form.find('&');
    std::string_view part = form.substr(0, amp);
    form = amp == npos ? std::string_view() : form.substr(amp + 1);
    if (part.empty()) continue;
    std::size_t eq = part.find('=');
    Field f{decoded(part.substr(0, eq)), eq == npos ? std::string() : decoded(part.substr(eq + 1))};
    if (!seen.insert(f.key).second) invalid("the parameter " + f.key + " is given more than once");
    out.push_back(std::move(f));
  }
  return out;
}

// ---- the request's shapes ----------------------------------------------------------------------

enum class Shape {
  integer,     // Name=7 → a JSON number
  list,        // Name.N=v → [v, …]
  map,         // Name.N.<key>=k, Name.N.Value=v → {k: v}
  attributes,  // Name.N.Name=k, Name.N.Value.<member>=… → {k: {member: …}}
  entries,     // Name.N.<member>=… → [{member: …}, …]
};

struct Family {
  std::string_view prefix;  // the query name: `Attribute` of Attribute.N.Name
  std::string_view member;  // the JSON protocol's member
  Shape shape;
  std::string_view key = {};  // a map's key field
};

// Every other member is text, under its own name.
constexpr Family kRequestMembers[] = {
    {"MaxNumberOfMessages", "MaxNumberOfMessages", Shape::integer},
    {"VisibilityTimeout", "VisibilityTimeout", Shape::integer},
    {"WaitTimeSeconds", "WaitTimeSeconds", Shape::integer},
    {"DelaySeconds", "DelaySeconds", Shape::integer},
    {"MaxResults", "MaxResults", Shape::integer},
    {"MaxNumberOfMessagesPerSecond", "MaxNumberOfMessagesPerSecond", Shape::integer},
    {"Attribute", "Attributes", Shape::map, "Name"},
    {"Tag", "Tags", Shape::map, "Key"},
    {"MessageAttribute", "MessageAttributes", Shape::attributes},
    {"MessageSystemAttribute", "MessageSystemAttributes", Shape::attributes},
    {"AttributeName", "AttributeNames", Shape::list},
    {"MessageAttributeName", "MessageAttributeNames", Shape::list},
    {"MessageSystemAttributeName", "MessageSystemAttributeNames", Shape::list},
    {"TagKey", "TagKeys", Shape::list},
    {"AWSAccountId", "AWSAccountIds", Shape::list},
    {"ActionName", "Actions", Shape::list},
    {"SendMessageBatchRequestEntry", "Entries", Shape::entries},
    {"DeleteMessageBatchRequestEntry", "Entries", Shape::entries},
    {"ChangeMessageVisibilityBatchRequestEntry", "Entries", Shape::entries},
};

// Within MessageAttribute.N.Value. (DataType, StringValue and BinaryValue are text).
constexpr Family kAttributeValueMembers[] = {
    {"StringListValue", "StringListValues", Shape::list},
    {"BinaryListValue", "BinaryListValues", Shape::list},
};

const Family* family_of(std::span<const Family> families, std::string_view prefix) {
  for (const auto& f : families) {
    if (f.prefix == prefix) return &f;
  }
  return nullptr;
}

// The JSON protocol names CreateQueue's tags `tags` and TagQueue's `Tags`; both are Tag.N here.
std::string_view member_of(const Family& f, std::string_view action) {
  return f.prefix == "Tag" && action == "CreateQueue" ? std::string_view("tags") : f.member;
}

// A decimal integer within int64 as a number; anything else stays text, for the action's own
// type check to refuse.
json::value integer_or_text(const std::string& s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!s.empty() && ec == std::errc() && end == s.data() + s.size()) return v;
  return json::string(s);
}

void put(json::object& out, std::string_view member, json::value v, const std::string& where) {
  if (out.contains(member)) {
    invalid("the request gives " + where + std::string(member) + " in two ways");
  }
  out[member] = std::move(v);
}

[[noreturn]] void not_valid(const std::string& where, std::uint32_t n, std::string_view rest) {
  invalid("the parameter " + where + std::to_string(n) + (rest.empty() ? "" : ".") +
          std::string(rest) + " is not valid");
}

[[noreturn]] void missing(const std::string& where, std::uint32_t n, std::string_view field) {
  invalid("the parameter " + where + std::to_string(n) + "." + std::string(field) + " is missing");
}

[[noreturn]] void repeated(const std::string& where, std::string_view name) {
  invalid(where + "N names " + std::string(name) + " more than once");
}

// 1, 2, …: no sign and no leading zero, so that two keys never name one item.
std::optional<std::uint32_t> positive_index(std::string_view s) {
  std::uint32_t n = 0;
  if (s.empty() || s.front() == '0') return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

// "N.rest" fields by their index N, in numeric order, each keyed by its rest ("" for a bare N).
std::map<std::uint32_t, std::vector<Field>> by_index(const std::vector<Field>& fields,
                                                     const std::string& where) {
  std::map<std::uint32_t, std::vector<Field>> out;
  for (const auto& f : fields) {
    std::size_t dot = f.key.find('.');
    std::string_view n = std::string_view(f.key).substr(0, dot);
    auto index = positive_index(n);
    if (!index) {
      invalid("the index of " + where + f.key + " is not a positive integer");
    }
    out[*index].push_back({dot == npos ? std::string() : f.key.substr(dot + 1), f.value});
  }
  return out;
}

json::object structure(const std::vector<Field>& fields, std::span<const Family> families,
                       const std::string& where, std::string_view action);

json::array list(const std::vector<Field>& fields, const std::string& where) {
  json::array out;
  for (const auto& [n, parts] : by_index(fields, where)) {
    for (const auto& p : parts) {
      if (!p.key.empty()) not_valid(where, n, p.key);
    }
    out.emplace_back(parts.front().value);
  }
  return out;
}

json::object map(const Family& f, const std::vector<Field>& fields, const std::string& where) {
  json::object out;
  for (const auto& [n, parts] : by_index(fields, where)) {
    std::optional<std::string> key;
    std::string value;  // an absent Value is the empty one (a tag's may be)
    for (const auto& p : parts) {
      if (p.key == f.key) key = p.value;
      else if (p.key == "Value") value = p.value;
      else not_valid(where, n, p.key);
    }
    if (!key) missing(where, n, f.key);
    if (out.contains(*key)) repeated(where, *key);
    out[*key] = value;
  }
  return out;
}

json::object attributes(const std::vector<Field>& fields, const std::string& where,
                        std::string_view action) {
  json::object out;
  for (const auto& [n, parts] : by_index(fields, where)) {
    std::optional<std::string> name;
    std::vector<Field> value;
    for (const auto& p : parts) {
      if (p.key == "Name") name = p.value;
      else if (p.key.starts_with("Value.")) value.push_back({p.key.substr(6), p.value});
      else not_valid(where, n, p.key);
    }
    if (!name) missing(where, n, "Name");
    if (out.contains(*name)) repeated(where, *name);
    out[*name] = structure(value, kAttributeValueMembers, where + std::to_string(n) + ".Value.",
                           action);
  }
  return out;
}

json::array entries(const std::vector<Field>& fields, const std::string& where,
                    std::string_view action) {
  json::array out;
  for (const auto& [n, parts] : by_index(fields, where)) {
    for (const auto& p : parts) {
      if (p.key.empty()) not_valid(where, n, p.key);
    }
    out.push_back(structure(parts, kRequestMembers, where + std::to_string(n) + ".", action));
  }
  return out;
}

json::value shaped(const Family& f, const std::vector<Field>& fields, const std::string& where,
                   std::string_view action) {
  switch (f.shape) {
    case Shape::list:
      return list(fields, where);
    case Shape::map:
      return map(f, fields, where);
    case Shape::attributes:
      return attributes(fields, where, action);
    case Shape::entries:
      return entries(fields, where, action);
    case Shape::integer:
      break;
  }
  return nullptr;
}

// The members of one structure (the request, a batch entry, an attribute's value). `where` is
// the structure's own prefix, for messages.
json::object structure(const std::vector<Field>& fields, std::span<const Family> families,
                       const std::string& where, std::string_view action) {
  json::object out;
  std::vector<std::pair<const Family*, std::vector<Field>>> groups;  // first seen, first written
  for (const auto& f : fields) {
    std::size_t dot = f.key.find('.');
    const Family* family = family_of(families, std::string_view(f.key).substr(0, dot));
    if (family && family->shape == Shape::integer && dot == npos) {
      put(out, family->member, integer_or_text(f.value), where);
    } else if (family && family->shape != Shape::integer && dot != npos) {
      auto g = std::find_if(groups.begin(), groups.end(),
                            [family](const auto& group) { return group.first == family; });
      if (g == groups.end()) {
        groups.emplace_back(family, std::vector<Field>{});
        g = std::prev(groups.end());
      }
      g->second.push_back({f.key.substr(dot + 1), f.value});
    } else {
      // Unknown members go on as text: the actions ignore them, as in the JSON protocol.
      put(out, f.key, json::string(f.value), where);
    }
  }
  for (const auto& g : groups) {
    const Family& family = *g.first;
    put(out, member_of(family, action),
        shaped(family, g.second, where + std::string(family.prefix) + ".", action), where);
  }
  return out;
}

}  // namespace

// ---- the interface -----------------------------------------------------------------------------

Parsed parse(std::string_view form) {
  Parsed p;
  std::optional<std::string> version;
  std::vector<Field> members;
  for (auto& f : fields_of(form)) {
    if (f.key == "Action") p.action = std::move(f.value);
    else if (f.key == "Version") version = std::move(f.value);
    else members.push_back(std::move(f));
  }
  if (p.action.empty()) {
    throw CodecError("MissingAction", "The request must contain the parameter Action.");
  }
  if (version && *version != kVersion) {
    invalid("Version " + *version + " is not supported: this service speaks " +
            std::string(kVersion));
  }
  p.version = version.value_or("");
  p.in = structure(members, kRequestMembers, "", p.action);
  return p;
}

}  // namespace dlq::http::sqs::query

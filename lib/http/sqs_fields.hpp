// What the SQS actions share (sqs_queue_actions.cpp, sqs_message_actions.cpp): throwing an SQS
// error, reading the API's JSON members, base64, the registry's JSON maps, batches and roles.
// Private to lib/http.
#pragma once

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "core/access.hpp"
#include "http/sqs_actions.hpp"

namespace dlq::http::sqs {

[[noreturn]] void fail(std::string name, const std::string& message);
// InvalidParameterValue.
[[noreturn]] void invalid(const std::string& message);

// A member that is present and not null.
const boost::json::value* member(const boost::json::object& in, std::string_view name);
// A member of the wrong type is SerializationException; a missing required one MissingParameter.
std::optional<std::string> text(const boost::json::object& in, std::string_view name);
std::string required_text(const boost::json::object& in, std::string_view name);
std::optional<long long> integer(const boost::json::object& in, std::string_view name);
// `v` within [lo, hi] (InvalidParameterValue otherwise), or `fallback` when absent.
long long in_range(std::optional<long long> v, std::string_view name, long long lo, long long hi,
                   long long fallback);
const boost::json::array* array(const boost::json::object& in, std::string_view name);
std::vector<std::string> strings(const boost::json::object& in, std::string_view name);
// A map of strings (Attributes, Tags).
std::map<std::string, std::string> string_map(const boost::json::object& in, std::string_view name);
std::optional<long long> parse_int(std::string_view s);

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

// The registry's JSON objects of strings (attributes, tags), read and written.
std::map<std::string, std::string> stored_map(const std::string& text);
std::string map_text(const std::map<std::string, std::string>& m);

// The batch's entries, checked as a whole: 1–10, distinct valid Ids.
const boost::json::array& batch_entries(const boost::json::object& in);
boost::json::object batch_failure(const std::string& id, const SqsError& e);

// AccessDenied unless `who` holds `role` (admin holds every role), or any role at all.
void need(const core::Principal& who, Role role);
void need_any(const core::Principal& who);

template <class List>
bool listed(const List& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

}  // namespace dlq::http::sqs

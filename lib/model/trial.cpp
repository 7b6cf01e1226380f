// Trial statuses as text, and would_effects to and from their stored JSON.
#include "model/trial.hpp"

#include <array>
#include <utility>

#include <boost/json.hpp>

#include "model/enum_names.hpp"

namespace dlq {
namespace json = boost::json;

namespace {

constexpr std::array<std::pair<TrialStatus, std::string_view>, 5> kStatuses{{
    {TrialStatus::pending, "pending"},
    {TrialStatus::running, "running"},
    {TrialStatus::succeeded, "succeeded"},
    {TrialStatus::failed, "failed"},
    {TrialStatus::expired, "expired"},
}};

}  // namespace

std::string_view to_string(TrialStatus s) { return enum_name(kStatuses, s); }

std::optional<TrialStatus> parse_trial_status(std::string_view s) {
  return enum_from_name(kStatuses, s);
}

json::array would_effects_array(const std::vector<WouldEffect>& effects) {
  json::array out;
  out.reserve(effects.size());
  for (const auto& e : effects) {
    json::object o;
    o["key"] = e.key;
    o["description"] = e.description ? json::value(*e.description) : json::value(nullptr);
    out.push_back(std::move(o));
  }
  return out;
}

std::string would_effects_json(const std::vector<WouldEffect>& effects) {
  return json::serialize(would_effects_array(effects));
}

std::vector<WouldEffect> parse_would_effects(std::string_view text) {
  std::vector<WouldEffect> out;
  std::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& item : v.get_array()) {
    if (!item.is_object()) continue;
    const auto& o = item.get_object();
    const auto* key = o.if_contains("key");
    if (!key || !key->is_string()) continue;
    WouldEffect e{std::string(key->get_string()), std::nullopt};
    if (const auto* d = o.if_contains("description"); d && d->is_string()) {
      e.description = std::string(d->get_string());
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace dlq

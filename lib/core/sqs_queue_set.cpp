#include "core/sqs_queue_set.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace dlq::core {

std::optional<TimeMs> SqsQueueSet::parse_visibility(std::string_view attributes) {
  boost::system::error_code ec;
  auto doc = boost::json::parse(attributes, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  const auto* v = doc.as_object().if_contains("VisibilityTimeout");
  if (!v || !v->is_string()) return std::nullopt;
  try {
    return static_cast<TimeMs>(std::stoll(std::string(v->as_string()))) * 1000;
  } catch (const std::exception&) {
    return std::nullopt;  // the front stores only values it validated
  }
}

void SqsQueueSet::put(const std::string& name, std::string_view attributes) {
  auto visibility = parse_visibility(attributes);
  std::lock_guard lock(mutex_);
  queues_[name] = visibility;
}

void SqsQueueSet::erase(const std::string& name) {
  std::lock_guard lock(mutex_);
  queues_.erase(name);
}

void SqsQueueSet::replace(const std::map<std::string, std::string>& rows, TimeMs at) {
  std::map<std::string, std::optional<TimeMs>, std::less<>> fresh;
  for (const auto& [name, attributes] : rows) fresh.emplace(name, parse_visibility(attributes));
  std::lock_guard lock(mutex_);
  queues_ = std::move(fresh);
  if (!loaded_at_ || at > *loaded_at_) loaded_at_ = at;
}

bool SqsQueueSet::contains(std::string_view name) const {
  std::lock_guard lock(mutex_);
  return queues_.find(name) != queues_.end();
}

std::optional<TimeMs> SqsQueueSet::visibility_ms(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(name);
  return it == queues_.end() ? std::nullopt : it->second;
}

bool SqsQueueSet::begin_reload(TimeMs now) {
  std::lock_guard lock(mutex_);
  if (loaded_at_ && now - *loaded_at_ < 1000 && now >= *loaded_at_) return false;
  loaded_at_ = now;
  return true;
}

}  // namespace dlq::core

#include "core/sqs_queue_set.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace dlq::core {

namespace json = boost::json;

namespace {

std::optional<long long> stored_integer(const json::value& v) {
  try {
    if (v.is_string()) return std::stoll(std::string(v.as_string()));
    if (v.is_int64()) return v.as_int64();
  } catch (const std::exception&) {
  }
  return std::nullopt;  // the front stores only values it validated
}

}  // namespace

std::optional<SqsRedrive> SqsQueueSet::parse_redrive(std::string_view policy) {
  boost::system::error_code ec;
  auto doc = json::parse(policy, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  const auto& o = doc.as_object();
  const auto* arn = o.if_contains("deadLetterTargetArn");
  const auto* count = o.if_contains("maxReceiveCount");
  if (!arn || !arn->is_string() || !count) return std::nullopt;
  auto n = stored_integer(*count);
  std::string_view a = arn->as_string();
  auto colon = a.rfind(':');
  if (!n || colon == std::string_view::npos) return std::nullopt;
  return SqsRedrive{std::string(a.substr(colon + 1)), static_cast<int>(*n)};
}

SqsQueueInfo SqsQueueSet::parse(std::string_view attributes) {
  SqsQueueInfo info;
  boost::system::error_code ec;
  auto doc = json::parse(attributes, ec);
  if (ec || !doc.is_object()) return info;
  const auto& o = doc.as_object();
  if (const auto* v = o.if_contains("VisibilityTimeout")) {
    if (auto s = stored_integer(*v)) info.visibility_ms = static_cast<TimeMs>(*s) * 1000;
  }
  if (const auto* v = o.if_contains("RedrivePolicy"); v && v->is_string()) {
    info.redrive = parse_redrive(v->as_string());
  }
  return info;
}

void SqsQueueSet::put(const store::SqsQueueRow& row) {
  Entry entry{parse(row.attributes), row};
  std::lock_guard lock(mutex_);
  queues_[row.name] = std::move(entry);
}

void SqsQueueSet::erase(const std::string& name) {
  std::lock_guard lock(mutex_);
  queues_.erase(name);
}

void SqsQueueSet::replace(const std::vector<store::SqsQueueRow>& rows, TimeMs at) {
  std::map<std::string, Entry, std::less<>> fresh;
  for (const auto& row : rows) fresh.emplace(row.name, Entry{parse(row.attributes), row});
  std::lock_guard lock(mutex_);
  queues_ = std::move(fresh);
  if (!loaded_at_ || at > *loaded_at_) loaded_at_ = at;
}

bool SqsQueueSet::contains(std::string_view name) const {
  std::lock_guard lock(mutex_);
  return queues_.find(name) != queues_.end();
}

std::optional<SqsQueueInfo> SqsQueueSet::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(name);
  if (it == queues_.end()) return std::nullopt;
  return it->second.info;
}

std::optional<store::SqsQueueRow> SqsQueueSet::row(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(name);
  if (it == queues_.end()) return std::nullopt;
  return it->second.row;
}

bool SqsQueueSet::names_as_target(std::string_view dlq) const {
  std::lock_guard lock(mutex_);
  for (const auto& entry : queues_) {
    if (entry.second.info.redrive && entry.second.info.redrive->target == dlq) return true;
  }
  return false;
}

std::optional<TimeMs> SqsQueueSet::visibility_ms(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(name);
  return it == queues_.end() ? std::nullopt : it->second.info.visibility_ms;
}

bool SqsQueueSet::begin_reload(TimeMs now) {
  std::lock_guard lock(mutex_);
  if (loaded_at_ && now - *loaded_at_ < 1000 && now >= *loaded_at_) return false;
  loaded_at_ = now;
  return true;
}

}  // namespace dlq::core

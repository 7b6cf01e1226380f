// The visitors of the config keys (config.cpp lists the keys once, in visit_*): Parser reads a
// JSON document into the Config and names every bad or unknown key; Printer writes the Config
// back out; KeyLister lists every key with its type and default (the reference that
// docs/configuration.md is tested against). Private to lib/config.
#pragma once

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "config/config.hpp"
#include "model/message.hpp"

namespace dlq::config_detail {
namespace json = boost::json;


// Documented keys whose feature is not built yet: present in a file, they are an error.
inline const std::set<std::string, std::less<>> kNotSupportedYet = {};

inline std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// Reads keys out of one JSON object, remembering which it consumed so that the rest can be
// reported as unknown.
class Parser {
 public:
  Parser(const json::object* obj, std::string path, std::vector<std::string>& errors)
      : obj_(obj), path_(std::move(path)), errors_(errors) {}

  template <class Int>
  void integer(std::string_view key, Int& out, long long min, long long max) {
    const json::value* v = take(key);
    if (!v) return;
    std::optional<long long> n;
    if (v->is_int64()) n = v->get_int64();
    if (!n || *n < min || *n > max) {
      fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
      return;
    }
    out = static_cast<Int>(*n);
  }

  void number(std::string_view key, double& out, double min, double max) {
    const json::value* v = take(key);
    if (!v) return;
    std::optional<double> d;
    if (v->is_int64()) d = static_cast<double>(v->get_int64());
    if (v->is_uint64()) d = static_cast<double>(v->get_uint64());
    if (v->is_double()) d = v->get_double();
    // Written so that NaN is out of range: Boost.JSON 1.81 reads 0e400 as NaN.
    if (!d || !(*d >= min && *d <= max)) {
      std::ostringstream range;
      range << "must be a number from " << min << " to " << max;
      fail(key, range.str());
      return;
    }
    out = *d;
  }

  void string(std::string_view key, std::string& out,
              const std::function<std::optional<std::string>(const std::string&)>& check = {}) {
    const json::value* v = take(key);
    if (!v) return;
    if (!v->is_string()) {
      fail(key, "must be a string");
      return;
    }
    std::string s(v->get_string());
    if (check) {
      if (auto problem = check(s)) {
        fail(key, *problem);
        return;
      }
    }
    out = std::move(s);
  }

  void boolean(std::string_view key, bool& out) {
    const json::value* v = take(key);
    if (!v) return;
    if (!v->is_bool()) {
      fail(key, "must be true or false");
      return;
    }
    out = v->get_bool();
  }

  template <class E>
  void choice(std::string_view key, E& out, const std::vector<std::pair<E, std::string>>& options) {
    const json::value* v = take(key);
    if (!v) return;
    if (v->is_string()) {
      for (const auto& [value, name] : options) {
        if (v->get_string() == name) {
          out = value;
          return;
        }
      }
    }
    std::string names;
    for (const auto& [value, name] : options) names += (names.empty() ? "\"" : ", \"") + name + "\"";
    fail(key, "must be one of " + names);
  }

  // `check_each` (optional) names what is wrong with one item.
  void strings(std::string_view key, std::vector<std::string>& out,
               const std::function<std::optional<std::string>(const std::string&)>& check_each =
                   {}) {
    const json::value* v = take(key);
    if (!v) return;
    std::vector<std::string> result;
    if (v->is_array()) {
      for (const auto& item : v->get_array()) {
        if (!item.is_string()) break;
        result.emplace_back(item.get_string());
      }
    }
    if (!v->is_array() || result.size() != v->get_array().size()) {
      fail(key, "must be an array of strings");
      return;
    }
    if (check_each) {
      for (const auto& item : result) {
        if (auto problem = check_each(item)) {
          fail(key, "\"" + item + "\" " + *problem);
          return;
        }
      }
    }
    out = std::move(result);
  }

  void error_classes(std::string_view key, std::vector<ErrorClass>& out) {
    std::vector<std::string> names;
    const json::value* v = obj_ ? obj_->if_contains(key) : nullptr;
    if (!v) return;
    std::size_t errors_before = errors_.size();
    strings(key, names);
    if (errors_.size() != errors_before) return;
    std::vector<ErrorClass> result;
    for (const auto& name : names) {
      auto c = parse_error_class(name);
      if (!c) {
        fail(key, "lists an unknown error class \"" + name + "\"");
        return;
      }
      result.push_back(*c);
    }
    out = std::move(result);
  }

  // A nested object: `fn(Parser&)` reads its keys.
  void object(std::string_view key, const std::function<void(Parser&)>& fn) {
    const json::value* v = take(key);
    if (!v) return;
    if (!v->is_object()) {
      fail(key, "must be an object");
      return;
    }
    Parser child(&v->get_object(), join(path_, key), errors_);
    fn(child);
    child.finish();
  }

  // An object whose keys are names chosen by the user (queues, job types).
  void named_objects(std::string_view key,
                     const std::function<std::optional<std::string>(std::string_view)>& check_name,
                     const std::function<void(std::string_view, Parser&)>& fn) {
    const json::value* v = take(key);
    if (!v) return;
    if (!v->is_object()) {
      fail(key, "must be an object");
      return;
    }
    std::string path = join(path_, key);
    for (const auto& [name, item] : v->get_object()) {
      if (auto problem = check_name(name)) {
        errors_.push_back("config key \"" + join(path, name) + "\": " + *problem);
        continue;
      }
      if (!item.is_object()) {
        errors_.push_back("config key \"" + join(path, name) + "\": must be an object");
        continue;
      }
      Parser child(&item.get_object(), join(path, name), errors_);
      fn(name, child);
      child.finish();
    }
  }

  // An array of objects (auth.tokens): `fn(Parser&, T&)` reads one item into a fresh T.
  template <class T>
  void object_array(std::string_view key, std::vector<T>& out,
                    const std::function<void(Parser&, T&)>& fn) {
    const json::value* v = take(key);
    if (!v) return;
    if (!v->is_array()) {
      fail(key, "must be an array of objects");
      return;
    }
    std::string path = join(path_, key);
    std::vector<T> result;
    std::size_t i = 0;
    for (const auto& item : v->get_array()) {
      std::string item_path = path + "[" + std::to_string(i++) + "]";
      if (!item.is_object()) {
        errors_.push_back("config key \"" + item_path + "\": must be an object");
        continue;
      }
      Parser child(&item.get_object(), item_path, errors_);
      T value{};
      fn(child, value);
      child.finish();
      result.push_back(std::move(value));
    }
    out = std::move(result);
  }

  // Keys the object must have: each one it lacks is named.
  void required(std::initializer_list<std::string_view> keys) {
    for (std::string_view key : keys) {
      if (obj_ && !obj_->contains(key)) fail(key, "is required");
    }
  }

  void finish() {
    if (!obj_) return;
    for (const auto& [key, value] : *obj_) {
      if (!consumed_.contains(std::string(key))) {
        errors_.push_back("config key \"" + join(path_, key) + "\": unknown key");
      }
    }
  }

 private:
  const json::value* take(std::string_view key) {
    if (!obj_) return nullptr;
    const json::value* v = obj_->if_contains(key);
    if (!v) return nullptr;
    consumed_.insert(std::string(key));
    if (kNotSupportedYet.contains(join(path_, key))) {
      fail(key, "not supported yet (the feature is documented but not built in this version)");
      return nullptr;
    }
    return v;
  }

  void fail(std::string_view key, const std::string& why) {
    errors_.push_back("config key \"" + join(path_, key) + "\": " + why);
  }

  const json::object* obj_;
  std::string path_;
  std::vector<std::string>& errors_;
  std::set<std::string> consumed_;
};

// Writes the struct back into a JSON object, skipping keys that are not supported yet.
class Printer {
 public:
  Printer(json::object& out, std::string path) : out_(out), path_(std::move(path)) {}

  template <class Int>
  void integer(std::string_view key, Int& v, long long, long long) {
    if (shown(key)) out_[key] = static_cast<long long>(v);
  }
  void number(std::string_view key, double& v, double, double) {
    if (!shown(key)) return;
    if (v == static_cast<double>(static_cast<long long>(v))) {
      out_[key] = static_cast<long long>(v);
    } else {
      out_[key] = v;
    }
  }
  void string(std::string_view key, std::string& v,
              const std::function<std::optional<std::string>(const std::string&)>& = {}) {
    if (shown(key)) out_[key] = v;
  }
  void boolean(std::string_view key, bool& v) {
    if (shown(key)) out_[key] = v;
  }
  template <class E>
  void choice(std::string_view key, E& v, const std::vector<std::pair<E, std::string>>& options) {
    if (!shown(key)) return;
    for (const auto& [value, name] : options) {
      if (value == v) out_[key] = name;
    }
  }
  void strings(std::string_view key, std::vector<std::string>& v,
               const std::function<std::optional<std::string>(const std::string&)>& = {}) {
    if (!shown(key)) return;
    json::array a;
    for (const auto& s : v) a.emplace_back(s);
    out_[key] = std::move(a);
  }
  void error_classes(std::string_view key, std::vector<ErrorClass>& v) {
    if (!shown(key)) return;
    json::array a;
    for (auto c : v) a.emplace_back(to_string(c));
    out_[key] = std::move(a);
  }
  void object(std::string_view key, const std::function<void(Printer&)>& fn) {
    if (!shown(key)) return;
    json::object child_obj;
    Printer child(child_obj, join(path_, key));
    fn(child);
    out_[key] = std::move(child_obj);
  }
  template <class T>
  void object_array(std::string_view key, std::vector<T>& items,
                    const std::function<void(Printer&, T&)>& fn) {
    if (!shown(key)) return;
    json::array all;
    std::size_t i = 0;
    for (auto& item : items) {
      json::object child_obj;
      Printer child(child_obj, join(path_, key) + "[" + std::to_string(i++) + "]");
      fn(child, item);
      all.emplace_back(std::move(child_obj));
    }
    out_[key] = std::move(all);
  }
  template <class Map>
  void named(std::string_view key, Map& map, const std::function<void(Printer&, typename Map::mapped_type&)>& fn) {
    if (!shown(key)) return;
    json::object all;
    for (auto& [name, item] : map) {
      json::object child_obj;
      Printer child(child_obj, join(join(path_, key), name));
      fn(child, item);
      all[name] = std::move(child_obj);
    }
    out_[key] = std::move(all);
  }

 private:
  bool shown(std::string_view key) const { return !kNotSupportedYet.contains(join(path_, key)); }
  json::object& out_;
  std::string path_;
};


// Lists every leaf key with its type and its value in the visited Config (the defaults, when
// visiting a default-constructed one), as `ConfigKey`s.
class KeyLister {
 public:
  KeyLister(std::vector<ConfigKey>& out, std::string path) : out_(out), path_(std::move(path)) {}

  template <class Int>
  void integer(std::string_view key, Int& v, long long, long long) {
    add(key, "integer", json::serialize(json::value(static_cast<long long>(v))));
  }
  void number(std::string_view key, double& v, double, double) {
    json::value shown = v == static_cast<double>(static_cast<long long>(v))
                            ? json::value(static_cast<long long>(v))
                            : json::value(v);
    add(key, "number", json::serialize(shown));
  }
  void string(std::string_view key, std::string& v,
              const std::function<std::optional<std::string>(const std::string&)>& = {}) {
    add(key, "string", json::serialize(json::value(v)));
  }
  void boolean(std::string_view key, bool& v) { add(key, "boolean", v ? "true" : "false"); }
  template <class E>
  void choice(std::string_view key, E& v, const std::vector<std::pair<E, std::string>>& options) {
    for (const auto& [value, name] : options) {
      if (value == v) add(key, "string", json::serialize(json::value(name)));
    }
  }
  void strings(std::string_view key, std::vector<std::string>& v,
               const std::function<std::optional<std::string>(const std::string&)>& = {}) {
    json::array a;
    for (const auto& s : v) a.emplace_back(s);
    add(key, "string list", json::serialize(a));
  }
  void error_classes(std::string_view key, std::vector<ErrorClass>& v) {
    json::array a;
    for (auto c : v) a.emplace_back(to_string(c));
    add(key, "string list", json::serialize(a));
  }
  void object(std::string_view key, const std::function<void(KeyLister&)>& fn) {
    KeyLister child(out_, join(path_, key));
    fn(child);
  }
  // The array itself, then the members of one item as `key[].member`.
  template <class T>
  void object_array(std::string_view key, std::vector<T>& items,
                    const std::function<void(KeyLister&, T&)>& fn) {
    add(key, "object list", items.empty() ? "[]" : "");
    KeyLister child(out_, join(path_, key) + "[]");
    T item{};
    child.listing_members_ = true;
    fn(child, item);
  }
  // A key with no default of its own (members of per-queue overrides, of list items).
  void unset(std::string_view key, const char* type) { out_.push_back({join(path_, key), type, "", ""}); }

 private:
  void add(std::string_view key, const char* type, std::string shown) {
    out_.push_back({join(path_, key), type, listing_members_ ? std::string() : std::move(shown), ""});
  }
  std::vector<ConfigKey>& out_;
  std::string path_;
  bool listing_members_ = false;
};

}  // namespace dlq::config_detail

// Session: one request and its answer mapped onto dlqctl's exit statuses; query building.
#include "session.hpp"

#include <algorithm>
#include <iostream>

#include <boost/json.hpp>

#include "output.hpp"

namespace dlq::ctl {
namespace json = boost::json;

json::value Session::call(const std::string& method, const std::string& target,
                          const json::value* body, Reply* reply_out) {
  Reply reply = client.request(method, target, body ? json::serialize(*body) : std::string());
  if (reply.status >= 500) throw ServerFailed(describe_problem(reply.status, reply.body));
  if (reply.status >= 400) {
    // dlqd refuses with a problem (RFC 9457); anything else (a proxy's HTML 404, a server that
    // is not dlqd) is no answer from dlq: exit 3, as for a 5xx.
    if (!is_problem(reply.body)) {
      throw ServerFailed("the answer (" + std::to_string(reply.status) +
                         ") is not dlq's: is --url dlqd's address? " + shorten(reply.body, 200));
    }
    throw ServerRefused(describe_problem(reply.status, reply.body), reply.status, reply.body);
  }
  if (reply.status < 200 || reply.status >= 300) {
    throw ServerFailed("unexpected answer " + std::to_string(reply.status));
  }
  json::value v;
  if (!reply.body.empty()) {
    std::error_code ec;
    v = json::parse(reply.body, ec);
    if (ec) throw ServerFailed("the answer is not JSON: " + shorten(reply.body, 200));
  }
  if (reply_out) *reply_out = std::move(reply);
  return v;
}

void Session::print_json(const json::value& v) { out << json::serialize(v) << "\n"; }

bool Session::confirm(const std::string& question) {
  err << shown(question) << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(in, answer)) {
    err << "\n";
    return false;
  }
  while (!answer.empty() && (answer.back() == '\r' || answer.back() == ' ')) answer.pop_back();
  std::transform(answer.begin(), answer.end(), answer.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return answer == "y" || answer == "yes";
}

Query& Query::add(const std::string& key, const std::optional<std::string>& value) {
  if (!value) return *this;
  if (!text_.empty()) text_ += "&";
  text_ += key + "=" + url_encode(*value);
  return *this;
}

Query& Query::add(const std::string& key, const std::optional<long long>& value) {
  if (!value) return *this;
  return add(key, std::optional<std::string>(std::to_string(*value)));
}

bool never_used(const json::value& stats) {
  const json::object* o = stats.if_object();
  if (!o) return false;
  for (const char* key : kStatsCounts) {
    const json::value* v = o->if_contains(key);
    if (!v || !v->is_number() || v->to_number<long long>() != 0) return false;
  }
  return true;
}

std::string unused_queue_sentence(const std::string& queue) {
  return "No message has ever been in queue \"" + shown(queue) +
         "\" (or every one was purged): check the name.";
}

void name_if_unused(Session& s, const std::string& queue) {
  try {
    if (never_used(s.call("GET", queue_path(queue) + "/stats"))) s.err << unused_queue_sentence(queue) << "\n";
  } catch (const std::exception&) {
    // only a hint: the command's own answer is what counts
  }
}

std::string queue_path(const std::string& queue) { return "/queues/" + url_encode(queue); }

std::string message_path(const std::string& queue, const std::string& id, const std::string& action) {
  std::string p = queue_path(queue) + "/messages/" + url_encode(id);
  if (!action.empty()) p += "/" + action;
  return p;
}

}  // namespace dlq::ctl

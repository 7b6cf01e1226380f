#include "integration/server_fixture.hpp"

#include <boost/test/unit_test.hpp>

namespace dlq::test {

DlqdProcess& shared_dlqd() {
  static DlqdProcess server(DlqdOptions{R"({"testing": {"allow_clock_override": true}})"});
  return server;
}

std::string fresh_queue(const std::string& prefix) { return unique_name(prefix); }

TimeMs t0() { return *parse_timestamp("2099-01-01T00:00:00.000Z"); }

std::string at_ms(TimeMs ms_after_t0) { return format_rfc3339(t0() + ms_after_t0); }

boost::json::object enqueue(HttpClient& c, const std::string& queue, const std::string& payload,
                            boost::json::object extra, const Headers& headers) {
  extra["payload"] = payload;
  auto res = c.post("/queues/" + queue + "/messages", extra, headers);
  BOOST_REQUIRE_MESSAGE(res.status == 201, "enqueue answered " << res.status << ": " << res.body);
  return res.json().as_object();
}

HttpResponse claim(HttpClient& c, const std::string& queue, boost::json::object body,
                   const Headers& headers) {
  return c.post("/queues/" + queue + "/claim", body, headers);
}

boost::json::object claim_one(HttpClient& c, const std::string& queue, const Headers& headers) {
  auto res = claim(c, queue, {}, headers);
  BOOST_REQUIRE_EQUAL(res.status, 200);
  auto body = res.json().as_object();
  BOOST_REQUIRE_MESSAGE(body.at("claimed").as_bool(), "nothing to claim in " << queue);
  return body.at("message").as_object();
}

std::int64_t fail_to_death(HttpClient& c, const std::string& queue, const std::string& job_type,
                           const std::string& error, const std::string& when,
                           const std::string& error_class, const std::string& stack) {
  boost::json::object body{{"payload", "{}"}, {"max_retries", 1}, {"job_type", job_type}};
  const Headers now = when.empty() ? Headers{} : now_header(when);
  auto res = c.post("/queues/" + queue + "/messages", body, now);
  BOOST_REQUIRE_EQUAL(res.status, 201);
  auto m = claim_one(c, queue, now);
  auto id = m.at("id").as_int64();
  boost::json::object failure{{"error", error}, {"error_class", error_class}};
  if (!stack.empty()) failure["stack"] = stack;
  auto failed = c.post(message_path(queue, id, "fail"), failure, now);
  BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
  return id;
}

std::vector<std::string> error_fields(const HttpResponse& res) {
  std::vector<std::string> fields;
  auto body = res.json();  // a range-for over a member of a temporary would dangle
  for (const auto& e : body.at("errors").as_array()) fields.push_back(str(e, "field"));
  return fields;
}

std::string message_path(const std::string& queue, std::int64_t id, const std::string& action) {
  std::string p = "/queues/" + queue + "/messages/" + std::to_string(id);
  if (!action.empty()) p += "/" + action;
  return p;
}

}  // namespace dlq::test

// Alert webhooks against a receiver on loopback, over HTTP and over HTTPS with a test CA: dead
// letters aggregated per queue per interval, with counts and without the payload; threshold
// crossed and cleared (the leader's check); incident events (opened, each power of ten, muted,
// opened again; none with them off); a receiver that is down gets retries, counted, and the
// queue does not notice.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "integration/server_fixture.hpp"
#include "support/webhook_receiver.hpp"

namespace json = boost::json;
using namespace dlq::test;
using Clock = std::chrono::steady_clock;

namespace {

std::string alerts_config(const std::string& url, const std::string& extra = "") {
  return R"({"alerts": {"webhook_url": ")" + url +
         R"(", "min_interval_seconds": 2, "dead_depth": 0, "oldest_dead_age_seconds": 0)" + extra +
         "}}";
}

void make_dead(HttpClient& c, const std::string& queue, int n) {
  for (int i = 0; i < n; ++i) {
    enqueue(c, queue, R"({"card_number":"TOPSECRET-4111"})", {{"max_retries", 1}, {"job_type", "charge"}});
    auto m = claim_one(c, queue);
    c.post(message_path(queue, m.at("id").as_int64(), "fail"),
           json::object{{"error", "declined"}, {"error_class", "invalid_input"}});
  }
}

double sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

long long counted(const std::vector<WebhookReceiver::Received>& got) {
  long long n = 0;
  for (const auto& r : got) n += json::parse(r.body).at("count").as_int64();
  return n;
}

// The incident events a receiver got, in arrival order.
std::vector<json::object> incident_events(WebhookReceiver& r) {
  std::vector<json::object> out;
  for (const auto& got : r.received()) {
    auto b = json::parse(got.body).as_object();
    if (str(b, "event").starts_with("incident_")) out.push_back(b);
  }
  return out;
}

// `n` messages of `job_type` die together: one batch claim with one-second leases, which the
// reaper ends in one sweep (max_lease_expiries 1). Returns when all are dead.
void expire_together(HttpClient& c, const std::string& queue, const std::string& job_type, int n) {
  json::array messages;
  for (int i = 0; i < n; ++i) messages.push_back(json::object{{"payload", "x"}, {"job_type", job_type}});
  BOOST_REQUIRE_EQUAL(c.post("/queues/" + queue + "/messages/batch",
                             json::object{{"messages", messages}}).status, 201);
  auto claimed = claim(c, queue, {{"max", n}, {"visibility_timeout", 1}}).json();
  const auto& got = claimed.at("messages").as_array();
  BOOST_REQUIRE_EQUAL(got.size(), static_cast<std::size_t>(n));
  BOOST_REQUIRE(eventually([&] {
    for (const auto& m : got) {
      auto now = c.get(message_path(queue, m.at("id").as_int64())).json();
      if (str(now, "status") != "dead") return false;
    }
    return true;
  }, 10));
}

const char* const kIncidentQueue = R"("queues": {"inc": {"max_lease_expiries": 1}})";

}  // namespace

BOOST_AUTO_TEST_SUITE(alerts)

BOOST_AUTO_TEST_CASE(dead_letters_are_aggregated_per_interval_without_the_payload) {
  WebhookReceiver receiver;
  DlqdProcess node{DlqdOptions(alerts_config("http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook"))};
  HttpClient c(node.port());
  make_dead(c, "billing", 3);
  BOOST_REQUIRE(eventually([&] { return counted(receiver.received()) == 3; }, 15));
  auto got = receiver.received();
  // The first goes at once; the rest waited for the interval: never more than two alerts here.
  BOOST_TEST(got.size() <= 2u);
  if (got.size() == 2) {
    BOOST_TEST(std::chrono::duration<double>(got[1].at - got[0].at).count() >= 1.5);
  }
  auto first = json::parse(got[0].body).as_object();
  BOOST_TEST(str(first, "event") == "dead_lettered");
  BOOST_TEST(str(first, "queue") == "billing");
  BOOST_TEST(first.at("threshold").is_null());
  BOOST_TEST(str(first, "node").size() == 16u);
  const auto& m = first.at("messages").as_array().at(0);
  BOOST_TEST(str(m, "job_type") == "charge");
  BOOST_TEST(str(m, "error_class") == "invalid_input");
  BOOST_TEST(str(m, "dead_reason") == "non_retryable");
  BOOST_TEST(m.at("attempts").as_int64() == 1);
  BOOST_TEST(m.at("dead_at").is_string());
  for (const auto& r : got) BOOST_TEST(r.body.find("TOPSECRET") == std::string::npos);
  auto scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, "dlq_alerts_sent_total") == static_cast<double>(got.size()));
  BOOST_TEST(sample(scrape, "dlq_alerts_failed_total") == 0);
}

BOOST_AUTO_TEST_CASE(alerts_go_over_https_verified_against_a_private_ca) {
  TempDir dir;
  TestCertificates certs(dir.path().string());
  WebhookReceiver receiver(&certs);
  DlqdProcess node{DlqdOptions(alerts_config(
      "https://localhost:" + std::to_string(receiver.port()) + "/hook",
      R"(, "ca_file": ")" + certs.ca_file + R"(")"))};
  HttpClient c(node.port());
  make_dead(c, "tls", 1);
  BOOST_REQUIRE(eventually([&] { return !receiver.received().empty(); }, 15));
  BOOST_TEST(str(json::parse(receiver.received()[0].body), "queue") == "tls");

  // Without the private CA the certificate is not trusted: nothing arrives, failures are counted.
  WebhookReceiver other(&certs);
  DlqdProcess untrusting{DlqdOptions(alerts_config(
      "https://localhost:" + std::to_string(other.port()) + "/hook"))};
  HttpClient u(untrusting.port());
  make_dead(u, "tls", 1);
  BOOST_REQUIRE(eventually([&] { return sample(u.get("/metrics").body, "dlq_alerts_failed_total") >= 1; }, 15));
  BOOST_TEST(other.received().empty());
}

BOOST_AUTO_TEST_CASE(a_threshold_is_crossed_and_cleared_once_each) {
  WebhookReceiver receiver;
  DlqdProcess node{DlqdOptions(alerts_config(
      "http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook",
      R"(}, "queues": {"orders": {"alerts": {"dead_depth": 2}})"))};
  HttpClient c(node.port());
  make_dead(c, "orders", 2);
  auto has = [&](const std::string& event) {
    for (const auto& r : receiver.received()) {
      if (str(json::parse(r.body), "event") == event) return true;
    }
    return false;
  };
  BOOST_REQUIRE(eventually([&] { return has("threshold_crossed"); }, 20));
  for (const auto& r : receiver.received()) {
    auto b = json::parse(r.body);
    if (str(b, "event") != "threshold_crossed") continue;
    BOOST_TEST(str(b, "metric") == "dead_depth");
    BOOST_TEST(b.at("threshold").as_int64() == 2);
    BOOST_TEST(b.at("value").as_int64() == 2);
  }
  // Won't fix: dismissed messages are not dead any more.
  auto p = c.post("/dlq/dismiss", json::object{{"filter", json::object{{"queue", "orders"}}}, {"dry_run", true}}).json();
  c.post("/dlq/dismiss", json::object{{"filter", json::object{{"queue", "orders"}}},
                                      {"confirm_token", p.at("confirm_token")}});
  BOOST_REQUIRE(eventually([&] { return has("threshold_cleared"); }, 20));
  int crossed = 0;
  for (const auto& r : receiver.received()) crossed += str(json::parse(r.body), "event") == "threshold_crossed";
  BOOST_TEST(crossed == 1);
}

// The leader's incident events (checked every 5 s; min_interval_seconds 1): one incident_opened,
// one incident_grew per power of ten, a second cause its own, nothing for a muted one (nor when
// its mute ends), an emptied one opened again. Beside it a node with the events off (the
// default) sends only dead_lettered.
BOOST_AUTO_TEST_CASE(incident_events_tell_each_opening_and_power_of_ten_once) {
  WebhookReceiver receiver, off_receiver;
  const std::string base = "http://127.0.0.1:";
  DlqdProcess node{DlqdOptions(
      R"({"alerts": {"webhook_url": ")" + base + std::to_string(receiver.port()) +
      R"(/hook", "min_interval_seconds": 1, "dead_depth": 0, "oldest_dead_age_seconds": 0, )"
      R"("on_new_incident": true}, )" + kIncidentQueue + "}")};
  DlqdProcess off{DlqdOptions(R"({"alerts": {"webhook_url": ")" + base +
                              std::to_string(off_receiver.port()) + R"(/hook"}, )" +
                              kIncidentQueue + "}")};
  HttpClient c(node.port()), o(off.port());
  expire_together(o, "inc", "relay", 5);

  expire_together(c, "inc", "relay", 5);
  BOOST_REQUIRE(eventually([&] { return incident_events(receiver).size() == 1; }, 10));
  auto opened = incident_events(receiver).at(0);
  std::vector<std::string> keys;
  for (const auto& kv : opened) keys.emplace_back(kv.key());
  BOOST_TEST((keys == std::vector<std::string>{"event", "fingerprint", "title", "error_class",
                                               "job_types", "queues", "dead", "threshold",
                                               "first_dead_at", "last_dead_at", "sample_ids",
                                               "node"}));
  BOOST_TEST(str(opened, "event") == "incident_opened");
  BOOST_TEST(str(opened, "title") == "lease expired");
  BOOST_TEST(opened.at("dead").as_int64() == 5);
  BOOST_TEST(opened.at("threshold").is_null());
  BOOST_TEST(json::serialize(opened.at("queues")) == json::serialize(json::object{{"inc", 5}}));
  BOOST_TEST(opened.at("sample_ids").as_array().size() == 3u);
  const std::string relay = str(opened, "fingerprint");

  // 25 more (crossing 10), and a second cause.
  expire_together(c, "inc", "relay", 25);
  expire_together(c, "inc", "billing", 5);
  BOOST_REQUIRE(eventually([&] { return incident_events(receiver).size() == 3; }, 15));
  std::string billing;
  for (const auto& e : incident_events(receiver)) {
    if (str(e, "fingerprint") == relay && str(e, "event") == "incident_grew") {
      BOOST_TEST(e.at("threshold").as_int64() == 10);
      BOOST_TEST(e.at("dead").as_int64() == 30);
    } else if (str(e, "fingerprint") != relay) {
      BOOST_TEST(str(e, "event") == "incident_opened");
      BOOST_TEST(e.at("dead").as_int64() == 5);
      billing = str(e, "fingerprint");
    }
  }
  BOOST_REQUIRE(!billing.empty());

  // Muted, relay crosses 100 and tells nothing; billing's crossing of 10, in a later check than
  // relay's deaths, still arrives.
  BOOST_REQUIRE_EQUAL(c.post("/dlq/incidents/" + relay + "/mute",
                             json::object{{"until", "2099-01-01T00:00:00Z"}}).status, 200);
  expire_together(c, "inc", "relay", 71);
  BOOST_REQUIRE_EQUAL(c.get("/dlq/incidents/" + relay).json().at("dead").as_int64(), 101);
  expire_together(c, "inc", "billing", 5);
  BOOST_REQUIRE(eventually([&] { return incident_events(receiver).size() == 4; }, 15));
  auto grew = incident_events(receiver).at(3);
  BOOST_TEST(str(grew, "fingerprint") == billing);
  BOOST_TEST(grew.at("threshold").as_int64() == 10);

  // Un-muted: nothing for what it reached meanwhile. Billing emptied, then dying again, opens again.
  BOOST_REQUIRE_EQUAL(c.post("/dlq/incidents/" + relay + "/mute",
                             json::object{{"until", "2000-01-01T00:00:00Z"}}).status, 200);
  json::object filter{{"fingerprint", billing}};
  auto preview = c.post("/dlq/dismiss", json::object{{"filter", filter}, {"dry_run", true}}).json();
  BOOST_REQUIRE_EQUAL(c.post("/dlq/dismiss", json::object{{"filter", filter},
                                                          {"confirm_token", preview.at("confirm_token")}})
                          .json().at("dismissed").as_int64(), 10);
  expire_together(c, "inc", "billing", 1);
  BOOST_REQUIRE(eventually([&] { return incident_events(receiver).size() == 5; }, 15));
  auto again = incident_events(receiver).at(4);
  BOOST_TEST(str(again, "fingerprint") == billing);
  BOOST_TEST(str(again, "event") == "incident_opened");
  BOOST_TEST(again.at("dead").as_int64() == 1);
  int relay_events = 0;
  for (const auto& e : incident_events(receiver)) relay_events += str(e, "fingerprint") == relay;
  BOOST_TEST(relay_events == 2);

  // The node with the events off ran its checks all along: only dead_lettered.
  BOOST_TEST(!off_receiver.received().empty());
  BOOST_TEST(incident_events(off_receiver).empty());
}

BOOST_AUTO_TEST_CASE(a_receiver_that_is_down_gets_retries_and_the_queue_does_not_notice) {
  WebhookReceiver receiver;
  receiver.fail_next = 2;
  DlqdProcess node{DlqdOptions(alerts_config("http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook"))};
  HttpClient c(node.port());
  make_dead(c, "flaky", 1);
  // Meanwhile the queue works as ever.
  auto start = Clock::now();
  for (int i = 0; i < 20; ++i) enqueue(c, "busy", "x");
  BOOST_TEST(std::chrono::duration<double>(Clock::now() - start).count() < 5.0);
  BOOST_REQUIRE(eventually([&] { return !receiver.received().empty(); }, 20));  // 1 s, then 2 s
  BOOST_TEST(receiver.attempts.load() == 3);
  auto scrape = c.get("/metrics").body;
  BOOST_TEST(sample(scrape, "dlq_alerts_failed_total") == 2);
  BOOST_TEST(sample(scrape, "dlq_alerts_sent_total") == 1);
}

BOOST_AUTO_TEST_SUITE_END()

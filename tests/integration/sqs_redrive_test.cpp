// Issue 39 against the real dlqd, on the backend this run tests: RedrivePolicy deaths on the desk
// (the max_receive_count and dead_letter_queue filters), deleting on a dead-letter queue as dismiss
// (admin only), move tasks as replay runs (refusals, one active task across nodes, surviving a
// restart), DeleteQueue of a DLQ, and text through the query protocol's XML. The SDKs' and the
// CLI's view is tests/sqs.
#include <sys/stat.h>

#include <cctype>
#include <fstream>
#include <set>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "core/sigv4.hpp"
#include "integration/server_fixture.hpp"
#include "model/sqs_digest.hpp"
#include "support/preconditions.hpp"

namespace json = boost::json;
namespace utf = boost::unit_test;
using namespace dlq::test;

namespace sqs_redrive {

constexpr const char* kAccount = "000000000000";
constexpr const char* kArnPrefix = "arn:aws:sqs:us-east-1:000000000000:";

struct Key {
  std::string name, id, secret;
};
const Key kWorker{"worker", "AKIAWORKER0000000001", "worker-secret/abc"};
const Key kAdmin{"admin", "AKIAADMIN00000000001", "admin-secret/abc"};

// sqs.access_keys with a worker and an admin key (secrets written 0600 into `dir`).
std::string keyed_config(const TempDir& dir) {
  json::array list;
  for (const Key* k : {&kWorker, &kAdmin}) {
    std::string file = dir.file(k->name + ".secret");
    std::ofstream(file) << k->secret << "\n";
    ::chmod(file.c_str(), 0600);
    list.push_back(json::object{{"name", k->name},
                                {"access_key_id", k->id},
                                {"secret_file", file},
                                {"roles", json::array{json::value(k->name)}}});
  }
  return R"({"sqs": {"access_keys": )" + json::serialize(list) + "}}";
}

// One server and how to call its JSON protocol, signed with `key` when one is given.
struct Front {
  explicit Front(unsigned short p) : port(p), c(p) {}
  unsigned short port;
  HttpClient c;
  const Key* key = nullptr;

  HttpResponse call(const std::string& action, const json::object& body, const Key* as = nullptr) {
    const Key* k = as ? as : key;
    std::string text = json::serialize(body);
    Headers headers = {{"host", "127.0.0.1:" + std::to_string(port)},
                       {"content-type", "application/x-amz-json-1.0"},
                       {"x-amz-target", "AmazonSQS." + action}};
    if (k) {
      dlq::core::sigv4::Request r{"POST", "/", "", &headers, text};
      auto added = dlq::core::sigv4::sign(r, k->id, k->secret, "us-east-1", "sqs",
                                          std::chrono::system_clock::now());
      headers.insert(headers.end(), added.begin(), added.end());
    }
    return c.request("POST", "/", text, headers);
  }
  // call() answering 200, its JSON.
  json::object ok(const std::string& action, const json::object& body, const Key* as = nullptr) {
    auto r = call(action, body, as);
    BOOST_REQUIRE_MESSAGE(r.status == 200, action << " answered " << r.status << ": " << r.body);
    return r.body.empty() ? json::object{} : json::parse(r.body).as_object();
  }
  std::string url(const std::string& queue) const {
    return "http://127.0.0.1:" + std::to_string(port) + "/" + kAccount + "/" + queue;
  }
  json::object on(const std::string& queue, json::object more = {}) const {
    more["QueueUrl"] = url(queue);
    return more;
  }

  // `dlq` and `source`, whose RedrivePolicy names `dlq` after `max_receives`.
  void redrive(const std::string& source, const std::string& dlq, int max_receives = 1) {
    ok("CreateQueue", {{"QueueName", dlq}});
    std::string policy = json::serialize(json::object{{"deadLetterTargetArn", kArnPrefix + dlq},
                                                      {"maxReceiveCount", max_receives}});
    ok("CreateQueue", {{"QueueName", source}, {"Attributes", json::object{{"RedrivePolicy", policy}}}});
  }

  // `n` messages of `queue` received, hidden for `visibility` seconds.
  json::array receive_all(const std::string& queue, std::size_t n, int visibility = 30,
                          const Key* as = nullptr) {
    json::array all;
    for (int round = 0; round < 20 && all.size() < n; ++round) {
      auto got = ok("ReceiveMessage",
                    on(queue, {{"MaxNumberOfMessages", static_cast<std::int64_t>(std::min<std::size_t>(10, n - all.size()))},
                               {"VisibilityTimeout", visibility},
                               {"WaitTimeSeconds", 1},
                               {"MessageSystemAttributeNames", json::array{"All"}}}),
                    as);
      if (const auto* m = got.if_contains("Messages")) {
        for (const auto& one : m->as_array()) all.push_back(one);
      }
    }
    BOOST_REQUIRE_EQUAL(all.size(), n);
    return all;
  }

  // Receives the `n` ready messages of `source` once and makes each visible again at once
  // (ChangeMessageVisibility 0): with maxReceiveCount 1 each dies there. Their ids, in the order
  // they died.
  std::vector<std::int64_t> kill_all(const std::string& source, std::size_t n) {
    std::vector<std::int64_t> ids;
    for (const auto& m : receive_all(source, n)) {
      ok("ChangeMessageVisibility", on(source, {{"ReceiptHandle", m.at("ReceiptHandle")},
                                                {"VisibilityTimeout", 0}}));
      ids.push_back(std::stoll(std::string(m.at("MessageId").as_string())));
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // distinct dead_at
    }
    return ids;
  }

  // Sends `n` bodies to `source` and kills them (kill_all).
  std::vector<std::int64_t> send_and_kill(const std::string& source, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      ok("SendMessage", on(source, {{"MessageBody", source + " #" + std::to_string(i)}}));
    }
    return kill_all(source, n);
  }
};

std::string type_of(const HttpResponse& r) {
  auto doc = json::parse(r.body);
  const auto* t = doc.as_object().if_contains("__type");
  return t ? std::string(t->as_string()) : "";
}

std::string message_of(const HttpResponse& r) {
  auto doc = json::parse(r.body);  // a member of a temporary would dangle
  const auto* m = doc.as_object().if_contains("message");
  return m ? std::string(m->as_string()) : "";
}

// The ids GET /dlq lists for `query`, as a set.
std::set<std::int64_t> dead_ids(HttpClient& c, const std::string& query) {
  auto r = c.get("/dlq?limit=100&" + query);
  BOOST_REQUIRE_MESSAGE(r.status == 200, query << ": " << r.body);
  std::set<std::int64_t> ids;
  auto doc = r.json();
  for (const auto& m : doc.at("messages").as_array()) ids.insert(m.at("id").as_int64());
  return ids;
}

std::set<std::int64_t> set_of(const std::vector<std::int64_t>& ids) { return {ids.begin(), ids.end()}; }

std::string status_of(HttpClient& c, const std::string& queue, std::int64_t id) {
  auto r = c.get(message_path(queue, id));
  BOOST_REQUIRE_EQUAL(r.status, 200);
  return str(r.json(), "status");
}

// ---- the query protocol, by hand ---------------------------------------------------------------

std::string form_escape(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

HttpResponse query(Front& f, const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string form = "Action=" + fields.front().second + "&Version=2012-11-05";
  for (std::size_t i = 1; i < fields.size(); ++i) {
    form += "&" + form_escape(fields[i].first) + "=" + form_escape(fields[i].second);
  }
  return f.c.request("POST", "/", form,
                     {{"host", "127.0.0.1:" + std::to_string(f.port)},
                      {"content-type", "application/x-www-form-urlencoded; charset=utf-8"}});
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Character data as an XML parser reads it: raw CR and CRLF become LF (XML 1.0 §2.11) before the
// references are resolved; markup or an unknown reference inside it is a failure.
std::string xml_chars(std::string_view raw) {
  std::string text;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r') {
      text += '\n';
      if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
    } else {
      text += raw[i];
    }
  }
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    BOOST_REQUIRE_MESSAGE(text[i] != '<', "markup inside character data: " << raw);
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    std::size_t semi = text.find(';', i);
    BOOST_REQUIRE_MESSAGE(semi != std::string::npos, "a bare & in " << raw);
    std::string ref = text.substr(i + 1, semi - i - 1);
    if (ref == "amp") out += '&';
    else if (ref == "lt") out += '<';
    else if (ref == "gt") out += '>';
    else if (ref == "quot") out += '"';
    else if (ref == "apos") out += '\'';
    else if (ref.starts_with("#x")) append_utf8(out, static_cast<char32_t>(std::stoul(ref.substr(2), nullptr, 16)));
    else if (ref.starts_with("#")) append_utf8(out, static_cast<char32_t>(std::stoul(ref.substr(1))));
    else BOOST_FAIL("unknown reference &" << ref << "; in " << raw);
    i = semi;
  }
  return out;
}

// The decoded text of the first <name> element at or after `from` (required).
std::string xml_element(const std::string& xml, const std::string& name, std::size_t from = 0) {
  std::size_t open = xml.find("<" + name + ">", from);
  BOOST_REQUIRE_MESSAGE(open != std::string::npos, "no <" << name << "> in " << xml);
  std::size_t start = open + name.size() + 2;
  std::size_t end = xml.find("</" + name + ">", start);
  BOOST_REQUIRE_MESSAGE(end != std::string::npos, "no </" << name << "> in " << xml);
  return xml_chars(std::string_view(xml).substr(start, end - start));
}

}  // namespace sqs_redrive


namespace sqs_redrive {

std::string show(const std::set<std::int64_t>& ids) {
  std::string out = "{";
  for (auto id : ids) out += (out.size() > 1 ? "," : "") + std::to_string(id);
  return out + "}";
}

#define CHECK_IDS(got_expr, ...)                                                        \
  do {                                                                                  \
    const std::set<std::int64_t> got_ = (got_expr);                                     \
    const std::set<std::int64_t> want_ = __VA_ARGS__;                                   \
    BOOST_CHECK_MESSAGE(got_ == want_, #got_expr << ": " << show(got_) << ", expected " \
                                                 << show(want_));                       \
  } while (false)

// A dead letter as dlq's own API shows it after a death at maxReceiveCount 1.
void check_max_receive_death(HttpClient& c, const std::string& queue, std::int64_t id) {
  auto m = c.get(message_path(queue, id)).json();
  BOOST_TEST(str(m, "status") == "dead", queue << "/" << id);
  BOOST_TEST(str(m, "dead_reason") == "max_receive_count", queue << "/" << id);
  BOOST_TEST(str(m, "last_error") == "received 1 times without being deleted", queue << "/" << id);
}

json::object start_task(const std::string& dlq, int rate) {
  return {{"SourceArn", kArnPrefix + dlq}, {"MaxNumberOfMessagesPerSecond", rate}};
}

json::array tasks(Front& f, const std::string& dlq) {
  auto out = f.ok("ListMessageMoveTasks", {{"SourceArn", kArnPrefix + dlq}, {"MaxResults", 10}});
  return out.at("Results").as_array();
}

}  // namespace sqs_redrive

BOOST_AUTO_TEST_SUITE(sqs_redrive)

using namespace sqs_redrive;

// Deaths at maxReceiveCount (by ChangeMessageVisibility 0, by dlq's own release, by a lease
// expiry) carry dead_reason max_receive_count; any death on a queue with a RedrivePolicy carries
// its DLQ's name. GET /dlq's filters and a batch dismiss preview select exactly those, and the
// dismiss takes exactly those.
BOOST_AUTO_TEST_CASE(max_receive_count_and_dead_letter_queue_filters) {
  DlqdProcess d(DlqdOptions("{}"));
  Front f(d.port());
  HttpClient& c = f.c;
  const std::string a = fresh_queue("rdsrca"), dlq_a = fresh_queue("rddlqa");
  const std::string b = fresh_queue("rdsrcb"), dlq_b = fresh_queue("rddlqb");
  const std::string failing = fresh_queue("rdfail"), plain = fresh_queue("rdplain");
  f.redrive(a, dlq_a);
  f.redrive(b, dlq_b);
  f.redrive(failing, dlq_a, 5);
  f.ok("CreateQueue", {{"QueueName", plain}});

  auto by_visibility = f.send_and_kill(a, 2);
  // dlq's own claim is a receive too, and its release would make the message visible again.
  auto released = enqueue(c, b, "released").at("id").as_int64();
  auto lease = claim_one(c, b);
  BOOST_REQUIRE_EQUAL(lease.at("id").as_int64(), released);
  BOOST_REQUIRE_EQUAL(c.post(message_path(b, released, "release"),
                             json::object{{"lease_id", lease.at("lease_id")}}).status, 200);
  // A lease that ends (VisibilityTimeout 1): dead at the reaper's pass.
  f.ok("SendMessage", f.on(b, {{"MessageBody", "expires"}}));
  auto expired = std::stoll(std::string(f.receive_all(b, 1, 1).at(0).at("MessageId").as_string()));
  BOOST_REQUIRE(eventually([&] { return status_of(c, b, expired) == "dead"; }, 10));
  // Deaths of other kinds: stamped on a queue with a RedrivePolicy, not on one without.
  auto failed = fail_to_death(c, failing, "mail", "boom");
  auto unstamped = fail_to_death(c, plain, "mail", "boom");

  for (auto id : by_visibility) check_max_receive_death(c, a, id);
  check_max_receive_death(c, b, released);
  check_max_receive_death(c, b, expired);
  BOOST_TEST(str(c.get(message_path(failing, failed)).json(), "dead_reason") != "max_receive_count");

  CHECK_IDS(dead_ids(c, "dead_reason=max_receive_count"),
            {by_visibility[0], by_visibility[1], released, expired});
  CHECK_IDS(dead_ids(c, "dead_letter_queue=" + dlq_a), {by_visibility[0], by_visibility[1], failed});
  CHECK_IDS(dead_ids(c, "dead_letter_queue=" + dlq_b), {released, expired});
  CHECK_IDS(dead_ids(c, "dead_reason=max_receive_count&dead_letter_queue=" + dlq_a),
            {by_visibility[0], by_visibility[1]});
  CHECK_IDS(dead_ids(c, "dead_letter_queue=" + plain), {});
  CHECK_IDS(dead_ids(c, "queue=" + plain), {unstamped});
  BOOST_TEST(c.get("/dlq?dead_letter_queue=no%20such").status == 422);

  // Such deaths are an incident of their own: job type and title, no error class; one incident
  // across queues (a's two and b's two), whatever the death's way.
  auto incidents = c.get("/dlq/incidents?queue=" + a).json().at("incidents").as_array();
  BOOST_REQUIRE_EQUAL(incidents.size(), 1u);
  BOOST_TEST(str(incidents.at(0), "title") == "received 1 times without being deleted");
  BOOST_TEST(incidents.at(0).at("dead").as_int64() == 4);
  BOOST_TEST(incidents.at(0).at("error_class").is_null());

  // The batch previews select the same letters.
  const json::object filter_a{{"dead_letter_queue", dlq_a}};
  auto preview = c.post("/dlq/dismiss", json::object{{"filter", filter_a}, {"dry_run", true}});
  BOOST_REQUIRE_EQUAL(preview.status, 200);
  auto p = preview.json().as_object();
  BOOST_TEST(p.at("matched").as_int64() == 3);
  std::set<std::int64_t> sampled;
  for (const auto& m : p.at("sample").as_array()) sampled.insert(m.at("id").as_int64());
  CHECK_IDS(sampled, {by_visibility[0], by_visibility[1], failed});
  auto replay = c.post("/dlq/replay",
                       json::object{{"filter", json::object{{"dead_letter_queue", dlq_b},
                                                            {"dead_reason", "max_receive_count"}}},
                                    {"dry_run", true}});
  BOOST_REQUIRE_EQUAL(replay.status, 200);
  BOOST_TEST(replay.json().at("matched").as_int64() == 2);
  // The dismiss confirmed takes exactly the preview's letters.
  auto dismissed = c.post("/dlq/dismiss", json::object{{"filter", filter_a},
                                                       {"confirm_token", p.at("confirm_token")}});
  BOOST_REQUIRE_EQUAL(dismissed.status, 200);
  BOOST_TEST(dismissed.json().at("dismissed").as_int64() == 3);
  CHECK_IDS(dead_ids(c, "dead_letter_queue=" + dlq_a), {});
  CHECK_IDS(dead_ids(c, "dead_reason=max_receive_count"), {released, expired});
  BOOST_TEST(status_of(c, failing, failed) == "dismissed");
  BOOST_TEST(status_of(c, plain, unstamped) == "dead");
}

// Deleting a dead letter received through its DLQ is dismiss: a worker key's request is refused
// whole (403 AccessDenied, nothing dismissed, nothing acknowledged); an admin key's dismisses,
// audited `dismiss` with the reason `deleted through SQS`.
BOOST_AUTO_TEST_CASE(deleting_on_a_dlq_dismisses_and_needs_admin) {
  TempDir dir;
  DlqdProcess d(DlqdOptions(keyed_config(dir)));
  Front f(d.port());
  f.key = &kAdmin;
  HttpClient& c = f.c;  // dlq's own API is open: no auth.tokens
  const std::string src = fresh_queue("rdsrc"), dlq = fresh_queue("rddlq");
  f.redrive(src, dlq);
  auto dead = f.send_and_kill(src, 2);
  f.ok("SendMessage", f.on(dlq, {{"MessageBody", "its own"}}));

  // The worker receives the dead letters first, oldest death first; then the DLQ's own message.
  auto letters = f.receive_all(dlq, 2, 30, &kWorker);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& m = letters.at(i).as_object();
    BOOST_TEST(std::stoll(std::string(m.at("MessageId").as_string())) == dead[i]);
    BOOST_TEST(m.at("Body").as_string() == src + " #" + std::to_string(i));
    BOOST_TEST(m.at("Attributes").at("DeadLetterQueueSourceArn").as_string() == kArnPrefix + src);
    BOOST_TEST(m.at("Attributes").at("ApproximateReceiveCount").as_string() == "1");
  }
  auto own = f.receive_all(dlq, 1, 30, &kWorker).at(0).as_object();
  BOOST_TEST(own.at("Body").as_string() == "its own");
  BOOST_TEST(!own.at("Attributes").as_object().contains("DeadLetterQueueSourceArn"));
  auto own_id = std::stoll(std::string(own.at("MessageId").as_string()));
  const json::value h0 = letters.at(0).at("ReceiptHandle"), h1 = letters.at(1).at("ReceiptHandle");
  const json::value h_own = own.at("ReceiptHandle");

  auto one = f.call("DeleteMessage", f.on(dlq, {{"ReceiptHandle", h0}}), &kWorker);
  BOOST_TEST(one.status == 403, one.body);
  BOOST_TEST(type_of(one) == "com.amazonaws.sqs#AccessDenied");
  json::array entries{json::object{{"Id", "own"}, {"ReceiptHandle", h_own}},
                      json::object{{"Id", "d1"}, {"ReceiptHandle", h1}}};
  auto batch = f.call("DeleteMessageBatch", f.on(dlq, {{"Entries", entries}}), &kWorker);
  BOOST_TEST(batch.status == 403, batch.body);
  BOOST_TEST(type_of(batch) == "com.amazonaws.sqs#AccessDenied");
  BOOST_TEST(status_of(c, src, dead[0]) == "dead");
  BOOST_TEST(status_of(c, src, dead[1]) == "dead");
  BOOST_TEST(status_of(c, dlq, own_id) == "processing");
  CHECK_IDS(dead_ids(c, "dead_letter_queue=" + dlq), {dead[0], dead[1]});
  BOOST_TEST(c.get("/audit?action=dismiss").json().at("count").as_int64() == 0);

  // The admin key: the same requests dismiss the letters and acknowledge the DLQ's own message.
  f.ok("DeleteMessage", f.on(dlq, {{"ReceiptHandle", h0}}));
  auto out = f.ok("DeleteMessageBatch", f.on(dlq, {{"Entries", entries}}));
  BOOST_TEST(out.at("Successful").as_array().size() == 2u, json::serialize(out));
  BOOST_TEST(out.at("Failed").as_array().empty(), json::serialize(out));
  BOOST_TEST(status_of(c, src, dead[0]) == "dismissed");
  BOOST_TEST(status_of(c, src, dead[1]) == "dismissed");
  BOOST_TEST(status_of(c, dlq, own_id) == "succeeded");
  CHECK_IDS(dead_ids(c, "dead_letter_queue=" + dlq), {});
  auto audit = c.get("/audit?action=dismiss").json();
  BOOST_REQUIRE_EQUAL(audit.at("count").as_int64(), 2);
  std::set<std::int64_t> audited;
  std::set<std::string> actions;
  for (const auto& e : audit.at("entries").as_array()) {
    BOOST_TEST(str(e, "actor") == "admin");
    BOOST_TEST(str(e, "reason") == "deleted through SQS");
    BOOST_TEST(json::serialize(e.at("filter")) == json::serialize(json::object{{"dead_letter_queue", dlq}}));
    for (const auto& id : e.at("message_ids").as_array()) audited.insert(id.as_int64());
    actions.insert(str(e.at("details"), "sqs_action"));
  }
  CHECK_IDS(audited, {dead[0], dead[1]});
  // One entry per call, naming the call (a batch with one dead letter is still the batch).
  BOOST_CHECK_MESSAGE((actions == std::set<std::string>{"DeleteMessage", "DeleteMessageBatch"}),
                      "details.sqs_action: " << json::serialize(audit.at("entries")));
  // A handle whose letter is no longer dead: success, no change.
  f.ok("DeleteMessage", f.on(dlq, {{"ReceiptHandle", h0}}));
  BOOST_TEST(status_of(c, src, dead[0]) == "dismissed");
}

// StartMessageMoveTask refuses letters of a job type configured idempotent: false (naming it), and
// a DestinationArn that is not the one queue all the letters came from; a refusal starts no run.
BOOST_AUTO_TEST_CASE(move_tasks_refuse_unsafe_types_and_foreign_destinations) {
  DlqdProcess d(DlqdOptions(R"({"job_types": {"charge": {"idempotent": false}}})"));
  Front f(d.port());
  HttpClient& c = f.c;
  auto refused = [&](const json::object& body, const std::string& says) {
    auto r = f.call("StartMessageMoveTask", body);
    BOOST_TEST(r.status == 400, r.body);
    BOOST_TEST(type_of(r) == "com.amazonaws.sqs#InvalidParameterValue", r.body);
    BOOST_TEST(message_of(r).find(says) != std::string::npos, r.body);
    return message_of(r);
  };
  // No such queue; a queue no RedrivePolicy names; rates outside 1–500; a handle of nothing.
  auto unknown = f.call("StartMessageMoveTask", start_task(fresh_queue("rdnone"), 5));
  BOOST_TEST(unknown.status == 404, unknown.body);
  BOOST_TEST(type_of(unknown) == "com.amazonaws.sqs#ResourceNotFoundException");
  const std::string lone = fresh_queue("rdlone");
  f.ok("CreateQueue", {{"QueueName", lone}});
  refused(start_task(lone, 5), "Dead Letter Queue");
  BOOST_TEST(type_of(f.call("CancelMessageMoveTask", {{"TaskHandle", "bm90IGEgaGFuZGxl"}})) ==
             "com.amazonaws.sqs#ResourceNotFoundException");
  // Letters enqueued through dlq's API with their job types, dead through SQS.
  const std::string pay = fresh_queue("rdpay"), pay_dlq = fresh_queue("rdpaydlq");
  f.redrive(pay, pay_dlq);
  enqueue(c, pay, "charge", {{"job_type", "charge"}});
  enqueue(c, pay, "mail", {{"job_type", "mail"}});
  f.kill_all(pay, 2);
  refused(start_task(pay_dlq, 0), "MaxNumberOfMessagesPerSecond");
  refused(start_task(pay_dlq, 501), "MaxNumberOfMessagesPerSecond");
  auto why = refused(start_task(pay_dlq, 500), "charge");
  BOOST_TEST(why.find("mail") == std::string::npos, why);
  BOOST_TEST(tasks(f, pay_dlq).empty());
  BOOST_TEST(dead_ids(c, "dead_letter_queue=" + pay_dlq).size() == 2u);

  // Letters of two sources: no DestinationArn is the queue of them all.
  const std::string one = fresh_queue("rdone"), two = fresh_queue("rdtwo"), mixed = fresh_queue("rdmixed");
  f.redrive(one, mixed);
  f.redrive(two, mixed);
  f.send_and_kill(one, 1);
  f.send_and_kill(two, 1);
  for (const std::string& to : {kArnPrefix + one, kArnPrefix + two, kArnPrefix + mixed,
                                "arn:aws:sqs:us-east-1:123456789012:" + one}) {
    auto body = start_task(mixed, 500);
    body["DestinationArn"] = to;
    refused(body, "DestinationArn");
  }
  BOOST_TEST(tasks(f, mixed).empty());
  BOOST_TEST(c.get("/dlq/replays").json().at("count").as_int64() == 0);

  // One source: another queue is refused, its own accepted, and the task moves them home.
  const std::string three = fresh_queue("rdthree"), single = fresh_queue("rdsingle");
  f.redrive(three, single);
  auto moved = f.send_and_kill(three, 2);
  auto body = start_task(single, 500);
  body["DestinationArn"] = kArnPrefix + one;
  refused(body, "DestinationArn");
  body["DestinationArn"] = kArnPrefix + three;
  std::string handle(f.ok("StartMessageMoveTask", body).at("TaskHandle").as_string());
  auto audit = c.get("/audit?action=batch_replay").json().at("entries").at(0);
  BOOST_TEST(str(audit.at("details"), "task_handle") == handle);
  BOOST_TEST(json::serialize(audit.at("filter")) == json::serialize(json::object{{"dead_letter_queue", single}}));
  BOOST_REQUIRE(eventually([&] { return tasks(f, single).at(0).at("Status").as_string() == "COMPLETED"; }, 10));
  auto task = tasks(f, single).at(0).as_object();
  BOOST_TEST(task.at("DestinationArn").as_string() == kArnPrefix + three);
  BOOST_TEST(task.at("ApproximateNumberOfMessagesMoved").as_int64() == 2);
  BOOST_TEST(task.at("ApproximateNumberOfMessagesToMove").as_int64() == 2);
  for (auto id : moved) BOOST_TEST(status_of(c, three, id) == "pending");
  BOOST_TEST(dead_ids(c, "dead_letter_queue=" + mixed).size() == 2u);
}

// Two nodes on one PostgreSQL database: StartMessageMoveTask on both at once starts one task, the
// other refused ("There is already a task running"), each time; either node lists and cancels it.
BOOST_AUTO_TEST_CASE(one_active_task_across_two_nodes, *utf::precondition(on_postgresql)) {
  std::string db = create_pg_database("dlq_rdnodes");
  DlqdProcess a(DlqdOptions("{}", db));
  DlqdProcess b(DlqdOptions("{}", db));
  Front fa(a.port()), fb(b.port());
  const std::string src = fresh_queue("rdsrc"), dlq = fresh_queue("rddlq");
  fa.redrive(src, dlq);
  fa.send_and_kill(src, 8);  // at 1/s each round moves at most one or two
  const json::object start = start_task(dlq, 1);
  for (int round = 1; round <= 3; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      HttpResponse ra, rb;
      std::thread ta([&] { ra = fa.call("StartMessageMoveTask", start); });
      std::thread tb([&] { rb = fb.call("StartMessageMoveTask", start); });
      ta.join();
      tb.join();
      BOOST_REQUIRE_MESSAGE((ra.status == 200) + (rb.status == 200) == 1,
                            "A: " << ra.status << " " << ra.body << " B: " << rb.status << " " << rb.body);
      Front& won = ra.status == 200 ? fa : fb;
      Front& lost = ra.status == 200 ? fb : fa;
      const HttpResponse& no = ra.status == 200 ? rb : ra;
      BOOST_TEST(no.status == 400);
      BOOST_TEST(type_of(no) == "com.amazonaws.sqs#InvalidParameterValue");
      BOOST_TEST(message_of(no).find("There is already a task running") != std::string::npos, no.body);
      std::string handle(json::parse((ra.status == 200 ? ra : rb).body).at("TaskHandle").as_string());
      // Later, on either node: still one.
      auto again = lost.call("StartMessageMoveTask", start);
      BOOST_TEST(message_of(again).find("There is already a task running") != std::string::npos, again.body);
      auto listed = tasks(lost, dlq);
      BOOST_REQUIRE_EQUAL(listed.size(), static_cast<std::size_t>(round));
      BOOST_TEST(listed.at(0).at("Status").as_string() == "RUNNING");
      BOOST_TEST(listed.at(0).at("TaskHandle").as_string() == handle);
      lost.ok("CancelMessageMoveTask", {{"TaskHandle", handle}});
      BOOST_TEST(tasks(won, dlq).at(0).at("Status").as_string() == "CANCELLED");
    }
  }
  BOOST_TEST(fa.c.get("/audit?action=batch_replay_cancel").json().at("count").as_int64() == 3);
}

// A task at 1/s over three letters, its dlqd stopped after the first move: the next dlqd on the
// same database finishes the run; the letters are home with their MessageIds, receive count 1.
BOOST_AUTO_TEST_CASE(a_move_task_survives_a_restart) {
  TempDir dir;
  const std::string db = fresh_database_url(dir.path().string());
  const std::string src = fresh_queue("rdsrc"), dlq = fresh_queue("rddlq");
  std::vector<std::int64_t> dead;
  std::string run;
  {
    DlqdProcess d(DlqdOptions("{}", db));
    Front f(d.port());
    f.redrive(src, dlq);
    dead = f.send_and_kill(src, 3);
    f.ok("StartMessageMoveTask", start_task(dlq, 1));
    run = "/dlq/replays/" +
          std::to_string(f.c.get("/dlq/replays?limit=1").json().at("replays").at(0).at("replay_id").as_int64());
    long long replayed = 0;
    BOOST_REQUIRE(eventually([&] { return (replayed = f.c.get(run).json().at("replayed").as_int64()) >= 1; }, 10));
    BOOST_REQUIRE_LT(replayed, 3);
    BOOST_TEST(d.terminate() == 0);
  }
  DlqdProcess d(DlqdOptions("{}", db));
  Front f(d.port());
  BOOST_REQUIRE(eventually([&] { return str(f.c.get(run).json(), "status") == "done"; }, 20));
  auto progress = f.c.get(run).json();
  BOOST_TEST(progress.at("matched").as_int64() == 3);
  BOOST_TEST(progress.at("replayed").as_int64() == 3);
  auto task = tasks(f, dlq).at(0).as_object();
  BOOST_TEST(task.at("Status").as_string() == "COMPLETED");
  BOOST_TEST(task.at("ApproximateNumberOfMessagesMoved").as_int64() == 3);
  BOOST_TEST(!task.contains("TaskHandle"));
  for (auto id : dead) BOOST_TEST(status_of(f.c, src, id) == "pending");
  std::set<std::int64_t> back;
  for (const auto& m : f.receive_all(src, 3)) {
    back.insert(std::stoll(std::string(m.at("MessageId").as_string())));
    BOOST_TEST(m.at("Attributes").at("ApproximateReceiveCount").as_string() == "1");
  }
  CHECK_IDS(back, set_of(dead));
  CHECK_IDS(dead_ids(f.c, "dead_letter_queue=" + dlq), {});
}

// DeleteQueue of a DLQ is refused while dead letters are stamped with it, and changes nothing;
// once they are dismissed (deleted through the DLQ) it goes.
BOOST_AUTO_TEST_CASE(delete_queue_of_a_dlq_refused_while_it_holds_letters) {
  Front f(shared_dlqd().port());
  const std::string src = fresh_queue("rdsrc"), dlq = fresh_queue("rddlq");
  f.redrive(src, dlq);
  auto dead = f.send_and_kill(src, 1);
  auto r = f.call("DeleteQueue", f.on(dlq));
  BOOST_TEST(r.status == 400, r.body);
  BOOST_TEST(type_of(r) == "com.amazonaws.sqs#InvalidParameterValue");
  BOOST_TEST(message_of(r).find("1 dead letter") != std::string::npos, r.body);
  BOOST_TEST(f.call("GetQueueUrl", {{"QueueName", dlq}}).status == 200);
  BOOST_TEST(status_of(f.c, src, dead[0]) == "dead");
  auto attrs = f.ok("GetQueueAttributes", f.on(dlq, {{"AttributeNames", json::array{"ApproximateNumberOfMessages"}}}));
  BOOST_TEST(attrs.at("Attributes").at("ApproximateNumberOfMessages").as_string() == "1");

  // Received through the DLQ, it is hidden there (and still dead).
  auto letter = f.receive_all(dlq, 1).at(0);
  attrs = f.ok("GetQueueAttributes", f.on(dlq, {{"AttributeNames", json::array{"All"}}}));
  BOOST_TEST(attrs.at("Attributes").at("ApproximateNumberOfMessages").as_string() == "0");
  BOOST_TEST(attrs.at("Attributes").at("ApproximateNumberOfMessagesNotVisible").as_string() == "1");
  BOOST_TEST(status_of(f.c, src, dead[0]) == "dead");
  f.ok("DeleteMessage", f.on(dlq, {{"ReceiptHandle", letter.at("ReceiptHandle")}}));
  BOOST_TEST(status_of(f.c, src, dead[0]) == "dismissed");
  f.ok("DeleteQueue", f.on(dlq));
  BOOST_TEST(type_of(f.call("GetQueueUrl", {{"QueueName", dlq}})) == "com.amazonaws.sqs#QueueDoesNotExist");
}

// Through the query protocol (form in, XML out): `&`, `<`, `]]>`, quotes, CR, CRLF, TAB and
// U+10FFFF in a body and a String attribute come back byte for byte after an XML parser's line-end
// normalisation, with SQS's MD5s; the receipt handle goes back through the form.
BOOST_AUTO_TEST_CASE(query_protocol_xml_round_trips) {
  Front f(shared_dlqd().port());
  const std::string q = fresh_queue("rdxml");
  const std::string text = "a&b <c> ]]> \"q\" 'a' cr\rlf\ncrlf\r\ntab\t\xF4\x8F\xBF\xBF end";
  const std::string attr = "&<]]>\r\xF4\x8F\xBF\xBF";
  const std::string body_md5 = dlq::sqs::md5_hex(text);
  const std::string attrs_md5 = dlq::sqs::attributes_md5({{"note", "String", attr, std::nullopt}});

  auto created = query(f, {{"Action", "CreateQueue"}, {"QueueName", q}});
  BOOST_REQUIRE_MESSAGE(created.status == 200, created.body);
  BOOST_TEST(created.header("content-type").starts_with("text/xml"));
  BOOST_TEST(xml_element(created.body, "QueueUrl") == f.url(q));
  auto sent = query(f, {{"Action", "SendMessage"},
                        {"QueueUrl", f.url(q)},
                        {"MessageBody", text},
                        {"MessageAttribute.1.Name", "note"},
                        {"MessageAttribute.1.Value.DataType", "String"},
                        {"MessageAttribute.1.Value.StringValue", attr}});
  BOOST_REQUIRE_MESSAGE(sent.status == 200, sent.body);
  BOOST_TEST(xml_element(sent.body, "MD5OfMessageBody") == body_md5);
  BOOST_TEST(xml_element(sent.body, "MD5OfMessageAttributes") == attrs_md5);
  const std::string id = xml_element(sent.body, "MessageId");

  auto got = query(f, {{"Action", "ReceiveMessage"},
                       {"QueueUrl", f.url(q)},
                       {"AttributeName.1", "All"},
                       {"MessageAttributeName.1", "All"},
                       {"VisibilityTimeout", "30"},
                       {"WaitTimeSeconds", "5"}});
  BOOST_REQUIRE_MESSAGE(got.status == 200, got.body);
  const std::string& xml = got.body;
  BOOST_TEST(xml.find('\r') == std::string::npos);
  BOOST_TEST(xml.find("]]>") == std::string::npos);
  BOOST_TEST(xml.find("&#xD;") != std::string::npos);
  BOOST_TEST(xml_element(xml, "MessageId") == id);
  const std::string body = xml_element(xml, "Body");
  BOOST_TEST(body == text);
  BOOST_TEST(dlq::sqs::md5_hex(body) == body_md5);
  BOOST_TEST(xml_element(xml, "MD5OfBody") == body_md5);
  BOOST_TEST(xml_element(xml, "MD5OfMessageAttributes") == attrs_md5);
  const auto at = xml.find("<MessageAttribute>");
  BOOST_REQUIRE(at != std::string::npos);
  BOOST_TEST(xml_element(xml, "Name", at) == "note");
  BOOST_TEST(xml_element(xml, "StringValue", at) == attr);
  BOOST_TEST(xml_element(xml, "DataType", at) == "String");
  BOOST_TEST(dlq::sqs::attributes_md5({{xml_element(xml, "Name", at), xml_element(xml, "DataType", at),
                                        xml_element(xml, "StringValue", at), std::nullopt}}) == attrs_md5);

  auto deleted = query(f, {{"Action", "DeleteMessage"},
                           {"QueueUrl", f.url(q)},
                           {"ReceiptHandle", xml_element(xml, "ReceiptHandle")}});
  BOOST_TEST(deleted.status == 200, deleted.body);
  BOOST_TEST(deleted.body.find("<DeleteMessageResponse") != std::string::npos, deleted.body);
  BOOST_TEST(status_of(f.c, q, std::stoll(id)) == "succeeded");
}

BOOST_AUTO_TEST_SUITE_END()

// Issue 38, the SQS front (JSON 1.0 protocol) against the real dlqd, on the backend this run
// tests: who may run which action, refusals that change nothing, the registry's rules, and where
// the front meets dlq's own API (adoption, stored visibility, expiry, dead letters). The SDK's
// view is tests/sqs (node:test with @aws-sdk/client-sqs and sqs-consumer).
#include <sys/stat.h>

#include <csignal>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "core/sigv4.hpp"
#include "model/time.hpp"
#include "integration/server_fixture.hpp"
#include "support/temp_dir.hpp"

namespace json = boost::json;
using namespace dlq::test;

namespace sqs_front {

constexpr const char* kAccount = "000000000000";

struct Key {
  std::string name, id, secret, role;
};

// One key per role (the role is the key's name).
const std::vector<Key>& keys() {
  static const std::vector<Key> all = {
      {"producer", "AKIAPRODUCER00000001", "producer-secret/abc", "producer"},
      {"worker", "AKIAWORKER0000000001", "worker-secret/abc", "worker"},
      {"reader", "AKIAREADER0000000001", "reader-secret/abc", "reader"},
      {"admin", "AKIAADMIN00000000001", "admin-secret/abc", "admin"}};
  return all;
}

const Key& key(const std::string& role) {
  for (const auto& k : keys()) {
    if (k.role == role) return k;
  }
  throw std::logic_error("no key " + role);
}

void write_secret(const std::string& path, const std::string& secret, mode_t mode) {
  std::ofstream(path) << secret << "\n";
  ::chmod(path.c_str(), mode);
}

// A config with every key of keys(), their secrets written into `dir` (0600), plus `extra`
// members at the top level (`"auth": {...}`, without braces).
std::string keyed_config(const TempDir& dir, const std::string& extra = "") {
  json::array list;
  for (const auto& k : keys()) {
    std::string file = dir.file(k.name + ".secret");
    write_secret(file, k.secret, 0600);
    list.push_back(json::object{{"name", k.name},
                                {"access_key_id", k.id},
                                {"secret_file", file},
                                {"roles", json::array{json::value(k.role)}}});
  }
  std::string config = R"({"sqs": {"access_keys": )" + json::serialize(list) + "}";
  if (!extra.empty()) config += ", " + extra;
  return config + "}";
}

// POST / with X-Amz-Target, signed with `k` at `at` (unsigned without a key).
HttpResponse call(HttpClient& c, unsigned short port, const std::string& action,
                  const json::object& body, const Key* k = nullptr,
                  std::chrono::system_clock::time_point at = std::chrono::system_clock::now(),
                  const Headers& extra = {}) {
  std::string text = json::serialize(body);
  Headers headers = {{"host", "127.0.0.1:" + std::to_string(port)},
                     {"content-type", "application/x-amz-json-1.0"},
                     {"x-amz-target", "AmazonSQS." + action}};
  if (k) {
    dlq::core::sigv4::Request r{"POST", "/", "", &headers, text};
    auto added = dlq::core::sigv4::sign(r, k->id, k->secret, "us-east-1", "sqs", at);
    headers.insert(headers.end(), added.begin(), added.end());
  }
  headers.insert(headers.end(), extra.begin(), extra.end());
  return c.request("POST", "/", text, headers);
}

std::string type_of(const HttpResponse& r) {
  auto doc = json::parse(r.body);
  const auto* t = doc.as_object().if_contains("__type");
  return t ? std::string(t->as_string()) : "";
}

std::string url_of(unsigned short port, const std::string& queue) {
  return "http://127.0.0.1:" + std::to_string(port) + "/" + kAccount + "/" + queue;
}

json::object on(unsigned short port, const std::string& queue, json::object more = {}) {
  more["QueueUrl"] = url_of(port, queue);
  return more;
}

// The first message a ReceiveMessage answered (VisibilityTimeout `visibility`).
json::object receive_one(HttpClient& c, unsigned short port, const std::string& queue,
                         int visibility, const Key* k = nullptr) {
  auto r = call(c, port, "ReceiveMessage",
                on(port, queue,
                   {{"VisibilityTimeout", visibility},
                    {"WaitTimeSeconds", 5},
                    {"MessageSystemAttributeNames", json::array{"ApproximateReceiveCount"}}}),
                k);
  BOOST_REQUIRE_EQUAL(r.status, 200);
  auto doc = json::parse(r.body).as_object();
  BOOST_REQUIRE(doc.contains("Messages"));
  return doc.at("Messages").as_array().at(0).as_object();
}

}  // namespace sqs_front

BOOST_AUTO_TEST_SUITE(sqs)

using namespace sqs_front;

// docs/access.md's table: each action for each role, allowed or 403 AccessDenied; a refusal
// changes nothing.
BOOST_AUTO_TEST_CASE(actions_by_role) {
  TempDir dir;
  DlqdProcess d(DlqdOptions(keyed_config(dir)));
  HttpClient c(d.port());
  const auto port = d.port();
  const std::string q = fresh_queue("sqsroles");
  BOOST_REQUIRE_EQUAL(call(c, port, "CreateQueue", {{"QueueName", q}}, &key("admin")).status, 200);
  BOOST_REQUIRE_EQUAL(call(c, port, "SendMessage", on(port, q, {{"MessageBody", "seed"}}),
                           &key("producer")).status, 200);

  struct Case {
    std::string action;
    json::object body;
    std::set<std::string> allowed;  // besides admin
  };
  const std::set<std::string> anyone = {"producer", "worker", "reader"};
  const std::string arn = std::string("arn:aws:sqs:us-east-1:") + kAccount + ":" + q;
  std::vector<Case> cases = {
      {"SendMessage", on(port, q, {{"MessageBody", "m"}}), {"producer"}},
      {"SendMessageBatch", on(port, q, {{"Entries", json::array{json::object{{"Id", "a"}, {"MessageBody", "m"}}}}}), {"producer"}},
      {"ReceiveMessage", on(port, q, {{"VisibilityTimeout", 0}}), {"worker"}},
      {"ChangeMessageVisibility", on(port, q, {{"ReceiptHandle", "bm90IGEgaGFuZGxl"}, {"VisibilityTimeout", 1}}), {"worker"}},
      {"ChangeMessageVisibilityBatch", on(port, q, {{"Entries", json::array{json::object{{"Id", "a"}, {"ReceiptHandle", "bm90IGEgaGFuZGxl"}, {"VisibilityTimeout", 1}}}}}), {"worker"}},
      {"DeleteMessage", on(port, q, {{"ReceiptHandle", "bm90IGEgaGFuZGxl"}}), {"worker"}},
      {"DeleteMessageBatch", on(port, q, {{"Entries", json::array{json::object{{"Id", "a"}, {"ReceiptHandle", "bm90IGEgaGFuZGxl"}}}}}), {"worker"}},
      {"GetQueueUrl", {{"QueueName", q}}, anyone},
      {"GetQueueAttributes", on(port, q), anyone},
      {"CreateQueue", {{"QueueName", q}}, anyone},  // existing, matching attributes
      {"ListQueues", {}, {"reader"}},
      {"ListQueueTags", on(port, q), {"reader"}},
      {"ListDeadLetterSourceQueues", on(port, q), {"reader"}},
      {"CreateQueue", {{"QueueName", fresh_queue("sqsnew")}}, {}},
      {"SetQueueAttributes", on(port, q, {{"Attributes", json::object{{"DelaySeconds", "0"}}}}), {}},
      {"TagQueue", on(port, q, {{"Tags", json::object{{"team", "a"}}}}), {}},
      {"UntagQueue", on(port, q, {{"TagKeys", json::array{"other"}}}), {}},
      // Move tasks: q is no dead-letter queue and the handle none, so nothing starts or stops.
      {"ListMessageMoveTasks", {{"SourceArn", arn}}, {"reader"}},
      {"StartMessageMoveTask", {{"SourceArn", arn}}, {}},
      {"CancelMessageMoveTask", {{"TaskHandle", "bm90IGEgaGFuZGxl"}}, {}},
  };
  for (const auto& role : {"producer", "worker", "reader", "admin"}) {
    for (const auto& cs : cases) {
      auto r = call(c, port, cs.action, cs.body, &key(role));
      bool allowed = std::string(role) == "admin" || cs.allowed.contains(role);
      std::string what = cs.action + " as " + role + ": " + std::to_string(r.status) + " " + r.body;
      if (allowed) {
        BOOST_TEST(type_of(r) != "com.amazonaws.sqs#AccessDenied", what);
        BOOST_TEST(r.status != 403, what);
      } else {
        BOOST_TEST(r.status == 403, what);
        BOOST_TEST(type_of(r) == "com.amazonaws.sqs#AccessDenied", what);
        BOOST_TEST(r.header("x-amzn-query-error") == "AccessDenied;Sender", what);
      }
    }
  }
  // PurgeQueue and DeleteQueue last: admin only, and refused ones leave the messages.
  for (const auto& role : {"producer", "worker", "reader"}) {
    BOOST_TEST(call(c, port, "PurgeQueue", on(port, q), &key(role)).status == 403, role);
    BOOST_TEST(call(c, port, "DeleteQueue", on(port, q), &key(role)).status == 403, role);
  }
  auto attrs = call(c, port, "GetQueueAttributes",
                    on(port, q, {{"AttributeNames", json::array{"ApproximateNumberOfMessages"}}}),
                    &key("reader"));
  BOOST_TEST(attrs.body.find("\"ApproximateNumberOfMessages\":\"0\"") == std::string::npos,
             attrs.body);
  BOOST_TEST(call(c, port, "PurgeQueue", on(port, q), &key("admin")).status == 200);
  BOOST_TEST(call(c, port, "DeleteQueue", on(port, q), &key("admin")).status == 200);
}

// With keys: unsigned, unknown key, wrong secret, a clock 20 minutes off are refused (403, by
// their SQS names); 2 minutes off is accepted. A Bearer token is never 401 here.
BOOST_AUTO_TEST_CASE(signatures) {
  TempDir dir;
  DlqdProcess d(DlqdOptions(keyed_config(dir)));
  HttpClient c(d.port());
  const auto port = d.port();
  const auto now = std::chrono::system_clock::now();
  const json::object list;
  auto good = call(c, port, "ListQueues", list, &key("reader"));
  BOOST_TEST(good.status == 200, good.body);
  auto unsigned_call = call(c, port, "ListQueues", list);
  BOOST_TEST(unsigned_call.status == 403);
  BOOST_TEST(type_of(unsigned_call) == "com.amazonaws.sqs#MissingAuthenticationToken");
  Key unknown = key("reader");
  unknown.id = "AKIAUNKNOWN000000001";
  BOOST_TEST(type_of(call(c, port, "ListQueues", list, &unknown)) == "com.amazonaws.sqs#InvalidClientTokenId");
  Key wrong = key("reader");
  wrong.secret = "not-the-secret";
  BOOST_TEST(type_of(call(c, port, "ListQueues", list, &wrong)) == "com.amazonaws.sqs#SignatureDoesNotMatch");
  for (auto skew : {std::chrono::minutes(20), std::chrono::minutes(-20)}) {
    auto r = call(c, port, "ListQueues", list, &key("reader"), now + skew);
    BOOST_TEST(r.status == 403);
    BOOST_TEST(type_of(r) == "com.amazonaws.sqs#SignatureDoesNotMatch");
  }
  BOOST_TEST(call(c, port, "ListQueues", list, &key("reader"), now - std::chrono::minutes(2)).status == 200);
  auto bearer = call(c, port, "ListQueues", list, nullptr, now, {{"authorization", "Bearer abc"}});
  BOOST_TEST(bearer.status == 403);
  // The secrets appear nowhere the server writes.
  for (const auto& k : keys()) BOOST_TEST(d.log().find(k.secret) == std::string::npos, k.name);
}

// Tokens without keys: the front answers every request 403 AccessDenied naming sqs.access_keys,
// and a Bearer token does not open it.
BOOST_AUTO_TEST_CASE(tokens_without_keys_refuse_the_front) {
  std::string hash = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), "tok\n").out.substr(0, 64);
  DlqdProcess d(DlqdOptions(R"({"auth": {"tokens": [{"name": "ops", "token_sha256": ")" + hash +
                            R"(", "roles": ["admin"]}]}})"));
  HttpClient c(d.port());
  auto r = call(c, d.port(), "ListQueues", {}, nullptr, std::chrono::system_clock::now(),
                {{"authorization", "Bearer tok"}});
  BOOST_TEST(r.status == 403);
  BOOST_TEST(type_of(r) == "com.amazonaws.sqs#AccessDenied");
  BOOST_TEST(r.body.find("sqs.access_keys") != std::string::npos, r.body);
}

// Anonymous (no keys, no tokens): a foreign Host or a cross-site Origin is refused in SQS's shape
// and creates nothing.
BOOST_AUTO_TEST_CASE(host_and_origin_refusals_change_nothing) {
  HttpClient c(shared_dlqd().port());
  const auto port = shared_dlqd().port();
  std::string q = fresh_queue("sqsguard");
  auto foreign = c.request("POST", "/", json::serialize(json::object{{"QueueName", q}}),
                           {{"host", "evil.example.com"},
                            {"content-type", "application/x-amz-json-1.0"},
                            {"x-amz-target", "AmazonSQS.CreateQueue"}});
  BOOST_TEST(foreign.status == 403);
  BOOST_TEST(type_of(foreign) == "com.amazonaws.sqs#AccessDenied");
  auto cross = call(c, port, "CreateQueue", {{"QueueName", q}}, nullptr,
                    std::chrono::system_clock::now(), {{"origin", "https://evil.example.com"}});
  BOOST_TEST(cross.status == 403);
  BOOST_TEST(type_of(cross) == "com.amazonaws.sqs#AccessDenied");
  auto lookup = call(c, port, "GetQueueUrl", {{"QueueName", q}});
  BOOST_TEST(lookup.status == 400);
  BOOST_TEST(type_of(lookup) == "com.amazonaws.sqs#QueueDoesNotExist");
  BOOST_TEST(lookup.header("x-amzn-query-error") == "AWS.SimpleQueueService.NonExistentQueue;Sender");
}

BOOST_AUTO_TEST_CASE(queue_names_follow_dlq_rules) {
  HttpClient c(shared_dlqd().port());
  const auto port = shared_dlqd().port();
  for (const std::string& name : {std::string(65, 'a'), std::string("jobs.fifo"), std::string("a b")}) {
    auto r = call(c, port, "CreateQueue", {{"QueueName", name}});
    BOOST_TEST(r.status == 400, name);
    BOOST_TEST(type_of(r) == "com.amazonaws.sqs#InvalidParameterValue", name);
  }
  BOOST_TEST(call(c, port, "CreateQueue", {{"QueueName", std::string(64, 'a')}}).status == 200);
  // Re-creating with a different value is QueueNameExists; with the same, the same URL.
  std::string q = fresh_queue("sqsrecreate");
  json::object vt{{"QueueName", q}, {"Attributes", json::object{{"VisibilityTimeout", "40"}}}};
  BOOST_TEST(call(c, port, "CreateQueue", vt).status == 200);
  BOOST_TEST(call(c, port, "CreateQueue", vt).status == 200);
  vt["Attributes"] = json::object{{"VisibilityTimeout", "41"}};
  BOOST_TEST(type_of(call(c, port, "CreateQueue", vt)) == "com.amazonaws.sqs#QueueNameExists");
  // A queue URL with another account is no queue of this server; a path outside the account is
  // dlq's own 404.
  auto other = call(c, port, "GetQueueAttributes",
                    {{"QueueUrl", "http://127.0.0.1/123456789012/" + q}});
  BOOST_TEST(type_of(other) == "com.amazonaws.sqs#QueueDoesNotExist");
  auto outside = c.request("POST", "/queues/" + q, "{}",
                           {{"content-type", "application/x-amz-json-1.0"},
                            {"x-amz-target", "AmazonSQS.ListQueues"}});
  BOOST_TEST(outside.status == 404);
  auto at_path = c.request("POST", std::string("/") + kAccount + "/" + q, "{}",
                           {{"content-type", "application/x-amz-json-1.0"},
                            {"x-amz-target", "AmazonSQS.GetQueueAttributes"}});
  BOOST_TEST(at_path.status == 200, at_path.body);
}

// A queue used only through dlq's API is no SQS queue until CreateQueue adopts it, messages and
// all; dlq's API keeps working on it.
BOOST_AUTO_TEST_CASE(create_queue_adopts_a_dlq_queue) {
  HttpClient c(shared_dlqd().port());
  const auto port = shared_dlqd().port();
  std::string q = fresh_queue("sqsadopt");
  BOOST_REQUIRE_EQUAL(c.post("/queues/" + q + "/messages", json::object{{"payload", "old"}}).status, 201);
  BOOST_TEST(type_of(call(c, port, "SendMessage", on(port, q, {{"MessageBody", "x"}}))) ==
             "com.amazonaws.sqs#QueueDoesNotExist");
  BOOST_REQUIRE_EQUAL(call(c, port, "CreateQueue", {{"QueueName", q}}).status, 200);
  auto m = receive_one(c, port, q, 30);
  BOOST_TEST(m.at("Body").as_string() == "old");
}

// A stored VisibilityTimeout is the lease of dlq's own claims too (over the config's); DelaySeconds
// and ReceiveMessageWaitTimeSeconds apply to SQS actions only.
BOOST_AUTO_TEST_CASE(stored_visibility_reaches_dlq_claims) {
  std::string q = fresh_queue("sqsvis");
  DlqdProcess d(DlqdOptions(R"({"queues": {")" + q + R"(": {"visibility_timeout": 10}}})"));
  HttpClient c(d.port());
  const auto port = d.port();
  json::object create{{"QueueName", q},
                      {"Attributes", json::object{{"VisibilityTimeout", "100"},
                                                  {"DelaySeconds", "900"},
                                                  {"ReceiveMessageWaitTimeSeconds", "20"}}}};
  BOOST_REQUIRE_EQUAL(call(c, port, "CreateQueue", create).status, 200);
  BOOST_REQUIRE_EQUAL(c.post("/queues/" + q + "/messages", json::object{{"payload", "p"}}).status, 201);
  // No delay and no wait for dlq's own enqueue and claim; the lease is 100 s, not the config's 10.
  auto lease = claim_one(c, q);
  auto expires = dlq::parse_timestamp(std::string(lease.at("lease_expires_at").as_string()));
  auto claimed = dlq::parse_timestamp(std::string(lease.at("last_attempt_at").as_string()));
  BOOST_REQUIRE(expires && claimed);
  BOOST_TEST(*expires - *claimed == 100000);
}

// On an SQS queue an expired lease makes the message visible again at once, however often: no
// backoff and no death from max_lease_expiries; ApproximateReceiveCount counts every receive.
BOOST_AUTO_TEST_CASE(five_expiries_without_death) {
  HttpClient c(shared_dlqd().port());
  const auto port = shared_dlqd().port();
  std::string q = fresh_queue("sqsexpire");
  BOOST_REQUIRE_EQUAL(call(c, port, "CreateQueue", {{"QueueName", q}}).status, 200);
  BOOST_REQUIRE_EQUAL(call(c, port, "SendMessage", on(port, q, {{"MessageBody", "again"}})).status, 200);
  for (int n = 1; n <= 6; ++n) {
    auto m = receive_one(c, port, q, 1);
    BOOST_TEST(m.at("Attributes").at("ApproximateReceiveCount").as_string() == std::to_string(n));
  }
  auto dead = c.get("/dlq?queue=" + q);
  BOOST_TEST(dead.body.find("\"id\"") == std::string::npos, dead.body);
}

// DeleteQueue refuses while the queue holds a dead letter (made by dlq's own fail), and leaves it.
BOOST_AUTO_TEST_CASE(delete_queue_refuses_dead_letters) {
  HttpClient c(shared_dlqd().port());
  const auto port = shared_dlqd().port();
  std::string q = fresh_queue("sqsdead");
  BOOST_REQUIRE_EQUAL(call(c, port, "CreateQueue", {{"QueueName", q}}).status, 200);
  BOOST_REQUIRE_EQUAL(c.post("/queues/" + q + "/messages", json::object{{"payload", "p"}}).status, 201);
  auto id = claim_one(c, q).at("id").as_int64();
  BOOST_REQUIRE_EQUAL(c.post(message_path(q, id, "fail"),
                             json::object{{"error", "boom"}, {"retryable", false}}).status, 200);
  auto r = call(c, port, "DeleteQueue", on(port, q));
  BOOST_TEST(r.status == 400);
  BOOST_TEST(type_of(r) == "com.amazonaws.sqs#InvalidParameterValue");
  BOOST_TEST(r.body.find("1 dead letter") != std::string::npos, r.body);
  BOOST_TEST(call(c, port, "GetQueueUrl", {{"QueueName", q}}).status == 200);
  BOOST_TEST(c.get(message_path(q, id)).status == 200);
}

// A 0644 secret file, or a wildcard listen without sqs.public_url, stops dlqd at start (exit 2,
// naming the key); the secret is not in the output.
BOOST_AUTO_TEST_CASE(config_errors_at_start) {
  TempDir dir;
  std::string file = dir.file("open.secret");
  write_secret(file, "top-secret-value", 0644);
  std::string config = dir.file("c.json");
  std::ofstream(config) << R"({"sqs": {"access_keys": [{"name": "k", "access_key_id": "AKIAOPEN000000000001", "secret_file": ")"
                        << file << R"(", "roles": ["admin"]}]}})";
  auto open = run_dlqd({"--config", config, "--check-config"});
  BOOST_TEST(open.exit_code == 2);
  BOOST_TEST((open.out + open.err).find("secret_file") != std::string::npos, open.err);
  BOOST_TEST((open.out + open.err).find("top-secret-value") == std::string::npos);
  std::string wildcard = dir.file("w.json");
  std::ofstream(wildcard) << R"({"listen": "0.0.0.0:0", "auth": {"allow_anonymous": true}})";
  auto bare = run_dlqd({"--config", wildcard, "--check-config"});
  BOOST_TEST(bare.exit_code == 2);
  BOOST_TEST((bare.out + bare.err).find("sqs.public_url") != std::string::npos, bare.err);
}

// SIGHUP reloads keys with their secrets: a rotated secret takes over; a 0644 secret or a config
// without keys keeps the old ones (and logs why); the secrets are in no output.
BOOST_AUTO_TEST_CASE(reloads_keep_or_rotate_keys) {
  TempDir dir;
  DlqdProcess d(DlqdOptions(keyed_config(dir)));
  HttpClient c(d.port());
  const auto port = d.port();
  const Key& reader = key("reader");
  auto lists = [&](const Key& k) { return call(c, port, "ListQueues", {}, &k).status == 200; };
  BOOST_REQUIRE(lists(reader));
  auto reload = [&](const std::string& config) {
    auto before = d.log().size();
    d.rewrite_config(config);
    d.signal(SIGHUP);
    BOOST_REQUIRE(eventually([&] {
      auto log = d.log().substr(before);
      return log.find("access tokens reloaded") != std::string::npos ||
             log.find("SIGHUP:") != std::string::npos;
    }, 10));
    return d.log().substr(before);
  };
  // A secret readable by others: refused, the old key still signs.
  write_secret(dir.file("reader.secret"), "rotated-secret/xyz", 0644);
  std::string config = R"({"sqs": {"access_keys": [{"name": "reader", "access_key_id": ")" +
                       reader.id + R"(", "secret_file": ")" + dir.file("reader.secret") +
                       R"(", "roles": ["reader"]}]}})";
  auto refused = reload(config);
  BOOST_TEST(refused.find("keeping the old") != std::string::npos, refused);
  BOOST_TEST(lists(reader));
  // The same file made private: the rotated secret signs, the old one no longer does.
  ::chmod(dir.file("reader.secret").c_str(), 0600);
  reload(config);
  Key rotated = reader;
  rotated.secret = "rotated-secret/xyz";
  BOOST_TEST(lists(rotated));
  BOOST_TEST(!lists(reader));
  // No keys at all: kept.
  auto emptied = reload("{}");
  BOOST_TEST(emptied.find("no sqs.access_keys") != std::string::npos, emptied);
  BOOST_TEST(lists(rotated));
  for (const std::string secret : {"rotated-secret/xyz", "reader-secret/abc"}) {
    BOOST_TEST(d.log().find(secret) == std::string::npos, secret);
  }
}

// A key's name may not be a token's too: it is the actor either way.
BOOST_AUTO_TEST_CASE(key_and_token_names_are_one_namespace) {
  TempDir dir;
  std::string hash = run_dlqd({"hash-token"}, {}, std::chrono::seconds(20), "tok\n").out.substr(0, 64);
  std::string config = dir.file("c.json");
  std::ofstream(config) << keyed_config(dir, R"("auth": {"tokens": [{"name": "admin", "token_sha256": ")" +
                                                 hash + R"(", "roles": ["admin"]}]})");
  auto r = run_dlqd({"--config", config, "--check-config"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST((r.out + r.err).find("\"admin\"") != std::string::npos, r.err);
  for (const auto& k : keys()) BOOST_TEST((r.out + r.err).find(k.secret) == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// Issue 31, hostile input round two: what an adversary found on the operator's side after the
// first round (issue 16). Each section below is one group of the issue's items; each keeps its
// helpers in a namespace of its own and its cases in a suite of its own. Raw sockets where the
// bytes matter, the real dlqd throughout, both databases where the store is involved.
#include <boost/test/unit_test.hpp>

#include "integration/hostile_support.hpp"
#include "integration/server_fixture.hpp"

namespace json = boost::json;
using namespace dlq::test;

// ---------------------------------------------------------------------------------------------
// Items 1, 2 and 14: the method label, Host and Origin, two Authorization headers.
// ---------------------------------------------------------------------------------------------

// (end of items 1, 2 and 14)

// ---------------------------------------------------------------------------------------------
// Item 3: slow readers of /dlq, batch claims and /audit.
// ---------------------------------------------------------------------------------------------

#include <algorithm>
#include <chrono>
#include <thread>

namespace round2_pages {

using std::chrono::milliseconds;

constexpr std::size_t kDeadPayloadBytes = 256 * 1024;   // limits.max_payload_bytes
constexpr std::size_t kClaimPayloadBytes = 128 * 1024;
constexpr int kStalledPageReaders = 30;
constexpr int kStalledAuditReaders = 10;
constexpr int kStalledClaims = 5;

// "GET <target>" as a raw request (a loopback Host, which every Host rule accepts).
std::string raw_get(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

std::string raw_post(const std::string& target, const std::string& body) {
  return "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// `n` messages of `queue` with payloads of `bytes` (a letter per message), each failed once with
// max_retries 1: their ids, dead, in id order.
std::vector<std::int64_t> make_large_dead(HttpClient& c, const std::string& queue, int n,
                                          std::size_t bytes) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < n; ++i) {
    std::string payload(bytes, static_cast<char>('a' + i % 26));
    ids.push_back(enqueue(c, queue, payload, {{"max_retries", 1}}).at("id").as_int64());
    auto m = claim_one(c, queue);
    auto failed = c.post(message_path(queue, m.at("id").as_int64(), "fail"),
                         json::object{{"lease_id", m.at("lease_id")}, {"error", "boom"}});
    BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
  }
  return ids;
}

// The body of the first answer in `raw`, chunked or with a length; "" when it is incomplete.
std::string answer_body(const std::string& raw) {
  auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return "";
  std::string head = raw.substr(0, head_end);
  std::size_t at = head_end + 4;
  if (head.find("Transfer-Encoding: chunked") == std::string::npos &&
      head.find("transfer-encoding: chunked") == std::string::npos) {
    return raw.substr(at);
  }
  std::string body;
  for (;;) {
    auto line_end = raw.find("\r\n", at);
    if (line_end == std::string::npos) return "";
    std::size_t size = std::stoul(raw.substr(at, line_end - at), nullptr, 16);
    if (size == 0) return body;
    if (line_end + 2 + size > raw.size()) return "";
    body.append(raw, line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
}

// Opens `count` connections whose receive buffer holds 4 KiB, each sending `request` and then
// reading nothing.
std::vector<std::unique_ptr<RawConnection>> stalled(unsigned short port, int count,
                                                    const std::string& request) {
  std::vector<std::unique_ptr<RawConnection>> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(std::make_unique<RawConnection>(port, 4096));
    BOOST_REQUIRE(out.back()->send(request));
  }
  return out;
}

// Pages `path` (with `after_id`) `limit` at a time to its end: each item's id, checking `count`
// against the items written on every page.
std::vector<std::int64_t> page_through(HttpClient& c, const std::string& path,
                                       const std::string& items, int limit) {
  std::vector<std::int64_t> seen;
  std::string after;
  for (;;) {
    auto res = c.get(path + "?limit=" + std::to_string(limit) + after);
    BOOST_REQUIRE_EQUAL(res.status, 200);
    auto body = res.json().as_object();
    const auto& list = body.at(items).as_array();
    BOOST_TEST(body.at("count").as_int64() == static_cast<std::int64_t>(list.size()));
    for (const auto& item : list) seen.push_back(item.at("id").as_int64());
    if (body.at("next_after_id").is_null()) return seen;
    after = "&after_id=" + std::to_string(body.at("next_after_id").as_int64());
  }
}

}  // namespace round2_pages

BOOST_AUTO_TEST_SUITE(hostile_round2_pages)

// 101 dead messages of 256 KiB: a /dlq page of 100 is 25 MiB of messages. Thirty clients that
// ask for it and read nothing used to pin it each (22 MB a connection); now each holds the page's
// ids, the first 256 KiB of its answer and one message.
BOOST_AUTO_TEST_CASE(stalled_readers_of_dlq_pin_no_pages) {
  using namespace round2_pages;
  DlqdProcess server(DlqdOptions(R"({"limits": {"write_timeout_seconds": 60}})"));
  HttpClient c(server.port());
  std::string q = fresh_queue("pages");
  auto ids = make_large_dead(c, q, 101, kDeadPayloadBytes);

  // A reader that reads: the whole page, streamed, complete and in id order.
  auto whole = c.get("/dlq?limit=100");
  BOOST_REQUIRE_EQUAL(whole.status, 200);
  BOOST_TEST(whole.header("transfer-encoding") == "chunked");
  auto page = whole.json().as_object();
  BOOST_TEST(page.at("count").as_int64() == 100);
  BOOST_TEST(page.at("next_after_id").as_int64() == ids.at(99));
  for (std::size_t i = 0; i < 100; ++i) {
    const auto& m = page.at("messages").as_array().at(i);
    BOOST_TEST(m.at("id").as_int64() == ids.at(i));
    BOOST_TEST(m.at("payload").as_string().size() == kDeadPayloadBytes);
  }
  page = json::object();

  long before = resident_mib(server.pid());
  {
    auto readers = stalled(server.port(), kStalledPageReaders, raw_get("/dlq?limit=100"));
    std::this_thread::sleep_for(milliseconds(3000));
    long grown = resident_mib(server.pid()) - before;
    BOOST_TEST_MESSAGE("/dlq: 30 stalled readers grew RSS by " << grown << " MiB");
    if (!kSanitized) BOOST_TEST(grown <= 2 * kStalledPageReaders);
    // One that reads on after all gets its page whole.
    readers.front()->read(1500);
    auto late = json::parse(answer_body(readers.front()->received())).as_object();
    BOOST_TEST(late.at("count").as_int64() == 100);
    BOOST_TEST(late.at("messages").as_array().back().at("id").as_int64() == ids.at(99));
  }
  BOOST_TEST(healthy(server.port()));
  // Paging on: every dead message once, in order.
  BOOST_TEST(page_through(c, "/dlq", "messages", 7) == ids, boost::test_tools::per_element());
}

// Each replay with an edited payload writes an audit entry holding both payloads (512 KiB): ten
// clients asking for a page of 40 of them (20 MiB) and reading nothing used to pin it each.
BOOST_AUTO_TEST_CASE(stalled_readers_of_audit_pin_no_pages) {
  using namespace round2_pages;
  DlqdProcess server(DlqdOptions(R"({"limits": {"write_timeout_seconds": 60}})"));
  HttpClient c(server.port());
  std::string q = fresh_queue("auditpages");
  auto ids = make_large_dead(c, q, 40, kDeadPayloadBytes);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::string edited(kDeadPayloadBytes, static_cast<char>('A' + i % 26));
    auto res = c.post(message_path(q, ids[i], "replay"), json::object{{"payload", edited}});
    BOOST_REQUIRE_EQUAL(res.status, 200);
  }
  auto audit_ids = page_through(c, "/audit", "entries", 9);
  BOOST_REQUIRE_EQUAL(audit_ids.size(), ids.size());
  BOOST_TEST(std::is_sorted(audit_ids.rbegin(), audit_ids.rend()));  // newest first

  long before = resident_mib(server.pid());
  {
    auto readers = stalled(server.port(), kStalledAuditReaders, raw_get("/audit?limit=100"));
    std::this_thread::sleep_for(milliseconds(3000));
    long grown = resident_mib(server.pid()) - before;
    BOOST_TEST_MESSAGE("/audit: 10 stalled readers grew RSS by " << grown << " MiB");
    if (!kSanitized) BOOST_TEST(grown <= 2 * kStalledAuditReaders);
    readers.front()->read(1500);
    auto late = json::parse(answer_body(readers.front()->received())).as_object();
    BOOST_TEST(late.at("count").as_int64() == 40);
  }
  BOOST_TEST(healthy(server.port()));
  auto again = page_through(c, "/audit", "entries", 100);
  BOOST_TEST(again == audit_ids, boost::test_tools::per_element());
}

// Five workers each claim 100 messages of 128 KiB (12.5 MiB) and read nothing: each answer keeps
// at most 256 KiB of payloads and reads the rest again by id as its turn comes.
BOOST_AUTO_TEST_CASE(stalled_batch_claims_keep_at_most_256_kib_of_payloads) {
  using namespace round2_pages;
  DlqdProcess server(DlqdOptions(R"({"limits": {"write_timeout_seconds": 60}})"));
  HttpClient c(server.port());
  std::string q = fresh_queue("claims");
  std::vector<std::int64_t> ids;
  for (int batch = 0; batch < 86; ++batch) {  // 602 messages, seven to a body of under 1 MiB
    json::array messages;
    for (int i = 0; i < 7; ++i) {
      messages.push_back(json::object{
          {"payload", std::string(kClaimPayloadBytes, static_cast<char>('a' + (batch + i) % 26))}});
    }
    auto res = c.post("/queues/" + q + "/messages/batch", json::object{{"messages", messages}});
    BOOST_REQUIRE_EQUAL(res.status, 201);
    auto stored = res.json();
    for (const auto& m : stored.at("messages").as_array()) ids.push_back(m.at("id").as_int64());
  }

  // A worker that reads gets its whole batch, in claim order, every payload complete.
  auto first = claim(c, q, {{"max", 100}});
  BOOST_REQUIRE_EQUAL(first.status, 200);
  auto first_body = first.json();
  const auto& claimed = first_body.at("messages").as_array();
  BOOST_REQUIRE_EQUAL(claimed.size(), 100u);
  for (std::size_t i = 0; i < claimed.size(); ++i) {
    BOOST_TEST(claimed[i].at("id").as_int64() == ids.at(i));
    BOOST_TEST(claimed[i].at("payload").as_string().size() == kClaimPayloadBytes);
    BOOST_TEST(!claimed[i].at("lease_id").as_string().empty());
  }

  long before = resident_mib(server.pid());
  {
    auto workers = stalled(server.port(), kStalledClaims,
                           raw_post("/queues/" + q + "/claim", R"({"max": 100})"));
    std::this_thread::sleep_for(milliseconds(3000));
    long grown = resident_mib(server.pid()) - before;
    BOOST_TEST_MESSAGE("5 stalled batch claims grew RSS by " << grown << " MiB");
    if (!kSanitized) BOOST_TEST(grown <= 2 * kStalledClaims);
    // A worker that reads on after all gets its whole batch, in claim order, payloads complete:
    // those past the first 256 KiB were read again by id.
    workers.front()->read(1500);
    BOOST_REQUIRE_EQUAL(status_line(workers.front()->received()), "HTTP/1.1 200 OK");
    auto late = json::parse(answer_body(workers.front()->received())).as_object();
    BOOST_TEST(late.at("claimed").as_bool());
    const auto& batch = late.at("messages").as_array();
    BOOST_REQUIRE_EQUAL(batch.size(), 100u);
    for (std::size_t i = 1; i < batch.size(); ++i) {
      BOOST_TEST(batch[i].at("id").as_int64() > batch[i - 1].at("id").as_int64());
      BOOST_TEST(batch[i].at("payload").as_string().size() == kClaimPayloadBytes);
    }
  }
  BOOST_TEST(healthy(server.port()));
  // The last two messages are still there for a worker that reads (the stalled five took 500).
  auto rest = claim(c, q, {{"max", 100}});
  BOOST_REQUIRE_EQUAL(rest.status, 200);
  auto rest_body = rest.json();
  BOOST_TEST(rest_body.at("messages").as_array().size() == 2u);
}

// A page is fixed by its ids when the request is served; a message that leaves the dead set
// before its turn to be written is left out, `count` says how many were written, and
// `next_after_id` still continues after the page as fixed.
BOOST_AUTO_TEST_CASE(a_message_that_left_the_dead_set_before_its_turn_is_left_out) {
  using namespace round2_pages;
  DlqdProcess server(DlqdOptions(R"({"limits": {"write_timeout_seconds": 60}})"));
  HttpClient c(server.port());
  std::string q = fresh_queue("leftout");
  auto ids = make_large_dead(c, q, 41, kDeadPayloadBytes);

  // The client asks for a page of 40 (10 MiB) and reads nothing for now: the server has written
  // what the socket buffers hold, far from the 31st message.
  RawConnection slow(server.port(), 4096);
  BOOST_REQUIRE(slow.send(raw_get("/dlq?queue=" + q + "&limit=40")));
  std::this_thread::sleep_for(milliseconds(1000));
  auto dismissed = c.post(message_path(q, ids.at(30), "dismiss"));
  BOOST_REQUIRE_EQUAL(dismissed.status, 200);
  auto replayed = c.post(message_path(q, ids.at(31), "replay"));
  BOOST_REQUIRE_EQUAL(replayed.status, 200);

  slow.read(1500);
  BOOST_REQUIRE_EQUAL(status_line(slow.received()), "HTTP/1.1 200 OK");
  auto body = json::parse(answer_body(slow.received())).as_object();
  std::vector<std::int64_t> written;
  for (const auto& m : body.at("messages").as_array()) written.push_back(m.at("id").as_int64());
  std::vector<std::int64_t> expected(ids.begin(), ids.begin() + 40);
  expected.erase(expected.begin() + 30, expected.begin() + 32);
  BOOST_TEST(written == expected, boost::test_tools::per_element());
  BOOST_TEST(body.at("count").as_int64() == 38);
  BOOST_TEST(body.at("next_after_id").as_int64() == ids.at(39));
}

BOOST_AUTO_TEST_SUITE_END()

// (end of item 3)

// ---------------------------------------------------------------------------------------------
// Item 5: folded releases and paged attempts.
// ---------------------------------------------------------------------------------------------

// (end of item 5)

// ---------------------------------------------------------------------------------------------
// Items 6 and 15: the number of queues and of previews.
// ---------------------------------------------------------------------------------------------

// (end of items 6 and 15)

// ---------------------------------------------------------------------------------------------
// Items 7 to 11: signals at start-up, reloads, logs and file modes.
// ---------------------------------------------------------------------------------------------

// (end of items 7 to 11)

// ---------------------------------------------------------------------------------------------
// Items 12 and 13: what the server returns for the UI and dlqctl to show (redaction).
// ---------------------------------------------------------------------------------------------

// (end of items 12 and 13)

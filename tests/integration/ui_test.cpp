// The admin UI's files and its chart route over real HTTP, on both databases: /ui answers 308 to
// /ui/; every file of ui/ is served byte for byte with its exact type, the UI's Content-Security-
// Policy and nosniff, to callers without a token; names outside the flat folder are never looked
// up; ui.dir serves a folder at run time. GET /dlq/hourly counts every death in its hour, keeps
// counting replayed ones, and validates its parameters.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "integration/server_fixture.hpp"

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace dlq::test;

namespace {

const std::string kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string type_of(const std::string& name) {
  const std::pair<const char*, const char*> types[] = {
      {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
      {".png", "image/png"},                 {".ico", "image/x-icon"},
      {".json", "application/json"},         {".txt", "text/plain; charset=utf-8"}};
  for (const auto& [ext, type] : types) {
    if (name.ends_with(ext)) return type;
  }
  return "";
}


}  // namespace

BOOST_AUTO_TEST_SUITE(ui)

BOOST_AUTO_TEST_CASE(ui_redirects_to_the_folder) {
  HttpClient c(shared_dlqd().port());
  auto res = c.get("/ui");
  BOOST_TEST(res.status == 308);
  BOOST_TEST(res.header("location") == "/ui/");
  BOOST_TEST(c.get("/ui?x=1").status == 308);
}

BOOST_AUTO_TEST_CASE(every_file_is_served_exactly_with_its_type_and_policy) {
  HttpClient c(shared_dlqd().port());
  fs::path dir = fs::path(DLQ_SOURCE_DIR) / "ui";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    BOOST_TEST_REQUIRE(!type_of(name).empty(), name << ": a type the UI does not serve");
    auto res = c.get("/ui/" + name);
    BOOST_TEST(res.status == 200, name);
    BOOST_TEST(res.header("content-type") == type_of(name), name);
    BOOST_TEST(res.header("x-content-type-options") == "nosniff", name);
    BOOST_TEST(res.header("content-security-policy") == kPolicy, name);
    BOOST_TEST((res.body == slurp(entry.path())), name << ": not the file in the tree");
    ++files;
  }
  BOOST_TEST(files >= 2);
  auto index = c.get("/ui/");
  BOOST_TEST(index.status == 200);
  BOOST_TEST(index.header("content-type") == "text/html; charset=utf-8");
  BOOST_TEST(index.header("content-security-policy") == kPolicy);
  BOOST_TEST((index.body == slurp(dir / "index.html")));
  auto head = c.request("HEAD", "/ui/");
  BOOST_TEST(head.status == 200);
  BOOST_TEST(head.body.empty());
}

BOOST_AUTO_TEST_CASE(unknown_and_outside_names_are_not_found) {
  HttpClient c(shared_dlqd().port());
  for (const char* target : {"/ui/nope.js", "/ui/INDEX.HTML", "/ui/index.htm", "/ui/..%2fREADME.md",
                             "/ui/%2e%2e", "/ui/.hidden.js", "/ui/index.html/x", "/ui/a%00.js",
                             "/ui//index.html"}) {
    auto res = c.get(target);
    BOOST_TEST(res.status == 404, target << " -> " << res.status);
    BOOST_TEST(res.header("content-type") == "application/problem+json", target);
  }
  auto post = c.post("/ui/", json::object{});
  BOOST_TEST(post.status == 405);
  BOOST_TEST(post.header("allow") == "GET, HEAD");
}

BOOST_AUTO_TEST_CASE(ui_dir_serves_a_folder_at_run_time) {
  TempDir dir;
  fs::create_directories(dir.file("ui"));
  std::ofstream(dir.file("ui/index.html")) << "<!doctype html><title>dev</title>";
  std::ofstream(dir.file("ui/extra.css")) << "body{}";
  std::ofstream(dir.file("ui/Upper.css")) << "body{}";
  std::ofstream(dir.file("secret.txt")) << "outside";
  DlqdProcess node{DlqdOptions(json::serialize(json::object{{"ui", {{"dir", dir.file("ui")}}}}))};
  HttpClient c(node.port());
  BOOST_TEST(c.get("/ui/").body == "<!doctype html><title>dev</title>");
  auto css = c.get("/ui/extra.css");
  BOOST_TEST(css.status == 200);
  BOOST_TEST(css.header("content-type") == "text/css; charset=utf-8");
  BOOST_TEST(c.get("/ui/Upper.css").status == 404);
  BOOST_TEST(c.get("/ui/..%2fsecret.txt").status == 404);
  BOOST_TEST(c.get("/ui/missing.js").status == 404);
}

BOOST_AUTO_TEST_CASE(hourly_counts_every_death_in_its_hour_even_after_replay) {
  HttpClient c(shared_dlqd().port());
  const std::string q = fresh_queue("hourly");
  // Two deaths at 00:10 and one at 02:59 on 2099-01-01 (X-Now), read at 03:30 over 4 hours.
  auto die_at = [&](const std::string& when) {
    json::object body{{"payload", "x"}};
    BOOST_REQUIRE_EQUAL(c.post("/queues/" + q + "/messages", body, now_header(when)).status, 201);
    auto m = claim_one(c, q, now_header(when));
    auto id = m.at("id").as_int64();
    auto failed = c.post(message_path(q, id, "fail"),
                         json::object{{"error", "boom"}, {"retryable", false}}, now_header(when));
    BOOST_REQUIRE_EQUAL(str(failed.json(), "status"), "dead");
    return id;
  };
  auto first = die_at(at_s(600));
  die_at(at_s(700));
  die_at(at_s(3 * 3600 - 1));
  auto read = [&] {
    auto res = c.get("/dlq/hourly?hours=4&queue=" + q, now_header(at_s(3.5 * 3600)));
    BOOST_REQUIRE_EQUAL(res.status, 200);
    return res.json();
  };
  auto body = read();
  BOOST_TEST(body.at("bucket_seconds").as_int64() == 3600);
  BOOST_TEST(body.at("hours").as_int64() == 4);
  BOOST_TEST(str(body, "queue") == q);
  BOOST_TEST(str(body, "from") == at_s(0));
  BOOST_TEST(str(body, "to") == at_s(4 * 3600));
  const auto& buckets = body.at("buckets").as_array();
  BOOST_REQUIRE_EQUAL(buckets.size(), 4u);
  const long long expected[] = {2, 0, 1, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST(str(buckets[i], "start") == at_s(static_cast<double>(i) * 3600));
    BOOST_TEST(buckets[i].at("count").as_int64() == expected[i], "bucket " << i);
  }
  // A replayed message stays counted where it died; its second death counts again.
  auto replayed = c.post(message_path(q, first, "replay"), json::object{{"reason", "fixed"}},
                         now_header(at_s(3 * 3600 + 60)));
  BOOST_REQUIRE_EQUAL(replayed.status, 200);
  BOOST_TEST(read().at("buckets").as_array()[0].at("count").as_int64() == 2);
  auto again = claim_one(c, q, now_header(at_s(3 * 3600 + 120)));
  BOOST_REQUIRE_EQUAL(again.at("id").as_int64(), first);
  c.post(message_path(q, first, "fail"), json::object{{"error", "boom"}, {"retryable", false}},
         now_header(at_s(3 * 3600 + 180)));
  BOOST_TEST(read().at("buckets").as_array()[3].at("count").as_int64() == 1);
  // Across queues: at least this queue's deaths (other tests add their own).
  auto all = c.get("/dlq/hourly?hours=4", now_header(at_s(3.5 * 3600))).json();
  BOOST_TEST(all.at("queue").is_null());
  BOOST_TEST(all.at("buckets").as_array()[0].at("count").as_int64() >= 2);
  auto plain = c.get("/dlq/hourly").json();
  BOOST_TEST(plain.at("buckets").as_array().size() == 24u);
}

BOOST_AUTO_TEST_CASE(hourly_validates_its_parameters) {
  HttpClient c(shared_dlqd().port());
  for (const char* target : {"/dlq/hourly?hours=0", "/dlq/hourly?hours=169", "/dlq/hourly?hours=x",
                             "/dlq/hourly?queue=bad%20name", "/dlq/hourly?queue="}) {
    auto res = c.get(target);
    BOOST_TEST(res.status == 422, target << " -> " << res.status);
  }
  auto fields = error_fields(c.get("/dlq/hourly?hours=0&queue=b%21d"));
  BOOST_TEST(fields.size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

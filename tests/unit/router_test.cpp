#include <boost/test/unit_test.hpp>

#include "http/router.hpp"

using namespace dlq::http;

namespace {

Router make_router() {
  Router r;
  Handler none = [](const Request&, const RouteMatch&) -> boost::asio::awaitable<Response> {
    co_return Response{};
  };
  r.add("POST", "/queues/{queue}/messages", none);
  r.add("GET", "/queues/{queue}/messages", none);
  r.add("POST", "/queues/{queue}/messages/batch", none);
  r.add("GET", "/queues/{queue}/messages/{id}", none);
  r.add("POST", "/queues/{queue}/messages/{id}/fail", none);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(router)

BOOST_AUTO_TEST_CASE(captures_segments) {
  Router r = make_router();
  auto m = r.match("GET", "/queues/emails/messages/42");
  BOOST_REQUIRE(m.route);
  BOOST_TEST(m.route->pattern == "/queues/{queue}/messages/{id}");
  BOOST_TEST(m.params.size() == 2u);
  BOOST_TEST(m.params[0] == "emails");
  BOOST_TEST(m.params[1] == "42");
}

BOOST_AUTO_TEST_CASE(head_matches_get) {
  Router r = make_router();
  BOOST_TEST(r.match("HEAD", "/queues/q/messages").route != nullptr);
}

BOOST_AUTO_TEST_CASE(known_path_wrong_method_lists_allow) {
  Router r = make_router();
  auto m = r.match("DELETE", "/queues/q/messages");
  BOOST_TEST(!m.route);
  BOOST_TEST(m.allow == "GET, HEAD, POST");
  auto fail = r.match("GET", "/queues/q/messages/1/fail");
  BOOST_TEST(fail.allow == "POST");
}

BOOST_AUTO_TEST_CASE(a_literal_segment_wins_over_a_capture) {
  Router r = make_router();
  auto post = r.match("POST", "/queues/q/messages/batch");
  BOOST_REQUIRE(post.route);
  BOOST_TEST(post.route->pattern == "/queues/{queue}/messages/batch");
  // GET /messages/batch is not "show message batch": the path is the batch route's.
  auto get = r.match("GET", "/queues/q/messages/batch");
  BOOST_TEST(!get.route);
  BOOST_TEST(get.allow == "POST");
  auto show = r.match("GET", "/queues/q/messages/7");
  BOOST_REQUIRE(show.route);
  BOOST_TEST(show.route->pattern == "/queues/{queue}/messages/{id}");
  BOOST_TEST(r.match("POST", "/queues/q/messages/7").allow == "GET, HEAD");
}

BOOST_AUTO_TEST_CASE(unknown_paths_match_nothing) {
  Router r = make_router();
  for (const char* path : {"/", "", "queues/q/messages", "/queues/q/messages/", "/queues//messages",
                           "/queues/q/messages/1/fail/x"}) {
    auto m = r.match("GET", path);
    BOOST_TEST(!m.route, path);
    BOOST_TEST(m.allow.empty(), path);
  }
}

BOOST_AUTO_TEST_SUITE_END()

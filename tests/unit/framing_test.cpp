#include <boost/test/unit_test.hpp>

#include "http/framing.hpp"

using dlq::http::check_framing;

BOOST_AUTO_TEST_SUITE(framing)

BOOST_AUTO_TEST_CASE(plain_and_chunked_requests_pass) {
  BOOST_TEST(!check_framing(11, {}, 1));
  BOOST_TEST(!check_framing(11, {"chunked"}, 1));
  BOOST_TEST(!check_framing(11, {"Chunked"}, 1));
  BOOST_TEST(!check_framing(10, {}, 0));  // HTTP/1.0 predates Host
}

BOOST_AUTO_TEST_CASE(host_must_appear_once_in_http_1_1) {
  BOOST_TEST(check_framing(11, {}, 0)->status == 400);
  BOOST_TEST(check_framing(11, {}, 2)->status == 400);
  BOOST_TEST(check_framing(10, {}, 2)->status == 400);
}

BOOST_AUTO_TEST_CASE(a_body_whose_end_is_unknown_is_400) {
  for (auto codings : {std::vector<std::string_view>{"gzip"}, {"chunked, gzip"},
                       {"chunked, chunked"}, {""}, {"chunked", "chunked"}, {"chunked;x=1"}}) {
    auto p = check_framing(11, codings, 1);
    BOOST_REQUIRE(p);
    BOOST_TEST(p->status == 400);
    BOOST_TEST(p->slug == "bad-request");
  }
  BOOST_TEST(check_framing(10, {"chunked"}, 0)->status == 400);
}

BOOST_AUTO_TEST_CASE(codings_under_chunked_are_not_implemented) {
  for (auto codings : {std::vector<std::string_view>{"gzip, chunked"}, {"gzip", "chunked"},
                       {"deflate,chunked"}}) {
    auto p = check_framing(11, codings, 1);
    BOOST_REQUIRE(p);
    BOOST_TEST(p->status == 501);
    BOOST_TEST(p->slug == "not-implemented");
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(framing_authorization)

BOOST_AUTO_TEST_CASE(a_second_authorization_is_400) {
  BOOST_TEST(!check_framing(11, {}, 1, 0));
  BOOST_TEST(!check_framing(11, {}, 1, 1));
  auto p = check_framing(11, {}, 1, 2);
  BOOST_REQUIRE(p);
  BOOST_TEST(p->status == 400);
  BOOST_TEST(p->slug == "bad-request");
}

BOOST_AUTO_TEST_SUITE_END()

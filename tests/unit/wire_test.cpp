// format_head writes a whole answer's head itself instead of through Beast's serializer: these
// cases hold it to the bytes Beast writes for the same answer.
#include <sstream>

#include <boost/beast/http.hpp>
#include <boost/test/unit_test.hpp>

#include "http/wire.hpp"

namespace bhttp = boost::beast::http;
using dlq::http::Response;
using dlq::http::wire::AnswerOptions;
using dlq::http::wire::format_head;

namespace {

// The fields every answer carries, set the way wire.cpp set them before format_head.
template <class Body>
void set_fields(bhttp::response<Body>& res, const Response& r, const AnswerOptions& o) {
  if (!r.body.empty() || r.stream) res.set(bhttp::field::content_type, r.content_type);
  res.set("X-Request-Id", o.request_id);
  res.set("X-Content-Type-Options", "nosniff");
  res.set(bhttp::field::cache_control, "no-store");
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.keep_alive(o.keep_alive && !r.close);
}

template <class Body>
std::string serialized(const bhttp::response<Body>& res) {
  std::ostringstream out;
  out << res.base();
  return out.str();
}

// A whole answer's head as Beast serializes it.
std::string beast_head(const Response& r, const AnswerOptions& o, std::size_t length) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), o.version};
  set_fields(res, r, o);
  if (r.status >= 200 && r.status != 204 && r.status != 304) res.content_length(length);
  return serialized(res);
}

// A streamed answer's head as Beast serializes it (chunked in HTTP/1.1, closing in HTTP/1.0).
std::string beast_streamed_head(const Response& r, const AnswerOptions& o) {
  bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(r.status), o.version};
  set_fields(res, r, o);
  if (o.version >= 11) {
    res.chunked(true);
  } else {
    res.keep_alive(false);
  }
  return serialized(res);
}

// A body that is never read: format_head only looks at whether there is one.
class NoBody final : public dlq::http::BodyStream {
 public:
  boost::asio::awaitable<std::string> next() override { co_return std::string(); }
};

Response answer(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

AnswerOptions options(unsigned version, bool keep_alive) {
  AnswerOptions o;
  o.version = version;
  o.keep_alive = keep_alive;
  o.request_id = "0123456789abcdef";
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wire)

BOOST_AUTO_TEST_CASE(a_whole_answer_has_the_head_beast_would_write) {
  Response r = answer(200, R"({"claimed":false,"message":null})");
  auto o = options(11, true);
  std::string head = format_head(r, o, r.body.size());
  BOOST_TEST(head == beast_head(r, o, r.body.size()));
  BOOST_TEST(head ==
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
             "X-Request-Id: 0123456789abcdef\r\nX-Content-Type-Options: nosniff\r\n"
             "Cache-Control: no-store\r\nContent-Length: 32\r\n\r\n");
}

BOOST_AUTO_TEST_CASE(connection_is_named_where_the_version_default_differs) {
  for (unsigned version : {10u, 11u}) {
    for (bool keep : {false, true}) {
      for (bool close : {false, true}) {
        Response r = answer(201, "{}");
        r.close = close;
        auto o = options(version, keep);
        BOOST_TEST(format_head(r, o, 2) == beast_head(r, o, 2),
                   "version " << version << " keep " << keep << " close " << close);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(statuses_without_a_body_have_no_content_length) {
  for (int status : {204, 304}) {
    Response r = answer(status, "");
    auto o = options(11, true);
    std::string head = format_head(r, o, 0);
    BOOST_TEST(head == beast_head(r, o, 0));
    BOOST_TEST(head.find("Content-Length") == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_handler_field_replaces_the_default_of_the_same_name) {
  Response r = answer(200, "<html></html>");
  r.content_type = "text/html; charset=utf-8";
  r.headers = {{"Content-Security-Policy", "default-src 'self'"},
               {"cache-control", "no-cache"},
               {"Location", "/ui/"}};
  auto o = options(11, true);
  std::string head = format_head(r, o, r.body.size());
  BOOST_TEST(head.find("no-store") == std::string::npos);
  BOOST_TEST(head.find("cache-control: no-cache\r\n") != std::string::npos);
  BOOST_TEST(head == beast_head(r, o, r.body.size()));
}

BOOST_AUTO_TEST_CASE(a_problem_gets_its_status_reason) {
  Response r = answer(422, R"({"title":"Validation failed"})");
  r.content_type = "application/problem+json";
  auto o = options(11, true);
  BOOST_TEST(format_head(r, o, r.body.size()) == beast_head(r, o, r.body.size()));
  BOOST_TEST(format_head(r, o, 0).rfind("HTTP/1.1 422 Unprocessable Entity\r\n", 0) == 0);
}

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_chunked_or_ends_with_the_connection) {
  for (unsigned version : {10u, 11u}) {
    for (bool keep : {false, true}) {
      Response r = answer(200, "");
      r.content_type = "application/x-ndjson";
      r.stream = std::make_shared<NoBody>();
      auto o = options(version, keep);
      BOOST_TEST(format_head(r, o, std::nullopt) == beast_streamed_head(r, o),
                 "version " << version << " keep " << keep);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// The Host and Origin rules without a server (docs/access.md, "Host and Origin"): the names and
// origins each field may carry, the lists' entries, and the order of the two checks.
#include <boost/test/unit_test.hpp>

#include "config/web_origin.hpp"
#include "http/origin_guard.hpp"

using namespace dlq;
using dlq::http::OriginGuard;
using dlq::http::Request;
using dlq::http::SiteVerdict;

namespace {

Config with_lists(std::vector<std::string> hosts, std::vector<std::string> origins,
                  std::string listen = "127.0.0.1:8080") {
  Config c;
  c.listen = std::move(listen);
  c.http.allowed_hosts = std::move(hosts);
  c.http.allowed_origins = std::move(origins);
  return c;
}

Request request(std::string method, std::optional<std::string> host,
                std::optional<std::string> origin = std::nullopt,
                std::optional<std::string> fetch_site = std::nullopt) {
  Request r;
  r.method = std::move(method);
  r.host = std::move(host);
  r.origin = std::move(origin);
  r.fetch_site = std::move(fetch_site);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(origin_guard)

BOOST_AUTO_TEST_CASE(host_fields_split_at_their_port) {
  BOOST_TEST(split_host_port("a.example")->host == "a.example");
  BOOST_TEST(!split_host_port("a.example")->port);
  BOOST_TEST(*split_host_port("a.example:8080")->port == 8080u);
  BOOST_TEST(split_host_port("[::1]:80")->host == "[::1]");
  for (std::string_view bad : {"", ":80", "a:", "a:x", "a:1:2", "::1", "[::1", "[::1]x", "a:65536", "[]"}) {
    BOOST_TEST(!split_host_port(bad), bad);
  }
}

BOOST_AUTO_TEST_CASE(origins_are_a_scheme_a_host_and_a_port_only) {
  auto o = parse_web_origin("HTTPS://Dlq.Example");
  BOOST_REQUIRE(o);
  BOOST_TEST(o->host == "Dlq.Example");
  BOOST_TEST(o->port == 443u);
  BOOST_TEST(parse_web_origin("http://[::1]:9")->port == 9u);
  for (std::string_view bad : {"null", "", "http://", "ftp://a", "http://a/", "http://a?x", "http://u@a",
                               "http://a:99999", "http://a b", "http://*.a", "http://a..b", "http://[zz]"}) {
    BOOST_TEST(!parse_web_origin(bad), bad);
  }
}

BOOST_AUTO_TEST_CASE(loopback_names_are_known_without_a_list) {
  for (std::string_view h : {"localhost", "LOCALHOST", "x.localhost", "127.0.0.1", "127.255.0.9", "[::1]",
                             "[0:0:0:0:0:0:0:1]"}) {
    BOOST_TEST(loopback_host(h), h);
  }
  for (std::string_view h : {"localhost.evil", "xlocalhost", ".localhost", "128.0.0.1", "127.0.0.1.nip.io",
                             "[::2]", "::1", "0.0.0.0", "127.1"}) {
    BOOST_TEST(!loopback_host(h), h);
  }
}

BOOST_AUTO_TEST_CASE(list_entries_are_normalized_or_refused) {
  BOOST_TEST(*normalize_allowed_host("DLQ.Example") == "dlq.example");
  BOOST_TEST(*normalize_allowed_host("fd00::1") == "[fd00::1]");
  BOOST_TEST(*normalize_allowed_host("[FD00:0::1]") == "[fd00::1]");
  BOOST_TEST(*normalize_allowed_origin("HTTPS://A.example") == "https://a.example:443");
  BOOST_TEST(*normalize_allowed_origin("http://[fd00::1]") == "http://[fd00::1]:80");
  for (std::string_view bad : {"", "a:80", "*.a", "a/b", "[a]", "[::1]:80", "a..b", "http://a"}) {
    BOOST_TEST(!normalize_allowed_host(bad), bad);
    BOOST_TEST(check_allowed_host(std::string(bad)).has_value());
  }
  BOOST_TEST(!check_allowed_origin("https://a.example:8443"));
  BOOST_TEST(check_allowed_origin("https://a.example/").has_value());
}

BOOST_AUTO_TEST_CASE(host_is_checked_only_when_asked_and_only_against_known_names) {
  OriginGuard g(with_lists({"dlq.internal"}, {}, "10.0.0.7:8080"));
  for (const char* host : {"localhost:1", "127.0.0.1", "dlq.internal", "DLQ.INTERNAL:9", "10.0.0.7:8080"}) {
    BOOST_TEST((g.check(request("GET", host), true) == SiteVerdict::allowed), host);
  }
  for (const char* host : {"evil.example", "10.0.0.8", "", "dlq.internal:x"}) {
    BOOST_TEST((g.check(request("GET", host), true) == SiteVerdict::host_not_allowed), host);
    BOOST_TEST((g.check(request("GET", host), false) == SiteVerdict::allowed), host);
  }
  BOOST_TEST((g.check(request("GET", std::nullopt), true) == SiteVerdict::allowed));  // HTTP/1.0
}

BOOST_AUTO_TEST_CASE(unsafe_methods_need_their_own_or_a_listed_origin) {
  OriginGuard g(with_lists({}, {"https://ops.example.com"}));
  auto verdict = [&](const char* method, std::optional<std::string> host, std::optional<std::string> origin,
                     std::optional<std::string> site = std::nullopt) {
    return g.check(request(method, std::move(host), std::move(origin), std::move(site)), false);
  };
  using enum SiteVerdict;
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", std::nullopt) == allowed));
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", "http://127.0.0.1:8080") == allowed));
  BOOST_TEST((verdict("PUT", "a.example", "http://A.EXAMPLE:80") == allowed));
  BOOST_TEST((verdict("PATCH", "a.example:443", "https://a.example") == allowed));
  BOOST_TEST((verdict("DELETE", "x", "https://ops.example.com", "cross-site") == allowed));
  BOOST_TEST((verdict("POST", "x", "http://evil.example", "same-origin") == allowed));
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", std::nullopt, "cross-site") == origin_not_allowed));
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", "http://127.0.0.1:8081") == origin_not_allowed));
  // The scheme is not compared: behind a TLS proxy the page is https, dlqd plain http.
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", "https://127.0.0.1:8080") == allowed));
  BOOST_TEST((verdict("POST", "a.example", "https://a.example:8443") == origin_not_allowed));
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", "null") == origin_not_allowed));
  BOOST_TEST((verdict("DELETE", std::nullopt, "http://127.0.0.1") == origin_not_allowed));
  BOOST_TEST((verdict("POST", "127.0.0.1:8080", "http://127.0.0.1:8080", "Cross-Site") == origin_not_allowed));
  // Safe methods are never refused for their Origin.
  BOOST_TEST((verdict("GET", "127.0.0.1", "http://evil.example", "cross-site") == allowed));
  BOOST_TEST((verdict("OPTIONS", "127.0.0.1", "http://evil.example", "cross-site") == allowed));
}

BOOST_AUTO_TEST_CASE(host_is_decided_before_origin) {
  OriginGuard g(with_lists({}, {}));
  BOOST_TEST((g.check(request("POST", "evil.example", "http://evil.example"), true) ==
              SiteVerdict::host_not_allowed));
}

BOOST_AUTO_TEST_SUITE_END()

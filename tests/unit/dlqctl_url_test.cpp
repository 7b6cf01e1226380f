// dlqctl's --url (http[s]://HOST[:PORT][/prefix]) and the percent-encoding of what it puts into
// a target: the forms it takes and the usage errors (exit status 2) it gives.
#include <boost/test/unit_test.hpp>

#include "dlqctl/client.hpp"

using dlq::ctl::ServerUrl;
using dlq::ctl::UsageError;
using dlq::ctl::url_encode;

namespace {

std::string usage_error(std::string_view url) {
  try {
    ServerUrl::parse(url);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dlqctl_url)

BOOST_AUTO_TEST_CASE(http_and_https_with_their_default_ports) {
  auto plain = ServerUrl::parse("http://127.0.0.1:8080");
  BOOST_TEST(!plain.tls);
  BOOST_TEST(plain.host == "127.0.0.1");
  BOOST_TEST(plain.port == "8080");
  BOOST_TEST(plain.prefix == "");
  auto tls = ServerUrl::parse("https://dlq.example.com");
  BOOST_TEST(tls.tls);
  BOOST_TEST(tls.host == "dlq.example.com");
  BOOST_TEST(tls.port == "443");
  BOOST_TEST(ServerUrl::parse("http://localhost").port == "80");
  BOOST_TEST(ServerUrl::parse("https://h:8443").port == "8443");
  BOOST_TEST(ServerUrl::parse("http://h:080").port == "080");  // digits, passed on as given
}

BOOST_AUTO_TEST_CASE(a_prefix_is_kept_without_its_trailing_slashes) {
  auto u = ServerUrl::parse("http://h:9000/dlq/");
  BOOST_TEST(u.host == "h");
  BOOST_TEST(u.port == "9000");
  BOOST_TEST(u.prefix == "/dlq");
  BOOST_TEST(ServerUrl::parse("https://h/a/b//").prefix == "/a/b");
  BOOST_TEST(ServerUrl::parse("http://h/").prefix == "");
  BOOST_TEST(ServerUrl::parse("http://h//").prefix == "");
  BOOST_TEST(ServerUrl::parse("http://h/team%20a/dlq").prefix == "/team%20a/dlq");  // as given
}

BOOST_AUTO_TEST_CASE(ipv6_hosts_in_brackets) {
  auto u = ServerUrl::parse("http://[::1]:9000/x");
  BOOST_TEST(u.host == "::1");
  BOOST_TEST(u.port == "9000");
  BOOST_TEST(u.prefix == "/x");
  auto bare = ServerUrl::parse("https://[2001:db8::7]");
  BOOST_TEST(bare.host == "2001:db8::7");
  BOOST_TEST(bare.port == "443");
}

BOOST_AUTO_TEST_CASE(malformed_urls_are_usage_errors) {
  BOOST_TEST(usage_error("ftp://example.com") ==
             "--url must start with http:// or https://: ftp://example.com");
  BOOST_TEST(usage_error("example.com:8080") ==
             "--url must start with http:// or https://: example.com:8080");
  BOOST_TEST(usage_error("HTTP://h") == "--url must start with http:// or https://: HTTP://h");
  BOOST_TEST(usage_error("http://") == "--url has no host");
  BOOST_TEST(usage_error("https:///dlq") == "--url has no host");
  BOOST_TEST(usage_error("http://:8080") == "--url: expected http[s]://HOST[:PORT], got :8080");
  BOOST_TEST(usage_error("http://h:") == "--url: expected http[s]://HOST[:PORT], got h:");
  BOOST_TEST(usage_error("http://h:123456") ==
             "--url: expected http[s]://HOST[:PORT], got h:123456");
  for (std::string_view bad : {"http://h:abc", "http://h:80x/dlq", "http://[::1", "http://[::1]x",
                               "http://[::1]:x"}) {
    BOOST_TEST(usage_error(bad).starts_with("--url"), bad << ": " << usage_error(bad));
  }
}

BOOST_AUTO_TEST_CASE(url_encode_keeps_only_unreserved_characters) {
  BOOST_TEST(url_encode("AZaz09-_.~") == "AZaz09-_.~");
  BOOST_TEST(url_encode("a b/c?d&e=f%g+h#i") == "a%20b%2Fc%3Fd%26e%3Df%25g%2Bh%23i");
  BOOST_TEST(url_encode("caf\xC3\xA9") == "caf%C3%A9");
  BOOST_TEST(url_encode(std::string("\0\x7F", 2)) == "%00%7F");
  BOOST_TEST(url_encode("") == "");
}

BOOST_AUTO_TEST_SUITE_END()

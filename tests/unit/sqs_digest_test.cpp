// MD5OfMessageBody and MD5OfMessageAttributes against published digests: an SDK rejects any
// answer whose digests it computes differently.
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "model/sqs_digest.hpp"

using namespace dlq::sqs;

namespace sqs_digest_test {

MessageAttribute text(std::string name, std::string type, std::string value) {
  return {std::move(name), std::move(type), std::move(value), std::nullopt};
}

MessageAttribute bytes(std::string name, std::string type, std::string value) {
  return {std::move(name), std::move(type), std::nullopt, std::move(value)};
}

// The `aws sqs send-message` example of the AWS CLI reference, its answer shown truncated as
// 00484c68...59e48f06. That is the digest of Greeting bytes "SGVsbG8sIFdvcmxkIQ==" (base64 of
// "Hello, World!", as the CLI sent it); the bytes "Hello, World!" themselves give
// 28eb0e57...968eac4a, which matches neither end.
std::vector<MessageAttribute> cli_example() {
  return {text("City", "String", "Any City"), bytes("Greeting", "Binary", "SGVsbG8sIFdvcmxkIQ=="),
          text("Population", "Number", "1250800")};
}

}  // namespace sqs_digest_test

using namespace sqs_digest_test;

BOOST_AUTO_TEST_SUITE(sqs_digest)

BOOST_AUTO_TEST_CASE(body_md5_is_lowercase_hex) {
  BOOST_TEST(md5_hex("hello world") == "5eb63bbbe01eeed093cb22bb8f5acdc3");
  BOOST_TEST(md5_hex("") == "d41d8cd98f00b204e9800998ecf8427e");
  // The CLI reference's body; the page shows 51b0a325...39163aa0.
  BOOST_TEST(md5_hex("Information about the largest city in Any Region.") ==
             "51b0a3256d59467f973009b739163aa0");
}

BOOST_AUTO_TEST_CASE(attributes_md5_matches_the_cli_reference_example) {
  BOOST_TEST(attributes_md5(cli_example()) == "00484c6852e072874de421e059e48f06");
}

// Digests other SQS implementations assert in their tests (LocalStack, an npm checksum module,
// sqslite, YDB's "AmazonSample" cases).
BOOST_AUTO_TEST_CASE(attributes_md5_matches_published_digests) {
  BOOST_TEST(attributes_md5({text("timestamp", "Number", "1493147359900")}) ==
             "235c5c510d26fb653d073faed50ae77c");
  BOOST_TEST(attributes_md5({text("SellerName", "String", "Example Store")}) ==
             "cd28f3b68aeee4b2eac9c66f2f694b58");
  BOOST_TEST(attributes_md5({text("ordinal", "Number", "1"), text("category", "String", "test")}) ==
             "d21ae90c49061e927f57df5f5d72be1f");
  BOOST_TEST(attributes_md5({text("test_attribute_name_2", "String", "test_attribute_value_2"),
                             text("test_attribute_name_1", "String", "test_attribute_value_1")}) ==
             "d53f3b558fe951154770f25cb63dbba9");
  BOOST_TEST(attributes_md5({bytes("test_attribute_name", "Binary", "test_attribute_value")}) ==
             "23f6bd27ea87aab7dfeadcc9aebee495");
}

BOOST_AUTO_TEST_CASE(order_of_attributes_does_not_matter) {
  auto attrs = cli_example();
  std::swap(attrs[0], attrs[2]);
  BOOST_TEST(attributes_md5(attrs) == attributes_md5(cli_example()));
}

// Custom types keep their full name in the digest and take the transport of their base type
// (the expected digest from an independent Python implementation).
BOOST_AUTO_TEST_CASE(custom_types_use_their_base_types_transport) {
  BOOST_TEST(attributes_md5({text("Price", "Number.float", "3.14"),
                             bytes("Blob", "Binary.gzip", std::string("\x00\x01\xff", 3))}) ==
             "bd4fda27b08d0e1b05df184e451ffff2");
  BOOST_TEST(attributes_md5({text("Price", "Number.float", "3.14")}) !=
             attributes_md5({text("Price", "Number", "3.14")}));
}

BOOST_AUTO_TEST_CASE(no_attributes_no_digest) { BOOST_TEST(attributes_md5({}).empty()); }

BOOST_AUTO_TEST_CASE(unvalidated_attributes_throw) {
  BOOST_CHECK_THROW(attributes_md5({text("a", "Integer", "1")}), std::invalid_argument);
  BOOST_CHECK_THROW(attributes_md5({bytes("a", "String", "x")}), std::invalid_argument);
  BOOST_CHECK_THROW(attributes_md5({text("a", "Binary", "x")}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

// MD5 through OpenSSL's EVP interface (MD5() itself is deprecated in OpenSSL 3), and the byte
// layout AWS hashes for message attributes (SQS developer guide, "Calculating the MD5 message
// digest for message attributes").
#include "model/sqs_digest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

namespace dlq::sqs {
namespace {

// A length prefix is 4 bytes, big-endian, whatever the host's byte order.
void append_length_prefixed(std::string& out, std::string_view bytes) {
  auto n = static_cast<std::uint32_t>(bytes.size());
  out += static_cast<char>(n >> 24);
  out += static_cast<char>(n >> 16);
  out += static_cast<char>(n >> 8);
  out += static_cast<char>(n);
  out += bytes;
}

// Custom types ("Number.float", "Binary.gzip") carry the transport of their base type.
void append_value(std::string& out, const MessageAttribute& a) {
  std::string_view base = std::string_view(a.data_type).substr(0, a.data_type.find('.'));
  if (base == "String" || base == "Number") {
    if (!a.string_value)
      throw std::invalid_argument("attribute " + a.name + " has no string value");
    out += '\x01';
    append_length_prefixed(out, *a.string_value);
  } else if (base == "Binary") {
    if (!a.binary_value)
      throw std::invalid_argument("attribute " + a.name + " has no binary value");
    out += '\x02';
    append_length_prefixed(out, *a.binary_value);
  } else {
    throw std::invalid_argument("attribute " + a.name + " has an unknown data type");
  }
}

}  // namespace

std::string md5_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::array<unsigned char, 16> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_md5(), nullptr) != 1 ||
      size != digest.size()) {
    throw std::runtime_error("MD5 failed");
  }
  std::string out;
  out.reserve(32);
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string attributes_md5(std::vector<MessageAttribute> attrs) {
  if (attrs.empty()) return {};
  // std::string's operator< compares as unsigned bytes, the order AWS sorts names in.
  std::sort(attrs.begin(), attrs.end(),
            [](const MessageAttribute& a, const MessageAttribute& b) { return a.name < b.name; });
  std::string encoded;
  for (const auto& a : attrs) {
    append_length_prefixed(encoded, a.name);
    append_length_prefixed(encoded, a.data_type);
    append_value(encoded, a);
  }
  return md5_hex(encoded);
}

}  // namespace dlq::sqs

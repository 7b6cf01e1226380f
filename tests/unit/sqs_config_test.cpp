// The sqs.* keys (issue 38): each value's shape, access keys against each other and auth.tokens,
// the secret files (read by load_config, refused when missing, empty or readable by others, and
// never quoted), --print-config without the secret, and the public URL a wildcard listen needs.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <fstream>

#include <boost/json.hpp>

#include "config/config.hpp"
#include "support/temp_dir.hpp"

using namespace dlq;
using dlq::test::TempDir;
namespace json = boost::json;

namespace {

const std::string kHash(64, 'a');
const std::string kKeyId = "AKIAIOSFODNN7EXAMPLE";
const std::string kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

std::string parse_error(const std::string& text) {
  try {
    parse_config(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

void write_file(const std::string& path, const std::string& content, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
  BOOST_TEST_REQUIRE(::chmod(path.c_str(), mode) == 0);
}

// A config document with these access keys (a JSON array's items) and optional extra members.
std::string with_keys(const std::string& keys, const std::string& extra = "") {
  return R"({"sqs": {"access_keys": [)" + keys + "]}" + (extra.empty() ? "" : ", " + extra) + "}";
}

std::string key_entry(const std::string& name, const std::string& id, const std::string& file,
                      const std::string& roles = R"(["admin"])") {
  return R"({"name": ")" + name + R"(", "access_key_id": ")" + id + R"(", "secret_file": ")" +
         file + R"(", "roles": )" + roles + "}";
}

// load_config over a file holding `text`; "" when it loads, else the error.
std::string load_error(const TempDir& dir, const std::string& text, ConfigOverrides flags = {}) {
  write_file(dir.file("dlqd.json"), text, 0600);
  try {
    load_config(dir.file("dlqd.json"), flags);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sqs_config)

BOOST_AUTO_TEST_CASE(defaults_and_values_read_and_print_back) {
  Config d = parse_config("{}");
  BOOST_TEST(d.sqs.public_url.empty());
  BOOST_TEST(d.sqs.region == "us-east-1");
  BOOST_TEST(d.sqs.account_id == "000000000000");
  BOOST_TEST(d.sqs.access_keys.empty());

  Config c = parse_config(
      R"({"sqs": {"public_url": "https://sqs.example.com:8443",
      "region": "eu-west-3", "account_id": "123456789012",
      "access_keys": [)" +
      key_entry("ops", kKeyId, "/etc/dlq/ops.sqs-secret", R"(["producer", "worker"])") + "]}}");
  BOOST_TEST(c.sqs.public_url == "https://sqs.example.com:8443");
  BOOST_TEST(c.sqs.region == "eu-west-3");
  BOOST_TEST(c.sqs.account_id == "123456789012");
  BOOST_REQUIRE_EQUAL(c.sqs.access_keys.size(), 1u);
  const SqsAccessKey& k = c.sqs.access_keys[0];
  BOOST_TEST(k.name == "ops");
  BOOST_TEST(k.access_key_id == kKeyId);
  BOOST_TEST(k.secret_file == "/etc/dlq/ops.sqs-secret");
  BOOST_TEST(k.roles == std::vector<std::string>({"producer", "worker"}));
  BOOST_TEST(k.secret.empty());  // parse_config reads no files; load_config does

  Config again = parse_config(print_config(c));
  BOOST_TEST(again.sqs.public_url == c.sqs.public_url);
  BOOST_TEST(again.sqs.region == "eu-west-3");
  BOOST_TEST(again.sqs.account_id == "123456789012");
  BOOST_REQUIRE_EQUAL(again.sqs.access_keys.size(), 1u);
  BOOST_TEST(again.sqs.access_keys[0].secret_file == "/etc/dlq/ops.sqs-secret");
  BOOST_TEST(again.sqs.access_keys[0].roles == k.roles);
}

BOOST_AUTO_TEST_CASE(public_url_region_and_account_id_are_checked) {
  auto sqs = [](const std::string& members) {
    return parse_error(R"({"sqs": {)" + members + "}}");
  };
  for (const char* good : {"http://dlq.example.com", "https://dlq.example.com:8443",
                           "http://10.0.0.5:8080", "http://[::1]:8080", ""}) {
    BOOST_TEST(sqs(R"("public_url": ")" + std::string(good) + "\"").empty(), good);
  }
  for (const char* bad : {"dlq.example.com", "ftp://dlq.example.com", "https://dlq.example.com/sqs",
                          "https://dlq.example.com?x=1", "https://user@dlq.example.com",
                          "https://dlq.example.com:0", "https://dlq.example.com//", "https://",
                          "https://dlq.example.com:99999", "https://dlq.example.com#f"}) {
    BOOST_TEST(
        has(sqs(R"("public_url": ")" + std::string(bad) + "\""), "\"sqs.public_url\": must be"),
        bad);
  }
  // One trailing "/" is dropped: queue URLs are <public_url>/<account_id>/<queue>.
  Config slash = parse_config(R"({"sqs": {"public_url": "https://dlq.example.com:8443/"}})");
  BOOST_TEST(slash.sqs.public_url == "https://dlq.example.com:8443");
  BOOST_TEST(parse_config(print_config(slash)).sqs.public_url == "https://dlq.example.com:8443");

  BOOST_TEST(sqs(R"("region": "ap-southeast-2")").empty());
  for (const char* bad :
       {"", "US-EAST-1", "us_east_1", "us east 1", "a23456789012345678901234567890123"}) {
    BOOST_TEST(has(sqs(R"("region": ")" + std::string(bad) + "\""), "\"sqs.region\": must be"),
               bad);
  }
  BOOST_TEST(sqs(R"("region": "a2345678901234567890123456789012")").empty());  // 32
  for (const char* bad : {"", "12345678901", "1234567890123", "12345678901a", " 23456789012"}) {
    BOOST_TEST(has(sqs(R"("account_id": ")" + std::string(bad) + "\""),
                   "\"sqs.account_id\": must be 12 digits"),
               bad);
  }
  BOOST_TEST(has(sqs(R"("account_id": 123456789012)"), "\"sqs.account_id\": must be a string"));
  BOOST_TEST(has(sqs(R"("endpoint": "x")"), "\"sqs.endpoint\": unknown key"));
}

BOOST_AUTO_TEST_CASE(each_access_key_is_checked) {
  auto one = [](const std::string& entry) { return parse_error(with_keys(entry)); };
  BOOST_TEST(one(key_entry("ops", kKeyId, "/s")).empty());
  BOOST_TEST(one(key_entry(std::string(128, 'n'), kKeyId, "/s")).empty());
  BOOST_TEST(
      has(one(key_entry("", kKeyId, "/s")), "\"sqs.access_keys[0].name\": must be 1 to 128"));
  BOOST_TEST(has(one(key_entry(std::string(129, 'n'), kKeyId, "/s")),
                 "\"sqs.access_keys[0].name\": must be 1 to 128"));

  BOOST_TEST(one(key_entry("ops", std::string(16, 'A'), "/s")).empty());
  BOOST_TEST(one(key_entry("ops", std::string(128, '7'), "/s")).empty());
  for (const std::string& bad :
       {std::string(15, 'A'), std::string(129, 'A'), std::string("AKIA-IOSFODNN7EXAMPLE"),
        std::string("AKIAIOSFODNN7EXAMPLÉ"), std::string("")}) {
    BOOST_TEST(has(one(key_entry("ops", bad, "/s")),
                   "\"sqs.access_keys[0].access_key_id\": must be 16 to 128 letters and digits"),
               bad);
  }

  BOOST_TEST(has(one(key_entry("ops", kKeyId, "/s", "[]")),
                 "\"sqs.access_keys[0].roles\": must list at least one role"));
  BOOST_TEST(has(one(key_entry("ops", kKeyId, "/s", R"(["root"])")), "\"root\" is not a role"));
  BOOST_TEST(
      has(one(R"({"name": "ops", "access_key_id": ")" + kKeyId + R"(", "secret_file": "/s"})"),
          "\"sqs.access_keys[0].roles\": must list at least one role"));
  BOOST_TEST(has(one(key_entry("ops", kKeyId, "")),
                 "\"sqs.access_keys[0].secret_file\": must name a file"));

  // All three are required; the secret itself is no config key.
  std::string missing = one(R"({"roles": ["admin"]})");
  for (const char* key : {"name", "access_key_id", "secret_file"}) {
    BOOST_TEST(has(missing, "\"sqs.access_keys[0]." + std::string(key) + "\": is required"), key);
  }
  std::string inline_secret = one(R"({"name": "ops", "access_key_id": ")" + kKeyId +
                                  R"(", "secret_file": "/s", "secret": "x", "roles": ["admin"]})");
  BOOST_TEST(has(inline_secret, "\"sqs.access_keys[0].secret\": unknown key"));
  BOOST_TEST(has(one("\"ops\""), "\"sqs.access_keys[0]\": must be an object"));
  BOOST_TEST(
      has(parse_error(R"({"sqs": {"access_keys": {}}})"), "\"sqs.access_keys\": must be an array"));
}

BOOST_AUTO_TEST_CASE(names_are_unique_across_keys_and_tokens_and_key_ids_across_keys) {
  std::string twice =
      parse_error(with_keys(key_entry("ops", kKeyId, "/a") + "," + key_entry("ops", kKeyId, "/b")));
  BOOST_TEST(has(twice, "\"sqs.access_keys[1].name\": \"ops\" names sqs.access_keys[0] too"));
  BOOST_TEST(
      has(twice, "\"sqs.access_keys[1].access_key_id\": the same key id as sqs.access_keys[0]"));
  BOOST_TEST(!has(twice, "sqs.access_keys[0]."));

  std::string tokens = R"("auth": {"tokens": [{"name": "ci", "token_sha256": ")" + kHash +
                       R"(", "roles": ["admin"]}, {"name": "ops", "token_sha256": ")" +
                       std::string(64, 'b') + R"(", "roles": ["admin"]}]})";
  std::string clash = parse_error(with_keys(key_entry("ops", kKeyId, "/a"), tokens));
  BOOST_TEST(has(clash, "\"sqs.access_keys[0].name\": \"ops\" names auth.tokens[1] too"));
  BOOST_TEST(parse_error(with_keys(key_entry("sqs-ops", kKeyId, "/a"), tokens)).empty());
  // Different names with different ids, each clash-free: accepted.
  BOOST_TEST(parse_error(with_keys(key_entry("a", kKeyId, "/a") + "," +
                                   key_entry("b", "AKIAIOSFODNN7EXAMPLF", "/a")))
                 .empty());
}

BOOST_AUTO_TEST_CASE(the_secret_is_the_file_less_one_trailing_newline) {
  TempDir dir;
  const std::string file = dir.file("ops.sqs-secret");
  const std::string doc = with_keys(key_entry("ops", kKeyId, file));
  write_file(dir.file("dlqd.json"), doc, 0600);

  write_file(file, kSecret + "\n", 0600);
  BOOST_TEST(load_config(dir.file("dlqd.json"), {}).sqs.access_keys.at(0).secret == kSecret);
  write_file(file, kSecret, 0400);
  BOOST_TEST(load_config(dir.file("dlqd.json"), {}).sqs.access_keys.at(0).secret == kSecret);

  // A second newline or a "\r\n" ending would sign with a secret nobody holds: refused.
  for (const std::string& content : {kSecret + "\n\n", kSecret + "\r\n", std::string("ab\ncd")}) {
    write_file(file, content, 0600);
    std::string e = load_error(dir, doc);
    BOOST_TEST(
        has(e, "\"sqs.access_keys[0].secret_file\": \"" + file + "\" holds a control character"),
        e);
  }

  // load_sqs_secrets reads the files again (as SIGHUP's reload does, through load_config).
  write_file(file, kSecret + "\n", 0600);
  Config c = load_config(dir.file("dlqd.json"), {});
  write_file(file, "rotated-secret\n", 0600);
  load_sqs_secrets(c);
  BOOST_TEST(c.sqs.access_keys.at(0).secret == "rotated-secret");
}

BOOST_AUTO_TEST_CASE(missing_empty_and_shared_secret_files_are_refused_without_the_secret) {
  TempDir dir;
  const std::string file = dir.file("ops.sqs-secret");
  const std::string doc = with_keys(key_entry("ops", kKeyId, file));
  const std::string where = "config key \"sqs.access_keys[0].secret_file\": \"" + file + "\" ";

  std::string missing = load_error(dir, doc);
  BOOST_TEST(has(missing, where + "cannot be read (No such file or directory)"), missing);

  for (mode_t mode : {0644, 0640, 0604, 0444, 0660}) {
    write_file(file, kSecret + "\n", mode);
    std::string e = load_error(dir, doc);
    BOOST_TEST(has(e, where + "may be read by group or others (mode 0"), e);
    BOOST_TEST(!has(e, kSecret), e);
    BOOST_TEST(!has(e, "wJalr"), e);
  }
  write_file(file, kSecret + "\n", 0644);
  BOOST_TEST(has(load_error(dir, doc), "(mode 0644)"));
  // The same refusal from load_sqs_secrets, which the reload path may call.
  Config parsed = parse_config(doc);
  try {
    load_sqs_secrets(parsed);
    BOOST_ERROR("a 0644 secret file was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(has(e.what(), where + "may be read by group or others"));
    BOOST_TEST(!has(e.what(), kSecret));
  }

  for (const char* empty : {"", "\n"}) {
    write_file(file, empty, 0600);
    BOOST_TEST(has(load_error(dir, doc), where + "is empty"));
  }
  write_file(file, std::string(5000, 'x'), 0600);
  std::string big = load_error(dir, doc);
  BOOST_TEST(has(big, where + "holds more than 4096 bytes"));
  BOOST_TEST(!has(big, "xxxx"));
  std::filesystem::create_directory(dir.file("folder"));
  ::chmod(dir.file("folder").c_str(), 0700);
  BOOST_TEST(has(load_error(dir, with_keys(key_entry("ops", kKeyId, dir.file("folder")))),
                 "is not a regular file"));

  // Every key's problem is reported, each naming its own entry.
  write_file(file, kSecret, 0644);
  std::string both =
      load_error(dir, with_keys(key_entry("a", kKeyId, file) + "," +
                                key_entry("b", "AKIAIOSFODNN7EXAMPLF", dir.file("none"))));
  BOOST_TEST(has(both, "sqs.access_keys[0].secret_file"));
  BOOST_TEST(has(both, "sqs.access_keys[1].secret_file"));
  BOOST_TEST(!has(both, kSecret));
}

BOOST_AUTO_TEST_CASE(print_config_shows_the_secret_file_never_the_secret) {
  TempDir dir;
  const std::string file = dir.file("ops.sqs-secret");
  write_file(file, kSecret + "\n", 0600);
  write_file(dir.file("dlqd.json"), with_keys(key_entry("ops", kKeyId, file)), 0600);
  Config c = load_config(dir.file("dlqd.json"), {});
  BOOST_REQUIRE(c.sqs.access_keys.at(0).secret == kSecret);
  std::string printed = print_config(c);
  BOOST_TEST(!has(printed, kSecret), printed);
  // The entry as printed: its four keys, the secret file's path among them, and nothing else.
  const json::value root = json::parse(printed);
  const json::object& entry = root.at("sqs").at("access_keys").as_array().at(0).as_object();
  BOOST_TEST(entry.size() == 4u, json::serialize(entry));
  BOOST_TEST(entry.at("secret_file").as_string() == file);
  BOOST_TEST(entry.at("access_key_id").as_string() == kKeyId);
  BOOST_TEST(entry.at("name").as_string() == "ops");
  BOOST_TEST(entry.at("roles").as_array().size() == 1u);
  // What it prints loads again, secret and all.
  write_file(dir.file("printed.json"), printed, 0600);
  BOOST_TEST(load_config(dir.file("printed.json"), {}).sqs.access_keys.at(0).secret == kSecret);
}

BOOST_AUTO_TEST_CASE(a_served_front_on_a_wildcard_listen_needs_public_url) {
  TempDir dir;
  const std::string file = dir.file("ops.sqs-secret");
  write_file(file, kSecret + "\n", 0600);
  const std::string keys = key_entry("ops", kKeyId, file);
  const std::string tokens = R"("auth": {"tokens": [{"name": "ci", "token_sha256": ")" + kHash +
                             R"(", "roles": ["admin"]}]})";
  const std::string needed = "config key \"sqs.public_url\": required when the SQS front is served";

  for (const char* wildcard : {"0.0.0.0:8080", "[::]:8080", ":::8080", "[0:0::0]:0"}) {
    std::string listen = R"("listen": ")" + std::string(wildcard) + "\"";
    BOOST_TEST(has(load_error(dir, with_keys(keys, listen)), needed), wildcard);
    BOOST_TEST(has(load_error(dir, with_keys(keys, listen + ", " + tokens)), needed), wildcard);
    BOOST_TEST(
        load_error(dir, R"({"sqs": {"public_url": "https://dlq.example.com", "access_keys": [)" +
                            keys + "]}, " + listen + "}")
            .empty(),
        wildcard);
    // Tokens and no keys: the front only refuses (403), so it needs no URL.
    BOOST_TEST(load_error(dir, "{" + listen + ", " + tokens + "}").empty(), wildcard);
    // Neither: the front is anonymous, with auth.allow_anonymous on every interface...
    BOOST_TEST(
        has(load_error(dir, "{" + listen + R"(, "auth": {"allow_anonymous": true}})"), needed),
        wildcard);
    // ...while without it dlqd refuses to listen there at all, and says that instead.
    BOOST_TEST(load_error(dir, "{" + listen + "}").empty(), wildcard);
  }
  // Not a wildcard: the URL comes from the address as bound.
  for (const char* host : {"127.0.0.1:8080", "10.0.0.5:8080", "[::1]:0", "dlq.internal:8080"}) {
    BOOST_TEST(
        load_error(dir, with_keys(keys, R"("listen": ")" + std::string(host) + "\"")).empty(),
        host);
  }
  // Checked after the environment and the flags: --listen can make the listen a wildcard.
  ConfigOverrides flags;
  flags.listen = "0.0.0.0:0";
  BOOST_TEST(has(load_error(dir, with_keys(keys), flags), needed));
}

BOOST_AUTO_TEST_CASE(the_front_is_served_with_keys_or_with_neither_keys_nor_tokens) {
  BOOST_TEST(sqs_front_served(parse_config("{}")));
  BOOST_TEST(sqs_front_served(parse_config(with_keys(key_entry("ops", kKeyId, "/s")))));
  std::string tokens = R"("auth": {"tokens": [{"name": "ci", "token_sha256": ")" + kHash +
                       R"(", "roles": ["admin"]}]})";
  BOOST_TEST(!sqs_front_served(parse_config("{" + tokens + "}")));
  BOOST_TEST(sqs_front_served(parse_config(with_keys(key_entry("ops", kKeyId, "/s"), tokens))));
}

BOOST_AUTO_TEST_SUITE_END()

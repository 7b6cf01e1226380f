// The log sink (model/logging.cpp) gathers lines: a warning goes out at once with every line
// before it, in order; other lines go out on their own within the sink's 50 ms. Standard error
// is pointed at a file for the test and restored afterwards.
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "model/logging.hpp"
#include "support/temp_dir.hpp"

namespace {

using dlq::test::read_file;

// Standard error goes to a file while this lives.
class StderrToFile {
 public:
  explicit StderrToFile(const std::string& path) : saved_(dup(STDERR_FILENO)) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    BOOST_REQUIRE(fd >= 0 && saved_ >= 0);
    BOOST_REQUIRE(dup2(fd, STDERR_FILENO) >= 0);
    close(fd);
  }
  ~StderrToFile() {
    dlq::log::flush();
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  StderrToFile(const StderrToFile&) = delete;
  StderrToFile& operator=(const StderrToFile&) = delete;

 private:
  int saved_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(logging)

BOOST_AUTO_TEST_CASE(a_warning_writes_every_waiting_line_in_order_and_info_lines_follow_soon) {
  dlq::test::TempDir dir;
  std::string path = dir.file("stderr.log");
  StderrToFile redirect(path);
  dlq::log::setup(dlq::log::Level::info, dlq::log::Format::json);

  dlq::log::info("first", {{"n", "1"}});
  dlq::log::info("second", {{"n", "2"}});
  dlq::log::warn("third", {{"n", "3"}});
  // The warning's write happened inside the call: no waiting needed.
  std::string now = read_file(path);
  auto first = now.find(R"("event":"first")");
  auto second = now.find(R"("event":"second")");
  auto third = now.find(R"("event":"third")");
  BOOST_REQUIRE(first != std::string::npos);
  BOOST_REQUIRE(second != std::string::npos);
  BOOST_REQUIRE(third != std::string::npos);
  BOOST_TEST((first < second && second < third));
  BOOST_TEST(now.find(R"("level":"warning")") != std::string::npos);

  dlq::log::info("fourth");
  auto start = std::chrono::steady_clock::now();
  bool written = false;
  while (!written && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    written = read_file(path).find(R"("event":"fourth")") != std::string::npos;
  }
  BOOST_TEST(written, "an info line alone was not written within 5 s");
}

// A flag is a JSON boolean (the chaos checker reads `"ambiguous": true`); a text value that
// reads "true" stays a string.
BOOST_AUTO_TEST_CASE(a_flag_is_a_json_boolean_and_a_text_value_a_string) {
  dlq::test::TempDir dir;
  std::string path = dir.file("stderr.log");
  {
    StderrToFile redirect(path);
    dlq::log::setup(dlq::log::Level::info, dlq::log::Format::json);
    dlq::log::warn("flagged", {{"ambiguous", true}, {"said", "true"}, {"off", false}});
  }
  std::string line = read_file(path);
  BOOST_TEST(line.find(R"("ambiguous":true,"said":"true","off":false)") != std::string::npos, line);
}

// Issue 31, item 10: a value can neither end its field nor its line, and every line is UTF-8.
namespace {

std::string text_value(std::string_view v) {
  std::string out;
  dlq::log::append_text_value(out, v);
  return out;
}

std::string json_value(std::string_view v) {
  std::string out;
  dlq::log::append_json_value(out, v);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(text_values_are_quoted_when_they_could_end_their_field_or_line) {
  BOOST_TEST(text_value("orders") == "orders");
  BOOST_TEST(text_value("") == "");
  BOOST_TEST(text_value(R"(a\b)") == R"(a\b)");  // a backslash alone ends nothing
  BOOST_TEST(text_value("x actor=ops") == R"("x actor=ops")");
  BOOST_TEST(text_value("a=b") == R"("a=b")");
  BOOST_TEST(text_value(R"(say "hi")") == R"("say \"hi\"")");
  BOOST_TEST(text_value("x\n2026-01-01 info forged") == R"("x\n2026-01-01 info forged")");
  BOOST_TEST(text_value("a\rb\tc\x1b[2J\x7f") == R"("a\x0db\x09c\x1b[2J\x7f")");
  BOOST_TEST(text_value(R"(\ and ")") == R"("\\ and \"")");
}

BOOST_AUTO_TEST_CASE(both_formats_write_invalid_utf8_as_the_replacement_character) {
  const std::string fffd = "\xEF\xBF\xBD";
  BOOST_TEST(text_value("\xff\xfe") == fffd + fffd);
  BOOST_TEST(json_value("\xff\xfe") == "\"" + fffd + fffd + "\"");
  // Well-formed sequences pass as they are; overlong forms, surrogates, truncated sequences and
  // code points past U+10FFFF do not.
  BOOST_TEST(text_value("caf\xC3\xA9 \xF0\x9F\x93\xA6") == "\"caf\xC3\xA9 \xF0\x9F\x93\xA6\"");
  BOOST_TEST(text_value("\xC0\xAF") == fffd + fffd);
  BOOST_TEST(text_value("\xED\xA0\x80") == fffd + fffd + fffd);
  BOOST_TEST(text_value("ab\xE2\x82") == "ab" + fffd + fffd);
  BOOST_TEST(text_value("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);
  BOOST_TEST(json_value("a\"b\\c\n\x01\xE2\x82\xAC\x80") ==
             "\"a\\\"b\\\\c\\n\\u0001\xE2\x82\xAC" + fffd + "\"");
}

BOOST_AUTO_TEST_SUITE_END()

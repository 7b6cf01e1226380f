// terminal_text: what dlqctl prints for people holds no byte a terminal would act on, shows each
// one as an escape, and leaves ordinary text (UTF-8 included) as it is.
#include <boost/test/unit_test.hpp>

#include "model/terminal_text.hpp"

using dlq::terminal_text;

BOOST_AUTO_TEST_SUITE(terminal_text_escaping)

BOOST_AUTO_TEST_CASE(controls_become_byte_escapes) {
  BOOST_TEST(terminal_text("\x1b]52;c;aGk=\x07") == "\\x1b]52;c;aGk=\\x07");  // OSC 52: clipboard
  BOOST_TEST(terminal_text("\x1b[2J") == "\\x1b[2J");
  BOOST_TEST(terminal_text("a\rb\bc\nd\te") == "a\\x0db\\x08c\\x0ad\\x09e");
  BOOST_TEST(terminal_text("\x7f") == "\\x7f");
  BOOST_TEST(terminal_text(std::string("a\0b", 3)) == "a\\x00b");
}

BOOST_AUTO_TEST_CASE(c1_and_bidi_controls_become_code_point_escapes) {
  BOOST_TEST(terminal_text("\xc2\x9b" "2J") == "\\u009b2J");  // U+009B, the 8-bit CSI
  BOOST_TEST(terminal_text("\xc2\x80\xc2\x9f") == "\\u0080\\u009f");
  BOOST_TEST(terminal_text("\xe2\x80\xae" "gnp.exe") == "\\u202egnp.exe");
  for (const char* c : {"\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa", "\xe2\x80\xab",
                        "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8",
                        "\xe2\x81\xa9"}) {
    BOOST_TEST(terminal_text(c).starts_with("\\u"), "escaped: " << terminal_text(c));
  }
  BOOST_TEST(terminal_text("\xe2\x81\xa9") == "\\u2069");
  BOOST_TEST(terminal_text("\xd8\x9c") == "\\u061c");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_becomes_byte_escapes) {
  BOOST_TEST(terminal_text("a\xff" "b") == "a\\xffb");
  BOOST_TEST(terminal_text("\x9b") == "\\x9b");                   // a lone continuation byte
  BOOST_TEST(terminal_text("\xc0\xaf") == "\\xc0\\xaf");          // overlong '/'
  BOOST_TEST(terminal_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  BOOST_TEST(terminal_text("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  BOOST_TEST(terminal_text("\xe2\x80") == "\\xe2\\x80");          // cut short
}

BOOST_AUTO_TEST_CASE(ordinary_text_passes_and_escaping_twice_changes_nothing) {
  const std::string plain = "smtp timeout \\x1b caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 "
                            "\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a \xe2\x80\x8b";  // Arabic, U+200B stay
  BOOST_TEST(terminal_text(plain) == plain);
  const std::string hostile = "\x1b]52;c;aGk=\x07\xe2\x80\xae\xff\r\n";
  BOOST_TEST(terminal_text(terminal_text(hostile)) == terminal_text(hostile));
}

BOOST_AUTO_TEST_SUITE_END()

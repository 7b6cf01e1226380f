// The title rules, the frame rule and the hashes incidents group by (docs/api-decisions.md,
// "Fingerprints"): what must group together, what must stay apart.
#include <boost/test/unit_test.hpp>

#include <string>

#include "model/fingerprint.hpp"

using namespace dlq;

namespace fingerprint_test {

const std::optional<std::string> kJob = std::string("send_email");

// The fingerprint of a failure of `kJob`, as the fail transition computes it.
std::string of(std::string_view error, std::string_view stack = {},
               ErrorClass cls = ErrorClass::transient,
               const std::optional<std::string>& job = kJob) {
  return computed_fingerprint(job, cls, incident_title(error), stack_frame(stack));
}

}  // namespace fingerprint_test

using namespace fingerprint_test;

BOOST_AUTO_TEST_SUITE(fingerprint)

BOOST_AUTO_TEST_CASE(each_rule_masks_what_differs_between_occurrences) {
  struct Case {
    std::string_view a, b, title;
  };
  const Case cases[] = {
      {"GET https://api.example.com/v1/users?id=1&page=2 failed",
       "GET https://api.example.com/v1/users?id=99&sort=name failed",
       "GET https://api.example.com/v<n>/users?<query> failed"},
      {"GET /search?q=cats.", "GET /search?q=dogs&page=3.", "GET /search?<query>."},
      {"no mailbox for alice@example.com", "no mailbox for bob.smith+x@mail.example.org",
       "no mailbox for <email>"},
      {"order 123e4567-e89b-12d3-a456-426614174000 missing",
       "order 9F1C2B3A-0000-4DEF-8ABC-FFFFFFFFFFFF missing", "order <uuid> missing"},
      {"connect 10.0.0.12:5432 refused", "connect 192.168.1.7:5432 refused",
       "connect <ip>:<n> refused"},
      {"connect [2001:db8::beef]:443 refused", "connect [fe80::1]:443 refused",
       "connect [<ip>]:<n> refused"},
      {"peer 2001:0db8:85a3:0000:0000:8a2e:0370:7334 reset", "peer ::ffff:10.1.2.3 reset",
       "peer <ip> reset"},
      {"blob 1a2b3c4d not found", "blob 0123456789ab not found", "blob <hex> not found"},
      {"commit 0x9f8e7d6c bad", "commit 0xdeadbeef01 bad", "commit <n>x<hex> bad"},
      {"key \"user:1\" is locked", "key \"session:abc\" is locked", "key \"<str>\" is locked"},
      {"column 'email' can't be null", "column 'phone' can't be null",
       "column '<str>' can't be null"},
      {"timeout after 30 s (attempt 2)", "timeout after 4500 s (attempt 17)",
       "timeout after <n> s (attempt <n>)"},
      {"  relay\tsaid\n\n  no  ", "relay said no", "relay said no"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.a) {
      BOOST_TEST(incident_title(c.a) == c.title);
      BOOST_TEST(incident_title(c.b) == c.title);
      BOOST_TEST(of(c.a) == of(c.b));
    }
  }
}

BOOST_AUTO_TEST_CASE(words_that_only_look_like_values_are_kept) {
  // Eight hex letters without a digit, a question, an apostrophe after a letter, a time.
  BOOST_TEST(incident_title("cafebabe is not a hash") == "cafebabe is not a hash");
  BOOST_TEST(incident_title("why? nobody knows") == "why? nobody knows");
  BOOST_TEST(incident_title("the user's mailbox isn't there") == "the user's mailbox isn't there");
  BOOST_TEST(incident_title("at 12:30:45 std::vector") == "at <n>:<n>:<n> std::vector");
  BOOST_TEST(incident_title("unterminated \"quote") == "unterminated \"quote");
  BOOST_TEST(incident_title("") == "");
  BOOST_TEST(incident_title("relay@localhost") == "relay@localhost");
}

BOOST_AUTO_TEST_CASE(titles_are_cut_at_256_bytes_on_a_utf8_boundary) {
  std::string long_error(255, 'x');
  long_error += "\xC3\xA9 and more";  // é straddles byte 256
  std::string title = incident_title(long_error);
  BOOST_TEST(title.size() == 255u);
  BOOST_TEST(title == std::string(255, 'x'));
  // Masks shrink first: 2,000 digits in runs of 10 still fill the title.
  std::string numbers;
  for (int k = 0; k < 200; ++k) numbers += "1234567890 ";
  BOOST_TEST(incident_title(numbers).size() <= kIncidentTitleMaxBytes);
  BOOST_TEST(incident_title(numbers).substr(0, 8) == "<n> <n> ");
  // A cut never leaves a trailing space.
  std::string spaced(255, 'y');
  spaced += "  z";
  BOOST_TEST(incident_title(spaced) == std::string(255, 'y'));
}

BOOST_AUTO_TEST_CASE(numbers_beside_one_stack_are_one_fingerprint) {
  std::string stack =
      "java.net.SocketTimeoutException: Read timed out\n"
      "\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:183)\n"
      "\tat com.acme.mail.Relay.send(Relay.java:42)\n";
  std::string moved = stack;
  moved.replace(moved.find("183"), 3, "191");  // another JDK build: the line moved
  BOOST_TEST(of("read timed out after 30000 ms", stack) ==
             of("read timed out after 12000 ms", moved));
}

BOOST_AUTO_TEST_CASE(class_job_type_words_and_stacks_keep_causes_apart) {
  BOOST_TEST(of("relay said no", {}, ErrorClass::transient) !=
             of("relay said no", {}, ErrorClass::timeout));
  BOOST_TEST(of("relay said no", {}, ErrorClass::transient, std::string("send_email")) !=
             of("relay said no", {}, ErrorClass::transient, std::string("send_sms")));
  BOOST_TEST(of("relay said no") != of("relay refused"));
  BOOST_TEST(of("relay said no") != of("relay said no more"));
  std::string a = "java.lang.IllegalStateException: closed\n\tat com.acme.Pool.take(Pool.java:10)";
  std::string b = "java.lang.IllegalStateException: closed\n\tat com.acme.Pool.give(Pool.java:10)";
  BOOST_TEST(of("pool closed", a) != of("pool closed", b));
  BOOST_TEST(of("pool closed", a) != of("pool closed"));
}

BOOST_AUTO_TEST_CASE(frames_of_java_python_node_and_go) {
  BOOST_TEST(stack_frame("java.lang.NullPointerException\n"
                         "\tat com.acme.Foo.bar(Foo.java:42)\n"
                         "\tat com.acme.Main.main(Main.java:7)\n") ==
             "at com.acme.Foo.bar(Foo.java:<n>)");
  BOOST_TEST(stack_frame("System.InvalidOperationException: x\n"
                         "   at Acme.Worker.Run() in C:\\src\\Worker.cs:line 12\n") ==
             "at Acme.Worker.Run() in C:\\src\\Worker.cs:line <n>");
  BOOST_TEST(stack_frame("Traceback (most recent call last):\n"
                         "  File \"/app/tasks/mail.py\", line 88, in send\n"
                         "    relay.send(msg)\n"
                         "smtplib.SMTPServerDisconnected: Connection unexpectedly closed\n") ==
             "File \"/app/tasks/mail.py\", line <n>, in send");
  BOOST_TEST(stack_frame("Error: connect ECONNREFUSED 10.0.0.5:25\n"
                         "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n"
                         "    at Object.<anonymous> (/app/index.js:10:15)\n") ==
             "at Object.<anonymous> (/app/index.js:<n>:<n>)");
  BOOST_TEST(stack_frame("panic: runtime error: index out of range [5] with length 3\n\n"
                         "goroutine 1 [running]:\n"
                         "main.handler(...)\n"
                         "\t/app/cmd/worker/main.go:42 +0x1d\n") ==
             "/app/cmd/worker/main.go:<n> +<n>");
  BOOST_TEST(stack_frame("app/models/user.rb:12:in `save'\r\n") ==
             "app/models/user.rb:<n>:in `save'");
  BOOST_TEST(stack_frame("no location here\njust words: 5\n") == "");
  BOOST_TEST(stack_frame("") == "");
}

BOOST_AUTO_TEST_CASE(a_worker_value_equal_to_a_title_hashes_apart) {
  std::string title = incident_title("relay.said.no");
  BOOST_TEST(title == "relay.said.no");
  BOOST_TEST(worker_fingerprint(kJob, title) !=
             computed_fingerprint(kJob, std::nullopt, title, ""));
  BOOST_TEST(worker_fingerprint(kJob, title) !=
             computed_fingerprint(kJob, ErrorClass::unknown, title, ""));
  BOOST_TEST(worker_fingerprint(kJob, "smtp-down") !=
             worker_fingerprint(std::string("send_sms"), "smtp-down"));
  BOOST_TEST(worker_fingerprint(kJob, "smtp-down") == worker_fingerprint(kJob, "smtp-down"));
  BOOST_TEST(worker_fingerprint(kJob, std::string(kLeaseExpiredTitle)) !=
             lease_expiry_fingerprint(kJob));
  BOOST_TEST(lease_expiry_fingerprint(kJob) !=
             computed_fingerprint(kJob, std::nullopt, kLeaseExpiredTitle, ""));
  BOOST_TEST(lease_expiry_fingerprint(kJob) != lease_expiry_fingerprint(std::nullopt));
}

BOOST_AUTO_TEST_CASE(fingerprints_are_16_lowercase_hex_digits) {
  for (const std::string& f : {of("x"), lease_expiry_fingerprint(std::nullopt),
                               worker_fingerprint(std::nullopt, "a")}) {
    BOOST_TEST(f.size() == 16u);
    BOOST_TEST(valid_fingerprint(f));
  }
  BOOST_TEST(!valid_fingerprint("0123456789ABCDEF"));
  BOOST_TEST(!valid_fingerprint("0123456789abcde"));
  BOOST_TEST(!valid_fingerprint("0123456789abcdefa"));
  BOOST_TEST(!valid_fingerprint("0123456789abcdeg"));
  // Pinned: SHA-256 of "10:send_email13:lease expired" and so on, the length-prefixed form
  // stored fingerprints were computed with (a change would split every open incident).
  BOOST_TEST(lease_expiry_fingerprint(kJob) == "06e7ccb1d6443040");
  BOOST_TEST(worker_fingerprint(kJob, "smtp-down") == "a61e8890551164c2");
  BOOST_TEST(computed_fingerprint(kJob, ErrorClass::transient, "relay said no", "") ==
             "e6cf15ce6e272463");
}

BOOST_AUTO_TEST_CASE(worker_values_are_checked) {
  BOOST_TEST(!worker_fingerprint_error("smtp.relay:timeout-1_A"));
  BOOST_TEST(!worker_fingerprint_error(std::string(128, 'a')));
  BOOST_TEST(*worker_fingerprint_error(std::string(129, 'a')) == "too_long");
  BOOST_TEST(*worker_fingerprint_error(std::string(129, ' ')) == "too_long");
  BOOST_TEST(*worker_fingerprint_error("") == "invalid");
  BOOST_TEST(*worker_fingerprint_error("a b") == "invalid");
  BOOST_TEST(*worker_fingerprint_error("caf\xC3\xA9") == "invalid");
  BOOST_TEST(*worker_fingerprint_error("a/b") == "invalid");
}

BOOST_AUTO_TEST_SUITE_END()

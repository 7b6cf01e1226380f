// What the dlqctl tests share: one dlqd with an admin and a reader token, dlqctl run as a
// subprocess (stdin given, stdout/stderr captured), and helpers that make dead messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "support/dlqd_process.hpp"
#include "support/http_client.hpp"

// Requires dlqctl's exit status, showing its output when it differs. `result` is evaluated once
// (it may be a dlqctl run).
#define REQUIRE_EXIT(result, code) \
  do { \
    const ::dlq::test::CommandResult& r_ = (result); \
    BOOST_REQUIRE_MESSAGE(r_.exit_code == (code), "exit " << r_.exit_code << " (want " << (code) \
                                                          << ")\nstdout: " << r_.out \
                                                          << "\nstderr: " << r_.err); \
  } while (false)

namespace dlq::test {

inline const std::string kAdminToken = "admin-token-0123456789abcdef";
inline const std::string kReaderToken = "reader-token-0123456789abcdef";
// A job type ctl_server() has configured `idempotent: false`.
inline constexpr const char* kNotIdempotentType = "charge_card";

DlqdProcess& ctl_server();
std::string server_url();
// An admin client of ctl_server() for setting things up.
HttpClient& setup_client();
Headers admin_headers();

// dlqctl --url <the server> --token <the admin token> ARGS, `input` on its stdin.
CommandResult dlqctl(const std::vector<std::string>& args, const std::string& input = "");
// dlqctl exactly as given (no --url or --token added).
CommandResult dlqctl_raw(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                         const std::string& input = "");

// Enqueues a message and, with max_retries 1, claims and fails it once: it is dead.
std::int64_t make_dead(const std::string& queue, const std::string& payload,
                       const std::string& job_type = "", const std::string& error_class = "transient");
boost::json::object get_message(const std::string& queue, std::int64_t id);
// dlqctl on a pseudo-terminal `columns` wide (script(1)), with --url and the admin token;
// `args` are shell words already quoted where they need it.
CommandResult dlqctl_on_terminal(const std::string& args, int columns = 80);
// A TCP port on 127.0.0.1 that nothing listens on.
unsigned short closed_port();

}  // namespace dlq::test

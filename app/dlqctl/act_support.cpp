// What dlqctl's changing commands share: waiting that Ctrl-C ends, refusals that name the flag
// answering them, and a payload edited in a file (--edit FILE|- [--not-json]).
#include "act_support.hpp"

#include <csignal>
#include <fstream>
#include <iterator>
#include <thread>

#include <boost/json.hpp>

#include "model/json_text.hpp"
#include "output.hpp"

namespace dlq::ctl {
namespace json = boost::json;

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void note_interrupt(int) { g_interrupted = 1; }

// Where JSON text stops being JSON, as FILE:LINE:COLUMN (1-based, columns in characters).
std::string json_error_place(const std::string& where, const std::string& text) {
  auto error = dlq::json_syntax_error(text);
  if (!error) return "";
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < error->offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return where + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + error->what;
}

}  // namespace

// Ctrl-C while following sets g_interrupted instead of ending dlqctl mid-line: the loop then
// says how to follow again. SA_RESTART: a request under way completes.
void catch_interrupt() {
  struct sigaction sa {};
  sa.sa_handler = note_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
}

// Sleeps `d` unless Ctrl-C comes first; true if it did.
bool interrupted_during(std::chrono::milliseconds d) {
  constexpr auto kStep = std::chrono::milliseconds(25);
  for (auto slept = std::chrono::milliseconds(0); slept < d && !g_interrupted; slept += kStep) {
    std::this_thread::sleep_for(kStep);
  }
  return g_interrupted != 0;
}

// The type of a problem answer, its last path segment ("already-succeeded"); "" if none.
std::string problem_type(const std::string& body) {
  std::error_code ec;
  json::value v = json::parse(body, ec);
  std::string type = !ec && v.is_object() ? cell(v, "type") : "";
  return type.substr(type.rfind('/') + 1);
}

// A refusal that a flag answers names the flag: the server speaks of fields (force,
// acknowledge_side_effects), the operator types flags.
[[noreturn]] void rethrow_naming_flags(const ServerRefused& e, const std::string& more) {
  std::string hint = more;
  const std::string type = problem_type(e.body);
  if (type == "already-succeeded" || type == "replay-limit") {
    hint = "add --force to replay it anyway";
  } else if (field_code(e.body, "acknowledge_side_effects") != "") {
    hint = "add --acknowledge-side-effects to replay job types that are not idempotent";
  }
  if (hint.empty()) throw e;
  throw ServerRefused(std::string(e.what()) + "\n  " + hint, e.status, e.body);
}

// The content of FILE, or of stdin for "-", less one trailing newline (editors add one).
std::string read_text(Session& s, const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(s.in), std::istreambuf_iterator<char>());
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UsageError("cannot read " + path);
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

std::string add_edited_payload(Session& s, const Flags& f, json::object& body) {
  std::string edited;
  if (f.edit) body["payload"] = edited = read_text(s, *f.edit);
  if (f.not_json) body["payload_is_json"] = false;
  return edited;
}

void rethrow_if_edit_not_json(const ServerRefused& e, const Flags& f, const std::string& edited) {
  if (!f.edit || field_code(e.body, "payload") != "invalid_json") return;
  std::string place = json_error_place(*f.edit == "-" ? "stdin" : *f.edit, edited);
  rethrow_naming_flags(e, (place.empty() ? "" : place + "; ") + "send it as text with --not-json");
}

}  // namespace dlq::ctl

// What dlqctl's changing commands share (commands_act.cpp, commands_trial.cpp): waiting that
// Ctrl-C ends, refusals that name the flag answering them, and --edit's payload.
#pragma once

#include <chrono>
#include <string>

#include <boost/json/object.hpp>

#include "session.hpp"

namespace dlq::ctl {

// How often a follower asks again (a run, a trial).
constexpr auto kPollInterval = std::chrono::milliseconds(500);

// Ctrl-C while following sets a flag instead of ending dlqctl mid-line: the loop then says how
// to follow again. SA_RESTART: a request under way completes.
void catch_interrupt();
// Sleeps `d` unless Ctrl-C comes first; true if it did.
bool interrupted_during(std::chrono::milliseconds d);

// The type of a problem answer, its last path segment ("already-succeeded"); "" if none.
std::string problem_type(const std::string& body);
// A refusal that a flag answers names the flag (the server speaks of fields, the operator types
// flags); `more` is a hint of the caller's.
[[noreturn]] void rethrow_naming_flags(const ServerRefused& e, const std::string& more = "");

// The content of FILE, or of stdin for "-", less one trailing newline (editors add one).
std::string read_text(Session& s, const std::string& path);
// --edit FILE|- (as read_text reads it) as the body's "payload", and --not-json as
// "payload_is_json": false. Returns the text sent ("" without --edit).
std::string add_edited_payload(Session& s, const Flags& f, boost::json::object& body);
// A 422 on the edited payload's JSON, named at FILE:LINE:COLUMN with --not-json as the way out;
// returns when `e` is another refusal.
void rethrow_if_edit_not_json(const ServerRefused& e, const Flags& f, const std::string& edited);

// trial Q ID: starts a trial run (or finds the open one); --wait follows it to its end: exit 0
// when it succeeded, 1 when it failed or expired.
int trial_command(Session& s, const std::string& queue, const std::string& id, const Flags& f);

}  // namespace dlq::ctl

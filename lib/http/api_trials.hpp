// The trial-run routes (issue 36): an operator starts a trial of one dead message (or of up to
// ten by id) and reads it; the worker holding a trial's lease answers it on its own routes.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include "config/config.hpp"
#include "core/trials.hpp"
#include "http/request.hpp"
#include "http/router.hpp"

namespace dlq::http {

// A trial as every answer shows it: {"trial_id", "queue", "message_id", "status", "actor",
// "reason", "payload_edited", "created_at", "claimed_at", "finished_at", "worker",
// "worker_version", "error", "error_class", "stack", "cause", "would_effects"}.
boost::json::object trial_json(const Trial& t, const core::Redactor& redactor);

class TrialHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  TrialHandlers(core::TrialDesk& trials, const Clock& clock, const core::Redactor& redactor,
                const Config& config);

  R start_trial(const Request& req, const RouteMatch& m);
  R trial(const Request& req, const RouteMatch& m);
  R succeed_trial(const Request& req, const RouteMatch& m);
  R fail_trial(const Request& req, const RouteMatch& m);
  R extend_trial(const Request& req, const RouteMatch& m);
  R start_trials(const Request& req, const RouteMatch& m);  // POST /dlq/trials

 private:
  R answer_trial(const Request& req, const RouteMatch& m, core::TrialAnswer::Kind kind);

  core::TrialDesk& trials_;
  const Clock& clock_;
  const core::Redactor& redactor_;
  const Config& config_;
};

}  // namespace dlq::http

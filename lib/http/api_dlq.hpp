// The dead-letter desk's handlers: GET /dlq, the two-step POST /dlq/replay and POST /dlq/dismiss,
// GET /dlq/hourly, the incidents (GET /dlq/incidents[/{fingerprint}], POST …/{fingerprint}/mute)
// and the replay runs (GET /dlq/replays[/{id}], POST /dlq/replays/{id}/pause|resume|cancel).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include "config/config.hpp"
#include "core/desk.hpp"
#include "core/redaction.hpp"
#include "http/request.hpp"
#include "http/router.hpp"
#include "model/time.hpp"

namespace dlq::http {

// The body of a batch action's preview, the same for replay and dismiss (needs_acknowledgement
// empty for the latter): matched, by_job_type, needs_acknowledgement, confirm_token, expires_at
// and the sample, its messages as people may see them.
boost::json::object preview_json(const core::BatchPreviewView& p, const core::Redactor& redactor);

class DlqHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  DlqHandlers(core::DeadLetterDesk& desk, const Clock& clock, const core::Redactor& redactor,
              const Config& config);

  R dead_letters(const Request& req, const RouteMatch& m);
  R dlq_replay(const Request& req, const RouteMatch& m);
  R dlq_dismiss(const Request& req, const RouteMatch& m);
  R dead_hourly(const Request& req, const RouteMatch& m);
  R incidents(const Request& req, const RouteMatch& m);
  R incident(const Request& req, const RouteMatch& m);
  R mute_incident(const Request& req, const RouteMatch& m);
  R replay_runs(const Request& req, const RouteMatch& m);
  R replay_run(const Request& req, const RouteMatch& m);
  R pause_run(const Request& req, const RouteMatch& m);
  R resume_run(const Request& req, const RouteMatch& m);
  R cancel_run(const Request& req, const RouteMatch& m);

 private:
  R change_run(const Request& req, const RouteMatch& m, core::RunAction action);

  core::DeadLetterDesk& desk_;
  const Clock& clock_;
  const core::Redactor& redactor_;
  const Config& config_;
};

}  // namespace dlq::http

// The dead-letter desk's answers that tests read without a server: the preview of a batch action.
#pragma once

#include <boost/json/object.hpp>

#include "core/desk.hpp"
#include "core/redaction.hpp"

namespace dlq::http {

// The body of a batch action's preview, the same for replay and dismiss (needs_acknowledgement
// empty for the latter): matched, by_job_type, needs_acknowledgement, confirm_token, expires_at
// and the sample, its messages as people may see them.
boost::json::object preview_json(const core::BatchPreviewView& p, const core::Redactor& redactor);

}  // namespace dlq::http

// Requests of recorded side effects and trial runs (issue 36), decoded with every problem
// reported, in body order, as the other requests are (core/requests.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "config/config.hpp"
#include "core/requests.hpp"
#include "core/transitions.hpp"
#include "core/trials.hpp"

namespace dlq::core {

// POST .../effects: lease_id, key (1..128 bytes) and state required; description at most 512
// bytes, result a string of at most 4,096 (null: absent).
FieldErrors decode_effect(const boost::json::object& body, EffectInput& out);

// A trial's start: reason, an edited payload and payload_is_json, as replay takes them.
FieldErrors decode_trial_start(const boost::json::object& body, const Config& config,
                               TrialStartInput& out);
// POST /dlq/trials: ids (1 to 10 positive integers) and reason.
FieldErrors decode_trial_batch(const boost::json::object& body, std::vector<MessageId>& ids,
                               std::optional<std::string>& reason);
// A trial's succeed or fail (out.kind set by the caller): lease_id required, would_effects (at
// most limits.max_effects_per_message {key, description}); fail takes fail's members. A trial's
// extend is read by decode_extend.
FieldErrors decode_trial_answer(const boost::json::object& body, const Config& config,
                                TrialAnswer& out);

}  // namespace dlq::core

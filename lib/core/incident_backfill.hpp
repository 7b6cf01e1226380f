// The backfill of incidents: dead messages stored before fingerprints (migration 012) get the
// fingerprint and title their death would have computed, from their last error, error class, job
// type, dead reason and last failed attempt's stack, and join their incidents' counts; 1,000 per
// transaction in id order. Start-up waits for it at most a few seconds (backfill_for); the rest
// runs as a leader-only task, logged every 10 s. Each batch writes only rows still without a
// fingerprint, so two nodes that run it at once never count a message twice.
#pragma once

#include <chrono>

#include <boost/asio/awaitable.hpp>

#include "core/redaction.hpp"
#include "core/task_host.hpp"
#include "store/store.hpp"

namespace dlq::core {

inline constexpr const char* kIncidentBackfillTask = "incident-backfill";
inline constexpr int kBackfillBatch = 1000;

// The fingerprint and title a dead message's death would have given it.
store::PrintedDead print_dead(const store::UnprintedDead& m, const Redactor& redactor);

struct BackfillProgress {
  long long read = 0;     // messages without a fingerprint read
  long long written = 0;  // of those, given one by this node
  bool done = false;      // the last batch read none
};

// Batches until none is left or `budget` has passed (checked between batches), from id 0.
boost::asio::awaitable<BackfillProgress> backfill_for(store::Store& store, const Redactor& redactor,
                                                      std::chrono::milliseconds budget);

TaskSpec incident_backfill_task(store::Store& store, const Redactor& redactor);

}  // namespace dlq::core

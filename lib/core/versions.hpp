// A message's payload versions (GET .../versions): version 1 as enqueued, then what each edited
// replay set, the last being the payload it holds now. Read back from the history, where each
// edited replay keeps the payload it replaced.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/message.hpp"
#include "store/store.hpp"

namespace dlq::core {

// `after` versions skipped, then at most `limit`.
struct VersionsPage {
  long long after = 0;
  long long limit = 20;
};

struct PayloadVersion {
  long long version = 1;
  std::string payload;  // as stored; the HTTP layer redacts it for people
  TimeMs at = 0;        // version 1: created_at; n + 1: the n-th edited replay's time
  std::optional<std::string> actor;
  std::optional<std::string> reason;
};

struct VersionsView {
  std::vector<PayloadVersion> versions;  // oldest first
  std::optional<long long> next_after;   // the page's last version, when another follows
};

// The edited replays a page needs, as MessageEdits' `from` and `count`: version v's payload is
// the v-th edit's previous payload (or the current one after the last edit), and its time, actor
// and reason are the (v-1)-th edit's. One more than the page shows says whether another follows.
struct EditsWindow {
  long long from = 0;
  long long count = 0;
};
EditsWindow edits_window(const VersionsPage& page);

// The page, from the message and the edits edits_window(page) asked for.
VersionsView versions_page(const store::MessageEdits& read, const VersionsPage& page);

}  // namespace dlq::core

// Payload versions from the edited replays of a message's history.
#include "core/versions.hpp"

#include <algorithm>

namespace dlq::core {

EditsWindow edits_window(const VersionsPage& page) {
  // Versions after+1 .. after+limit need edits after-1 .. after+limit-1 (0-based); the last one
  // of those also tells that version after+limit+1 exists.
  long long from = std::max(page.after - 1, 0LL);
  return {from, page.after + page.limit - from};
}

VersionsView versions_page(const store::MessageEdits& read, const VersionsPage& page) {
  const EditsWindow window = edits_window(page);
  const auto& edits = read.edits;
  const long long got = static_cast<long long>(edits.size());
  // With fewer edits than asked for, all of them from `from` on are here: the current payload
  // is the version after the last one.
  const bool complete = got < window.count;
  auto edit = [&](long long index) -> const store::PayloadEdit& {
    return edits[static_cast<std::size_t>(index - window.from)];
  };
  VersionsView view;
  for (long long v = page.after + 1; v <= page.after + page.limit; ++v) {
    const long long index = v - 1;  // the edit that replaced version v
    PayloadVersion out;
    out.version = v;
    if (index < window.from + got) {
      out.payload = edit(index).previous_payload;
    } else if (complete && index == window.from + got) {
      out.payload = read.message.payload;
    } else {
      break;
    }
    if (v == 1) {
      out.at = read.message.created_at;
    } else {
      const auto& set_by = edit(v - 2);
      out.at = set_by.at;
      out.actor = set_by.actor;
      out.reason = set_by.reason;
    }
    view.versions.push_back(std::move(out));
  }
  if (!complete && !view.versions.empty()) view.next_after = view.versions.back().version;
  return view;
}

}  // namespace dlq::core

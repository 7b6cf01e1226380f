// libFuzzer target over the config parser: one input is the text of a dlqd.json. parse_config may
// refuse it with a ConfigError (what dlqd prints and exits on); any other exception, a crash or
// a sanitizer report is a finding. What it accepts is then used as dlqd uses it at start-up, and
// must print (--print-config) to a document that parses back to the same configuration.
//   scripts/fuzz.sh SECONDS config   (seeds: tests/fuzz/corpus_config)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/database_url.hpp"
#include "config/web_origin.hpp"
#include "config/webhook_url.hpp"

using namespace dlq;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "config fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Config config;
  try {
    config = parse_config(text);
  } catch (const ConfigError&) {
    return 0;  // refused, with the message dlqd prints
  }

  // What passed validation must not be refused later, when dlqd opens the database, starts the
  // alerts and builds its origin guard (a ConfigError escaping here is a finding too).
  (void)parse_database_url(config.database.url, config.database.connect_timeout_seconds);
  if (!config.alerts.webhook_url.empty()) (void)parse_webhook_url(config.alerts.webhook_url);
  for (const auto& host : config.http.allowed_hosts) {
    if (!normalize_allowed_host(host)) {
      fail("an accepted allowed_hosts entry does not normalize", host);
    }
  }
  for (const auto& origin : config.http.allowed_origins) {
    if (!normalize_allowed_origin(origin)) {
      fail("an accepted allowed_origins entry does not normalize", origin);
    }
  }
  for (const auto& [queue, policy] : config.queues) {
    (void)config.retention_for(queue);
    (void)config.alerts_for(queue);
    (void)config.max_replays_for(queue, std::nullopt);
    for (const auto& [job_type, job_policy] : config.job_types) {
      (void)config.max_replays_for(queue, job_type);
    }
  }

  // --print-config's output is a configuration too: it reads back to what was printed.
  std::string printed = print_config(config);
  Config again;
  try {
    again = parse_config(printed);
  } catch (const ConfigError& e) {
    fail("print_config wrote a document parse_config refuses", printed + "\n" + e.what());
  }
  if (print_config(again) != printed) fail("print_config does not read back the same", printed);
  return 0;
}

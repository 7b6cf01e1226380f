// Damaged files on SQLite (issue 37, part 3): a copy of a seeded database is damaged (the file
// truncated at three points, the log cut mid-frame, a log frame garbled, bytes flipped in data
// pages), then dlqd starts on it without faults and every seeded message is read back: pages of
// each queue, each message by id, GET /dlq, GET /queues, a claim and an enqueue.
//
// What dlqd promises: it never dies by a signal and never hangs. It refuses to start with a
// non-zero exit status and a message naming the database file, or it starts and answers each
// request 2xx, 4xx or `500 internal-error`, logging the file with every 500. What the damage
// cost is counted, not asserted away: a flipped payload byte reads back wrong (SQLite has no
// page checksums), and recovery stops at the first bad log frame, losing the commits after it.
// The counts go in docs/reliability.md.
//   DLQ_DAMAGED_RUNS (20): seeded runs of 8 flipped bytes (scripts/test.sh: 5).
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "faults/fault_support.hpp"
#include "support/http_client.hpp"
#include "support/preconditions.hpp"
#include "support/temp_dir.hpp"

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace dlq::test;
using namespace std::chrono_literals;

namespace {

constexpr int kQueues = 4;
constexpr int kMessages = 240;  // in the checkpointed seed
constexpr int kDead = 40;       // of them failed to dead
constexpr int kLate = 60;       // enqueued after it, left in the log by kill -9
const char* const kQuiet = "{\"log\": {\"level\": \"warn\"}}";

struct Seeded {
  long long id;
  std::string queue;
  std::string payload;
};

std::string queue_of(int i) { return "dmg" + std::to_string(i % kQueues); }

// A payload its reader can recognize: its number, then letters up to 300 bytes.
std::string payload_of(const std::string& kind, int i) {
  std::string p = kind + "-" + std::to_string(i) + "-";
  while (p.size() < 300) p += static_cast<char>('a' + p.size() % 26);
  return p;
}

Seeded enqueue(HttpClient& http, const std::string& q, const std::string& payload) {
  auto r = http.post("/queues/" + q + "/messages", json::object{{"payload", payload}});
  if (r.status != 201) throw std::runtime_error("seed enqueue: " + r.body);
  return {r.json().at("id").as_int64(), q, payload};
}

// Two seeds, made once: `checkpointed` (dlqd stopped gracefully: no log left) and `logged` (the
// same, then kLate single enqueues, each its own commit, and kill -9: they live only in the -wal).
struct Seeds {
  TempDir dir;
  std::string checkpointed, logged;
  std::vector<Seeded> messages, late;
};

const Seeds& seeds() {
  static const std::unique_ptr<Seeds> made = [] {
    auto s = std::make_unique<Seeds>();
    s->checkpointed = s->dir.file("checkpointed.db");
    {
      DlqdProcess dlqd(DlqdOptions(kQuiet, "sqlite:" + s->checkpointed));
      HttpClient http(dlqd.port());
      for (int i = 0; i < kMessages; ++i) {
        s->messages.push_back(enqueue(http, queue_of(i), payload_of("seeded", i)));
      }
      for (int i = 0; i < kDead; ++i) {
        auto r = http.post("/queues/" + queue_of(i) + "/claim",
                           json::object{{"visibility_timeout", 3600}});
        const json::value body = r.json();
        const auto& m = body.at("message").as_object();
        auto f = http.post("/queues/" + queue_of(i) + "/messages/" +
                               std::to_string(m.at("id").as_int64()) + "/fail",
                           json::object{{"lease_id", m.at("lease_id")}, {"error", "boom"},
                                        {"retryable", false}});
        if (f.status != 200) throw std::runtime_error("seed fail: " + f.body);
      }
      if (dlqd.terminate() != 0) throw std::runtime_error("the seed's dlqd did not stop cleanly");
    }
    s->logged = s->dir.file("logged.db");
    fs::copy_file(s->checkpointed, s->logged);
    {
      DlqdProcess dlqd(DlqdOptions(kQuiet, "sqlite:" + s->logged));
      HttpClient http(dlqd.port());
      for (int i = 0; i < kLate; ++i) {
        s->late.push_back(enqueue(http, queue_of(i), payload_of("late", i)));
      }
      dlqd.kill9();
    }
    return s;
  }();
  return *made;
}

// A copy of a seed, with its log when it has one (never the -shm: SQLite rebuilds it).
std::string copy_seed(const std::string& seed, const TempDir& dir) {
  const std::string path = dir.file("dlq.db");
  fs::copy_file(seed, path);
  if (fs::exists(seed + "-wal")) fs::copy_file(seed + "-wal", path + "-wal");
  return path;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // As dlqd makes it: a file open to others adds a warning naming it to the log.
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
}

unsigned be32(const std::string& b, std::size_t at) {
  return (static_cast<unsigned>(static_cast<unsigned char>(b[at])) << 24) |
         (static_cast<unsigned>(static_cast<unsigned char>(b[at + 1])) << 16) |
         (static_cast<unsigned>(static_cast<unsigned char>(b[at + 2])) << 8) |
         static_cast<unsigned>(static_cast<unsigned char>(b[at + 3]));
}

// The log's layout: a 32-byte header (page size at 8, salts at 16 and 20), then frames of a
// 24-byte header (salts at 8 and 12) and a page. The frames of the current generation are
// those that carry the header's salts, from the first on.
struct WalLayout {
  std::size_t page_size = 0;
  std::size_t frames = 0;
  std::size_t frame_bytes() const { return 24 + page_size; }
  std::size_t frame_at(std::size_t k) const { return 32 + k * frame_bytes(); }
};

WalLayout wal_layout(const std::string& wal) {
  WalLayout w;
  if (wal.size() < 32) return w;
  w.page_size = be32(wal, 8);
  while (w.frame_at(w.frames + 1) <= wal.size() &&
         be32(wal, w.frame_at(w.frames) + 8) == be32(wal, 16) &&
         be32(wal, w.frame_at(w.frames) + 12) == be32(wal, 20)) {
    ++w.frames;
  }
  return w;
}

struct Tally {
  int runs = 0, clean_starts = 0, refused = 0, runs_with_500 = 0, answers_500 = 0;
  int wrong_payloads = 0, not_json = 0, missing = 0, late_missing = 0;
  std::vector<std::string> violations;
};

// Sets off SIGKILL on dlqd when the requests take longer than `limit`: a hang becomes a dropped
// connection (and a violation) instead of a stuck test.
class Watchdog {
 public:
  Watchdog(pid_t pid, std::chrono::seconds limit)
      : thread_([this, pid, limit] {
          std::unique_lock lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            fired_ = true;
            ::kill(pid, SIGKILL);
          }
        }) {}
  ~Watchdog() { stop(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void stop() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() const { return fired_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

// dlqd on the damaged file at `path`: starts or is refused, then answers the reads. `expected`
// are the messages it held before the damage; `late` those of them only the log held.
void run_damaged(const std::string& path, const std::string& label,
                 const std::vector<Seeded>& expected, const std::vector<Seeded>& late,
                 Tally& tally) {
  ++tally.runs;
  auto violation = [&](const std::string& what) {
    tally.violations.push_back(label + ": " + what);
  };
  std::unique_ptr<DlqdProcess> dlqd;
  try {
    dlqd = std::make_unique<DlqdProcess>(DlqdOptions(kQuiet, "sqlite:" + path));
  } catch (const std::exception&) {
    // Refused (or hung, or killed at start): the same start again, for its exit status.
    ++tally.refused;
    TempDir dir;
    {
      std::ofstream config(dir.file("dlqd.json"));
      config << kQuiet;
    }
    try {
      CommandResult r = run_dlqd({"--config", dir.file("dlqd.json"), "--listen", "127.0.0.1:0",
                                  "--db", "sqlite:" + path},
                                 {}, 30s);
      if (r.exit_code <= 0) {
        violation("refused to start with exit status " + std::to_string(r.exit_code));
      }
      if (r.err.find(path) == std::string::npos) {
        violation("refused to start without naming the file: " + r.err);
      }
    } catch (const std::exception& e) {
      violation(std::string("a failed start, then: ") + e.what());
    }
    return;
  }
  ++tally.clean_starts;
  HttpClient http(dlqd->port());
  int answers_500 = 0;
  // Each answer: 2xx, 4xx, or a 500 internal-error problem.
  auto answered = [&](const HttpResponse& r, const std::string& what) {
    if (r.status >= 200 && r.status < 500) return true;
    if (r.status == 500 && r.body.find("internal-error") != std::string::npos) {
      ++answers_500;
      return false;
    }
    violation(what + " answered " + std::to_string(r.status) + ": " + r.body.substr(0, 200));
    return false;
  };
  // A 200 whose body is not JSON: a damaged byte that is not UTF-8 passes through as it is.
  json::value last;
  auto parsed = [&](const HttpResponse& r, const std::string& what) -> const json::value* {
    json::error_code ec;
    last = json::parse(r.body, ec);
    if (!ec) return &last;
    ++tally.not_json;
    BOOST_TEST_MESSAGE(label << ": " << what << " is not JSON (" << ec.message() << ")");
    return nullptr;
  };
  Watchdog watchdog(dlqd->pid(), 60s);
  try {
    for (int q = 0; q < kQueues; ++q) {
      const std::string base = "/queues/" + queue_of(q) + "/messages?limit=100&offset=";
      for (int offset = 0; offset < 1000; offset += 100) {
        auto r = http.get(base + std::to_string(offset));
        if (!answered(r, "a page of " + queue_of(q)) || r.status != 200) break;
        const json::value* page = parsed(r, "a page of " + queue_of(q));
        if (page == nullptr || page->at("messages").as_array().size() < 100) break;
      }
    }
    for (const auto& m : expected) {
      auto r = http.get("/queues/" + m.queue + "/messages/" + std::to_string(m.id));
      if (!answered(r, "message " + std::to_string(m.id))) continue;
      if (r.status == 404) {
        ++tally.missing;
        bool was_late = false;
        for (const auto& l : late) was_late = was_late || l.id == m.id;
        if (was_late) ++tally.late_missing;
        continue;
      }
      if (r.status != 200) {
        violation("message " + std::to_string(m.id) + " answered " + std::to_string(r.status));
        continue;
      }
      const json::value* body = parsed(r, "message " + std::to_string(m.id));
      const json::value* payload = body ? body->as_object().if_contains("payload") : nullptr;
      if (payload == nullptr || !payload->is_string() || payload->as_string() != m.payload) {
        ++tally.wrong_payloads;
      }
    }
    std::string after;
    for (int pages = 0; pages < 20; ++pages) {
      auto r = http.get("/dlq?limit=100" + (after.empty() ? "" : "&after_id=" + after));
      if (!answered(r, "a page of /dlq") || r.status != 200) break;
      const json::value* page = parsed(r, "a page of /dlq");
      if (page == nullptr) break;
      const json::value& next = page->at("next_after_id");
      if (next.is_null()) break;
      after = json::serialize(next);
    }
    answered(http.get("/queues"), "GET /queues");
    answered(http.post("/queues/" + queue_of(1) + "/claim",
                       json::object{{"visibility_timeout", 60}}),
             "a claim");
    answered(http.post("/queues/dmg-new/messages", json::object{{"payload", "after the damage"}}),
             "an enqueue");
  } catch (const std::exception& e) {
    violation(std::string("a request failed (connection dropped?): ") + e.what());
  }
  watchdog.stop();
  if (watchdog.fired()) violation("the requests took over 60 s: dlqd was killed");
  int status = -1;
  try {
    status = dlqd->terminate();
  } catch (const std::exception& e) {
    violation(std::string("stopping: ") + e.what());
    dlqd->kill9();
  }
  if (status < 0) violation("dlqd ended by signal " + std::to_string(-status));
  if (answers_500 > 0) {
    ++tally.runs_with_500;
    tally.answers_500 += answers_500;
    // Each 500 is logged as "request failed", naming the file.
    std::istringstream log(dlqd->log());
    int logged = 0;
    for (std::string line; std::getline(log, line);) {
      if (line.find("\"request failed\"") == std::string::npos) continue;
      if (++logged == 1) BOOST_TEST_MESSAGE(label << ": " << line);
      if (line.find(path) == std::string::npos) {
        violation("the log does not name the file: " + line);
      }
    }
    if (logged < answers_500) {
      violation(std::to_string(answers_500) + " answers 500, " + std::to_string(logged) +
                " logged");
    }
  }
}

void report(const std::string& what, const Tally& t) {
  BOOST_TEST_MESSAGE(what << ": " << t.runs << " runs, " << t.clean_starts << " started, "
                          << t.refused << " refused, " << t.answers_500 << " answers 500, "
                          << t.wrong_payloads << " payloads wrong, " << t.not_json
                          << " answers not JSON, " << t.missing << " messages missing, "
                          << t.violations.size() << " violations");
  std::printf("damaged files, %s: %d runs, %d clean starts, %d refused starts naming the file, "
              "%d answers 500 (in %d runs), %d payloads read back wrong, %d 200 answers not JSON "
              "(a damaged byte that is not UTF-8), %d messages missing (%d of them only in the "
              "log), %zu violations\n",
              what.c_str(), t.runs, t.clean_starts, t.refused, t.answers_500, t.runs_with_500,
              t.wrong_payloads, t.not_json, t.missing, t.late_missing, t.violations.size());
  BOOST_TEST(t.violations.empty(), what << ": " << t.violations.size() << " violations");
  for (const auto& v : t.violations) BOOST_ERROR(v);
}

std::vector<Seeded> all_messages() {
  std::vector<Seeded> all = seeds().messages;
  all.insert(all.end(), seeds().late.begin(), seeds().late.end());
  return all;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(damaged_files, *boost::unit_test::precondition(on_sqlite))

// Inside the 100-byte header, on a page boundary halfway, and mid-page near the end.
BOOST_AUTO_TEST_CASE(the_database_truncated_at_three_points) {
  const auto size = fs::file_size(seeds().checkpointed);
  const std::size_t page = 4096;
  Tally t;
  for (std::uintmax_t at : {std::uintmax_t{50}, size / page / 2 * page, size - page - 1234}) {
    TempDir dir;
    const std::string path = copy_seed(seeds().checkpointed, dir);
    fs::resize_file(path, at);
    run_damaged(path, "truncated at " + std::to_string(at) + " of " + std::to_string(size),
                seeds().messages, {}, t);
  }
  report("truncated at three points", t);
}

// The log cut in the middle of a frame halfway through it: recovery keeps the commits before
// that frame and silently drops the rest.
BOOST_AUTO_TEST_CASE(the_log_cut_mid_frame) {
  TempDir dir;
  const std::string path = copy_seed(seeds().logged, dir);
  const WalLayout w = wal_layout(read_bytes(path + "-wal"));
  BOOST_TEST_REQUIRE(w.frames > 10u, "the seed's log holds " << w.frames << " frames");
  fs::resize_file(path + "-wal", w.frame_at(w.frames / 2) + w.frame_bytes() / 2);
  Tally t;
  run_damaged(path, "log cut in frame " + std::to_string(w.frames / 2) + " of " +
                        std::to_string(w.frames), all_messages(), seeds().late, t);
  report("log cut mid-frame", t);
  BOOST_TEST(t.late_missing > 0, "a cut halfway through the log lost no commit");
  BOOST_TEST(t.late_missing < kLate, "a cut halfway through the log lost every commit");
}

// A frame halfway through the log garbled (its checksum no longer matches): the same as a cut.
BOOST_AUTO_TEST_CASE(a_log_frame_garbled) {
  TempDir dir;
  const std::string path = copy_seed(seeds().logged, dir);
  std::string wal = read_bytes(path + "-wal");
  const WalLayout w = wal_layout(wal);
  BOOST_TEST_REQUIRE(w.frames > 10u, "the seed's log holds " << w.frames << " frames");
  const std::size_t at = w.frame_at(w.frames / 2) + 24 + w.page_size / 2;
  for (std::size_t i = 0; i < 16; ++i) wal[at + i] = static_cast<char>(wal[at + i] ^ 0x5a);
  write_bytes(path + "-wal", wal);
  Tally t;
  run_damaged(path, "log frame " + std::to_string(w.frames / 2) + " of " +
                        std::to_string(w.frames) + " garbled", all_messages(), seeds().late, t);
  report("log frame garbled", t);
  BOOST_TEST(t.late_missing > 0, "a garbled frame halfway through the log lost no commit");
}

// Each run: 8 bytes flipped at random in pages 2 and up of the checkpointed seed (page 1 holds
// the file header), seeded with the run's number so a failing run can be repeated.
BOOST_AUTO_TEST_CASE(eight_bytes_flipped_in_data_pages) {
  const int runs = env_count("DLQ_DAMAGED_RUNS", 20);
  const std::string seed = read_bytes(seeds().checkpointed);
  const std::size_t page = 4096;
  Tally t;
  for (int run = 1; run <= runs; ++run) {
    std::mt19937 random(static_cast<unsigned>(run));
    std::uniform_int_distribution<std::size_t> offset(page, seed.size() - 1);
    std::uniform_int_distribution<int> mask(1, 255);
    std::string bytes = seed;
    std::string flipped;
    for (int i = 0; i < 8; ++i) {
      const std::size_t at = offset(random);
      bytes[at] = static_cast<char>(bytes[at] ^ mask(random));
      flipped += (flipped.empty() ? "" : ",") + std::to_string(at);
    }
    TempDir dir;
    const std::string path = dir.file("dlq.db");
    write_bytes(path, bytes);
    run_damaged(path, "run " + std::to_string(run) + " (bytes " + flipped + ")", seeds().messages,
                {}, t);
  }
  report(std::to_string(runs) + " runs of 8 flipped bytes", t);
}

BOOST_AUTO_TEST_SUITE_END()

// The fault VFS (fault_vfs.hpp): power loss, power cuts at a sync (whole or torn), and one
// failing call. It wraps SQLite's default VFS; the WAL-gathering VFS then wraps it, so a gathered
// write reaches it as the one call the disk would see.
//
// Power loss: every write and truncation of the database or its log is held, per file name (each
// connection opens its own handle on the same files, and must read what another wrote), until a
// sync of that file applies them in order and syncs for real. Reads and sizes see the held
// changes. Memory-mapped reads are refused (xFetch gives no page) so that every read comes here.
#include "store/fault_vfs.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "model/logging.hpp"
#include "store/vfs_wrap.hpp"

namespace dlq::store {
namespace {

constexpr sqlite3_int64 kSector = 512;

// One held change: a write of `bytes` at `offset`, or a truncation to `offset` bytes.
struct Held {
  unsigned long long seq;  // the order of all held changes, across files (for a torn cut)
  bool truncate;
  sqlite3_int64 offset;
  std::string bytes;
};

struct Overlay {
  std::vector<Held> held;
};

struct File {
  sqlite3_file base;    // pMethods: ours
  sqlite3_file* real;   // the wrapped VFS's file, in the same allocation, after this struct
  Overlay* overlay;     // power loss: this file's held changes (shared by every handle on it)
  bool counted;         // the database or its log: its calls count for fail_call
  const char* kind;     // "database" or "log", for the fault's log line
};
static_assert(sizeof(File) % 8 == 0, "the wrapped file follows it, 8-byte aligned");

SqliteFaults faults;
std::mutex mu;  // guards overlays and the held changes in them
std::map<std::string, Overlay> overlays;
unsigned long long next_seq = 0;
std::atomic<long long> syncs{0};
std::atomic<long long> calls{0};
std::atomic<bool> cutting{false};

File* as_file(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
const sqlite3_io_methods* real_methods(File* f) { return f->real->pMethods; }

// fail_call: true when this call is the one that fails.
bool fails(File* f, const char* call, bool is_write) {
  if (faults.fail_call <= 0 || !f->counted) return false;
  if (faults.fail_full && !is_write) return false;
  if (calls.fetch_add(1) + 1 != faults.fail_call) return false;
  log::error("testing fault fired", {{"call", call},
                                     {"file", f->kind},
                                     {"n", std::to_string(faults.fail_call)},
                                     {"with", faults.fail_full ? "full" : "ioerr"}});
  return true;
}

// A power cut stops every other thread's I/O where it stands.
void halt_if_cutting() {
  while (cutting.load()) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// The size of the file with its held changes (mu held).
int logical_size(File* f, sqlite3_int64* size) {
  if (int rc = real_methods(f)->xFileSize(f->real, size); rc != SQLITE_OK) return rc;
  for (const Held& h : f->overlay->held) {
    *size = h.truncate ? h.offset : std::max<sqlite3_int64>(*size, h.offset + static_cast<sqlite3_int64>(h.bytes.size()));
  }
  return SQLITE_OK;
}

// Writes the held changes to the file, in order, and forgets them (mu held).
int apply_held(File* f) {
  for (const Held& h : f->overlay->held) {
    int rc = h.truncate ? real_methods(f)->xTruncate(f->real, h.offset)
                        : real_methods(f)->xWrite(f->real, h.bytes.data(),
                                                  static_cast<int>(h.bytes.size()), h.offset);
    if (rc != SQLITE_OK) return rc;
  }
  f->overlay->held.clear();
  return SQLITE_OK;
}

// The cut: what the disk holds is what was synced, plus (torn) a prefix of the held changes.
[[noreturn]] void power_cut() {
  cutting.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // answers on their way arrive
  std::lock_guard lock(mu);
  std::vector<std::pair<const std::string*, const Held*>> all;
  for (const auto& [name, overlay] : overlays) {
    for (const Held& h : overlay.held) all.emplace_back(&name, &h);
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.second->seq < b.second->seq; });
  std::size_t landed = 0;
  if (faults.power_cut_tear && !all.empty()) {
    std::mt19937_64 random(std::random_device{}());
    std::size_t torn = std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(random);
    for (std::size_t i = 0; i <= torn; ++i) {
      const auto& [name, h] = all[i];
      int fd = ::open(name->c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) continue;
      if (h->truncate) {
        if (i < torn && ::ftruncate(fd, h->offset) != 0) {}
      } else {
        sqlite3_int64 length = static_cast<sqlite3_int64>(h->bytes.size());
        if (i == torn) {  // this one stops at a sector boundary inside it
          sqlite3_int64 end = h->offset + std::uniform_int_distribution<sqlite3_int64>(0, length)(random);
          length = std::max<sqlite3_int64>(0, end / kSector * kSector - h->offset);
        }
        if (length > 0 && ::pwrite(fd, h->bytes.data(), static_cast<std::size_t>(length), h->offset) < 0) {}
      }
      ::fsync(fd);
      ::close(fd);
      ++landed;
    }
  }
  log::error("testing power cut", {{"sync", std::to_string(syncs.load())},
                                   {"held_changes", std::to_string(all.size())},
                                   {"landed", std::to_string(landed)}});
  log::flush();
  ::_exit(137);
}

int file_read(sqlite3_file* file, void* buf, int amount, sqlite3_int64 offset) {
  File* f = as_file(file);
  halt_if_cutting();
  if (fails(f, "read", false)) return SQLITE_IOERR_READ;
  if (f->overlay == nullptr) return real_methods(f)->xRead(f->real, buf, amount, offset);
  std::lock_guard lock(mu);
  int rc = real_methods(f)->xRead(f->real, buf, amount, offset);
  if (f->overlay->held.empty() || (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)) return rc;
  sqlite3_int64 size = 0;
  if (int s = real_methods(f)->xFileSize(f->real, &size); s != SQLITE_OK) return s;
  auto* out = static_cast<unsigned char*>(buf);
  const sqlite3_int64 end = offset + amount;
  for (const Held& h : f->overlay->held) {
    if (h.truncate) {
      size = h.offset;
      if (h.offset < end) {
        sqlite3_int64 from = std::max(h.offset, offset);
        std::memset(out + (from - offset), 0, static_cast<std::size_t>(end - from));
      }
      continue;
    }
    const sqlite3_int64 h_end = h.offset + static_cast<sqlite3_int64>(h.bytes.size());
    size = std::max(size, h_end);
    sqlite3_int64 from = std::max(h.offset, offset), to = std::min(h_end, end);
    if (from < to) {
      std::memcpy(out + (from - offset), h.bytes.data() + (from - h.offset),
                  static_cast<std::size_t>(to - from));
    }
  }
  return end <= size ? SQLITE_OK : SQLITE_IOERR_SHORT_READ;
}

int file_write(sqlite3_file* file, const void* buf, int amount, sqlite3_int64 offset) {
  File* f = as_file(file);
  halt_if_cutting();
  if (fails(f, "write", true)) return faults.fail_full ? SQLITE_FULL : SQLITE_IOERR_WRITE;
  if (f->overlay == nullptr) return real_methods(f)->xWrite(f->real, buf, amount, offset);
  std::lock_guard lock(mu);
  f->overlay->held.push_back(
      {next_seq++, false, offset, std::string(static_cast<const char*>(buf), static_cast<std::size_t>(amount))});
  return SQLITE_OK;
}

int file_truncate(sqlite3_file* file, sqlite3_int64 size) {
  File* f = as_file(file);
  halt_if_cutting();
  if (fails(f, "truncate", false)) return SQLITE_IOERR_TRUNCATE;
  if (f->overlay == nullptr) return real_methods(f)->xTruncate(f->real, size);
  std::lock_guard lock(mu);
  f->overlay->held.push_back({next_seq++, true, size, {}});
  return SQLITE_OK;
}

int file_sync(sqlite3_file* file, int flags) {
  File* f = as_file(file);
  halt_if_cutting();
  if (faults.power_cut_at_sync > 0 && syncs.fetch_add(1) + 1 == faults.power_cut_at_sync) {
    power_cut();
  }
  if (fails(f, "sync", false)) return SQLITE_IOERR_FSYNC;
  if (f->overlay != nullptr) {
    std::lock_guard lock(mu);
    if (int rc = apply_held(f); rc != SQLITE_OK) return rc;
  }
  return real_methods(f)->xSync(f->real, flags);
}

int file_size(sqlite3_file* file, sqlite3_int64* size) {
  File* f = as_file(file);
  if (f->overlay == nullptr) return real_methods(f)->xFileSize(f->real, size);
  std::lock_guard lock(mu);
  return logical_size(f, size);
}

int file_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  File* f = as_file(file);
  if (f->overlay != nullptr) {
    *out = nullptr;  // no mapped page: SQLite reads through xRead, which sees the held writes
    return SQLITE_OK;
  }
  return real_methods(f)->xFetch(f->real, offset, amount, out);
}

int file_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  File* f = as_file(file);
  if (f->overlay != nullptr) return SQLITE_OK;
  return real_methods(f)->xUnfetch(f->real, offset, page);
}

int file_close(sqlite3_file* file) {
  // Held changes stay with the file's name: they belong to the file, not to this handle.
  File* f = as_file(file);
  return real_methods(f)->xClose(f->real);
}

template <auto Method>
struct Pass;

template <class R, class... Args, R (*sqlite3_io_methods::*Method)(sqlite3_file*, Args...)>
struct Pass<Method> {
  static R call(sqlite3_file* file, Args... args) {
    File* f = as_file(file);
    return (real_methods(f)->*Method)(f->real, args...);
  }
};

sqlite3_io_methods make_methods(int version) {
  using M = sqlite3_io_methods;
  M m{};
  m.iVersion = version;
  m.xClose = file_close;
  m.xRead = file_read;
  m.xWrite = file_write;
  m.xTruncate = file_truncate;
  m.xSync = file_sync;
  m.xFileSize = file_size;
  m.xLock = Pass<&M::xLock>::call;
  m.xUnlock = Pass<&M::xUnlock>::call;
  m.xCheckReservedLock = Pass<&M::xCheckReservedLock>::call;
  m.xFileControl = Pass<&M::xFileControl>::call;
  m.xSectorSize = Pass<&M::xSectorSize>::call;
  m.xDeviceCharacteristics = Pass<&M::xDeviceCharacteristics>::call;
  if (version >= 2) {
    m.xShmMap = Pass<&M::xShmMap>::call;
    m.xShmLock = Pass<&M::xShmLock>::call;
    m.xShmBarrier = Pass<&M::xShmBarrier>::call;
    m.xShmUnmap = Pass<&M::xShmUnmap>::call;
  }
  if (version >= 3) {
    m.xFetch = file_fetch;
    m.xUnfetch = file_unfetch;
  }
  return m;
}

const sqlite3_io_methods kMethods[3] = {make_methods(1), make_methods(2), make_methods(3)};

int vfs_open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
             int* out_flags) {
  File* f = as_file(file);
  const bool log = (flags & SQLITE_OPEN_WAL) != 0;
  f->counted = name != nullptr && (log || (flags & SQLITE_OPEN_MAIN_DB) != 0);
  f->kind = log ? "log" : "database";
  f->overlay = nullptr;
  if (f->counted && faults.power_loss) {
    std::lock_guard lock(mu);
    f->overlay = &overlays[name];
  }
  return vfs_wrap::open_wrapped(vfs, name, f, flags, out_flags, kMethods);
}

// A deleted log takes its held changes with it.
int vfs_delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  if (name != nullptr && faults.power_loss) {
    std::lock_guard lock(mu);
    if (auto it = overlays.find(name); it != overlays.end()) it->second.held.clear();
  }
  return vfs_wrap::wrapped(vfs)->xDelete(vfs_wrap::wrapped(vfs), name, sync_dir);
}

}  // namespace

void install_sqlite_faults(const SqliteFaults& wanted) {
  if (!wanted.any()) return;
  static std::once_flag once;
  std::call_once(once, [&wanted] {
    faults = wanted;
    static sqlite3_vfs vfs{};
    vfs_wrap::register_default(vfs, "dlq-testing-faults", static_cast<int>(sizeof(File)), vfs_open,
                               vfs_delete);
  });
}

}  // namespace dlq::store

// A VFS that gathers SQLite's writes to the write-ahead log into one call per commit.
//
// Why it is safe (the order of SQLite's own steps, wal.c, sqlite3WalFrames): a transaction's
// frames are written at the end of the log, each as a 24-byte header and then the page; the
// commit frame's header carries the database size (non-zero); with synchronous=FULL the log is
// then synced; only after that does SQLite publish the new frames in the shared WAL index, which
// is all another connection looks at. So:
// - every gathered byte is written before the sync that makes the commit durable (xSync flushes
//   first), and before the commit is published (the commit frame's page flushes, whatever the
//   synchronous setting);
// - this connection never reads a byte it has not written yet (xRead, xFileSize, xTruncate and
//   file controls flush first), and writes reach the file in the order SQLite made them (a write
//   that does not continue the gathered bytes flushes them first);
// - a failed write is reported where it happens (at the flush): the sync or commit fails, and
//   SQLite rolls the transaction back as it does for a failed write.
// A crash before the flush loses only frames of a transaction that had not committed.
#include "store/wal_writes.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "store/vfs_wrap.hpp"

namespace dlq::store {
namespace {

constexpr int kWalHeaderBytes = 32;
constexpr int kFrameHeaderBytes = 24;
// The most one call writes: SQLite's unix VFS writes at most 0x1ffff bytes per pwrite() (it
// masks the size) and reports a longer write that way as a full disk. A larger transaction (a
// big batch, a migration) is written in pieces of at most this size.
constexpr sqlite3_int64 kMaxGathered = 0x1ffff;

struct File {
  sqlite3_file base;     // pMethods: ours
  sqlite3_file* real;    // the wrapped VFS's file, in the same allocation, after this struct
  bool wal;              // only the write-ahead log is gathered
  bool commit_header;    // the last write was a commit frame's header: its page comes next
  unsigned char* data;   // gathered bytes, for the file range [start, start + used)
  sqlite3_int64 start;
  sqlite3_int64 used;
  sqlite3_int64 capacity;
};
static_assert(sizeof(File) % 8 == 0, "the wrapped file follows it, 8-byte aligned");

std::atomic<unsigned long long> writes_asked{0};
std::atomic<unsigned long long> writes_made{0};

File* as_file(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
const sqlite3_io_methods* real_methods(File* f) { return f->real->pMethods; }

int flush(File* f) {
  if (f->used == 0) return SQLITE_OK;
  writes_made.fetch_add(1, std::memory_order_relaxed);
  int rc = real_methods(f)->xWrite(f->real, f->data, static_cast<int>(f->used), f->start);
  f->used = 0;
  return rc;
}

// Adds a write to the gathered bytes, flushing them first when it does not continue them.
int gather(File* f, const void* buf, int amount, sqlite3_int64 offset) {
  bool continues = f->used > 0 && offset == f->start + f->used;
  if (!continues || f->used + amount > kMaxGathered) {
    if (int rc = flush(f); rc != SQLITE_OK) return rc;
    f->start = offset;
  }
  if (f->used + amount > f->capacity) {
    sqlite3_int64 wanted = std::max<sqlite3_int64>(f->capacity * 2, 64 * 1024);
    while (wanted < f->used + amount) wanted *= 2;
    auto* grown = static_cast<unsigned char*>(sqlite3_realloc64(f->data, static_cast<sqlite3_uint64>(wanted)));
    if (grown == nullptr) {  // no memory to gather in: write as SQLite asked
      if (int rc = flush(f); rc != SQLITE_OK) return rc;
      writes_made.fetch_add(1, std::memory_order_relaxed);
      return real_methods(f)->xWrite(f->real, buf, amount, offset);
    }
    f->data = grown;
    f->capacity = wanted;
  }
  std::memcpy(f->data + f->used, buf, static_cast<std::size_t>(amount));
  f->used += amount;
  return SQLITE_OK;
}

// A frame header's bytes 4..7: the database size in pages after a commit, 0 in other frames.
bool is_commit_header(const void* buf, int amount, sqlite3_int64 offset) {
  if (amount != kFrameHeaderBytes || offset < kWalHeaderBytes) return false;
  const auto* b = static_cast<const unsigned char*>(buf);
  return (b[4] | b[5] | b[6] | b[7]) != 0;
}

int file_write(sqlite3_file* file, const void* buf, int amount, sqlite3_int64 offset) {
  File* f = as_file(file);
  if (!f->wal) return real_methods(f)->xWrite(f->real, buf, amount, offset);
  writes_asked.fetch_add(1, std::memory_order_relaxed);
  bool completes_commit = f->commit_header;
  f->commit_header = is_commit_header(buf, amount, offset);
  int rc = gather(f, buf, amount, offset);
  if (rc == SQLITE_OK && completes_commit) rc = flush(f);
  return rc;
}

int file_close(sqlite3_file* file) {
  File* f = as_file(file);
  int flushed = flush(f);
  sqlite3_free(f->data);
  f->data = nullptr;
  f->capacity = 0;
  int rc = real_methods(f)->xClose(f->real);
  return flushed != SQLITE_OK ? flushed : rc;
}

// Every other method calls the wrapped file's: `pass` straight through, `after_flush` once the
// gathered bytes are written (whatever looks at the file: read, sync, size, truncate, control,
// fetch).
template <auto Method>
struct Forward;

template <class R, class... Args, R (*sqlite3_io_methods::*Method)(sqlite3_file*, Args...)>
struct Forward<Method> {
  static R pass(sqlite3_file* file, Args... args) {
    File* f = as_file(file);
    return (real_methods(f)->*Method)(f->real, args...);
  }
  static R after_flush(sqlite3_file* file, Args... args) {
    if (int rc = flush(as_file(file)); rc != SQLITE_OK) return rc;
    return pass(file, args...);
  }
};

// One table per io_methods version, so that a file never offers a method its wrapped file lacks.
sqlite3_io_methods make_methods(int version) {
  using M = sqlite3_io_methods;
  M m{};
  m.iVersion = version;
  m.xClose = file_close;
  m.xRead = Forward<&M::xRead>::after_flush;
  m.xWrite = file_write;
  m.xTruncate = Forward<&M::xTruncate>::after_flush;
  m.xSync = Forward<&M::xSync>::after_flush;
  m.xFileSize = Forward<&M::xFileSize>::after_flush;
  m.xLock = Forward<&M::xLock>::pass;
  m.xUnlock = Forward<&M::xUnlock>::pass;
  m.xCheckReservedLock = Forward<&M::xCheckReservedLock>::pass;
  m.xFileControl = Forward<&M::xFileControl>::after_flush;
  m.xSectorSize = Forward<&M::xSectorSize>::pass;
  m.xDeviceCharacteristics = Forward<&M::xDeviceCharacteristics>::pass;
  if (version >= 2) {
    m.xShmMap = Forward<&M::xShmMap>::pass;
    m.xShmLock = Forward<&M::xShmLock>::pass;
    m.xShmBarrier = Forward<&M::xShmBarrier>::pass;
    m.xShmUnmap = Forward<&M::xShmUnmap>::pass;
  }
  if (version >= 3) {
    m.xFetch = Forward<&M::xFetch>::after_flush;
    m.xUnfetch = Forward<&M::xUnfetch>::pass;
  }
  return m;
}

const sqlite3_io_methods kMethods[3] = {make_methods(1), make_methods(2), make_methods(3)};

int vfs_open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
             int* out_flags) {
  File* f = as_file(file);
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  f->commit_header = false;
  f->data = nullptr;
  f->start = f->used = f->capacity = 0;
  return vfs_wrap::open_wrapped(vfs, name, f, flags, out_flags, kMethods);
}

}  // namespace

void install_wal_write_gathering() {
  static std::once_flag once;
  std::call_once(once, [] {
    static sqlite3_vfs vfs{};
    vfs_wrap::register_default(vfs, "dlq-gathered-wal", static_cast<int>(sizeof(File)), vfs_open);
  });
}

WalWriteCounts wal_write_counts() {
  return {writes_asked.load(std::memory_order_relaxed), writes_made.load(std::memory_order_relaxed)};
}

}  // namespace dlq::store

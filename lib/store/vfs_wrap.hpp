// What dlq's two wrapping SQLite VFSs share (wal_writes.cpp gathers log writes, fault_vfs.cpp
// injects the fault tests' faults): a VFS whose methods are the wrapped default's but for opening
// (and, if given, deleting) a file, registered as the new default; and a file whose methods reach
// the wrapped VFS's file, which sits in the same allocation right after the wrapper's own part.
#pragma once

#include <sqlite3.h>

#include <algorithm>

namespace dlq::store::vfs_wrap {

// The wrapped VFS of a VFS registered by register_default.
inline sqlite3_vfs* wrapped(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }

using OpenFn = int (*)(sqlite3_vfs*, sqlite3_filename, sqlite3_file*, int, int*);
using DeleteFn = int (*)(sqlite3_vfs*, const char*, int);

// Fills `vfs` to wrap the current default VFS, each file `file_bytes` (the wrapper's own part,
// a multiple of 8) ahead of the wrapped file, and registers it as the default. Throws when SQLite
// has no default VFS or refuses the registration.
void register_default(sqlite3_vfs& vfs, const char* name, int file_bytes, OpenFn open,
                      DeleteFn remove = nullptr);

// Opens the wrapped VFS's file behind `file` (whose first member is a sqlite3_file and whose
// `real` member points right after the wrapper's part), and gives `file` the method table of
// `methods` (one per io_methods version 1..3) that matches the wrapped file's.
template <class File>
int open_wrapped(sqlite3_vfs* vfs, sqlite3_filename name, File* f, int flags, int* out_flags,
                 const sqlite3_io_methods (&methods)[3]) {
  f->base.pMethods = nullptr;
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->real->pMethods = nullptr;
  int rc = wrapped(vfs)->xOpen(wrapped(vfs), name, f->real, flags, out_flags);
  // SQLite calls xClose after a failed open only when pMethods is set; the wrapped file decides.
  if (f->real->pMethods != nullptr) {
    int version = std::clamp(f->real->pMethods->iVersion, 1, 3);
    f->base.pMethods = &methods[version - 1];
  }
  return rc;
}

}  // namespace dlq::store::vfs_wrap

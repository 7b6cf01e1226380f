#include "store/vfs_wrap.hpp"

#include <stdexcept>
#include <string>

namespace dlq::store::vfs_wrap {
namespace {

// Every method of the VFS but opening (and deleting) calls the wrapped VFS's.
template <auto Method>
struct ToWrapped;

template <class R, class... Args, R (*sqlite3_vfs::*Method)(sqlite3_vfs*, Args...)>
struct ToWrapped<Method> {
  static R call(sqlite3_vfs* vfs, Args... args) {
    return (wrapped(vfs)->*Method)(wrapped(vfs), args...);
  }
};

}  // namespace

void register_default(sqlite3_vfs& vfs, const char* name, int file_bytes, OpenFn open,
                      DeleteFn remove) {
  sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
  if (base == nullptr) throw std::runtime_error("SQLite has no default VFS");
  using V = sqlite3_vfs;
  vfs.iVersion = std::min(base->iVersion, 3);
  vfs.szOsFile = file_bytes + base->szOsFile;
  vfs.mxPathname = base->mxPathname;
  vfs.zName = name;
  vfs.pAppData = base;
  vfs.xOpen = open;
  vfs.xDelete = remove != nullptr ? remove : ToWrapped<&V::xDelete>::call;
  vfs.xAccess = ToWrapped<&V::xAccess>::call;
  vfs.xFullPathname = ToWrapped<&V::xFullPathname>::call;
  vfs.xDlOpen = ToWrapped<&V::xDlOpen>::call;
  vfs.xDlError = ToWrapped<&V::xDlError>::call;
  vfs.xDlSym = ToWrapped<&V::xDlSym>::call;
  vfs.xDlClose = ToWrapped<&V::xDlClose>::call;
  vfs.xRandomness = ToWrapped<&V::xRandomness>::call;
  vfs.xSleep = ToWrapped<&V::xSleep>::call;
  vfs.xCurrentTime = ToWrapped<&V::xCurrentTime>::call;
  vfs.xGetLastError = ToWrapped<&V::xGetLastError>::call;
  if (vfs.iVersion >= 2) vfs.xCurrentTimeInt64 = ToWrapped<&V::xCurrentTimeInt64>::call;
  if (vfs.iVersion >= 3) {
    vfs.xSetSystemCall = ToWrapped<&V::xSetSystemCall>::call;
    vfs.xGetSystemCall = ToWrapped<&V::xGetSystemCall>::call;
    vfs.xNextSystemCall = ToWrapped<&V::xNextSystemCall>::call;
  }
  if (sqlite3_vfs_register(&vfs, 1) != SQLITE_OK) {
    throw std::runtime_error(std::string("registering the SQLite VFS ") + name + " failed");
  }
}

}  // namespace dlq::store::vfs_wrap

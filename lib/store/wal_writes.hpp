// SQLite: one write() per commit to the write-ahead log instead of two per page.
#pragma once

namespace dlq::store {

// Registers, once per process and before the first SQLite connection opens, a VFS that wraps
// SQLite's default one ("unix") and becomes the default. It changes one thing: writes to a WAL
// file that continue each other are gathered in memory and written with one call when the
// transaction's commit frame is complete, and before anything that must see them (a sync, a
// read, a size, a truncation, a file control, closing). Everything else passes straight through.
// SQLite writes each frame as two calls (24-byte header, then the page); a commit of 18 pages
// made 36 `pwrite` calls. docs/performance.md has the measurements and the argument that
// durability and what readers see are unchanged.
void install_wal_write_gathering();

// Writes to WAL files since the process started: as SQLite asked for them, and as made to the
// file (for tests and diagnostics).
struct WalWriteCounts {
  unsigned long long asked = 0;
  unsigned long long made = 0;
};
WalWriteCounts wal_write_counts();

}  // namespace dlq::store

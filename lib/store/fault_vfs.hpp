// SQLite's faults for the fault tests (testing.faults.*, only with --allow-testing-faults):
// a VFS under the WAL-gathering one, so that it sees the calls a real disk would.
#pragma once

namespace dlq::store {

struct SqliteFaults {
  // Writes to the database and its log since that file's last sync stay in this process's
  // memory (reads see them); a killed process loses them, as a machine losing power loses the
  // page cache.
  bool power_loss = false;
  // At the Nth sync (0: never): pause 20 ms, drop the held writes (or tear them), _exit(137).
  long long power_cut_at_sync = 0;
  // At the cut, the held writes land in order up to a random one, cut at a 512-byte sector.
  bool power_cut_tear = false;
  // The Nth read, write, sync or truncate of the database or its log fails once (0: none).
  long long fail_call = 0;
  // The failing call is a write answered SQLITE_FULL (only writes count) instead of an I/O error.
  bool fail_full = false;

  bool any() const { return power_loss || power_cut_at_sync > 0 || fail_call > 0; }
};

// Registers, once per process and before install_wal_write_gathering(), a VFS that wraps the
// default one and becomes the default. Does nothing when no fault is asked for.
void install_sqlite_faults(const SqliteFaults& faults);

}  // namespace dlq::store

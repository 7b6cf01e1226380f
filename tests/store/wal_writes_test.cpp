// The WAL-gathering VFS (store/wal_writes.*) on real SQLite files: what one connection commits,
// another sees at once, whatever the synchronous setting; a transaction larger than the page
// cache and than one gathered write reads back what it spilled and survives reopening; and the
// writes of a commit reach the file in one call. SQLite only: the VFS is SQLite's.
#include <boost/test/unit_test.hpp>

#include <string>

#include "config/database_url.hpp"
#include "store/connection.hpp"
#include "store/wal_writes.hpp"
#include "support/temp_dir.hpp"

namespace dlq::test {
namespace {

// A connection as the store opens one (WAL, synchronous=FULL, the gathering VFS installed).
class Db {
 public:
  explicit Db(const std::string& path) : c_(options(path)) {}

  void exec(const std::string& sql) { c_.execute(sql); }

  // The first column of the first row, as text.
  std::string value(const std::string& sql) {
    std::string out;
    c_.session() << sql, soci::into(out);
    return out;
  }

 private:
  static store::ConnectionOptions options(const std::string& path) {
    store::ConnectionOptions o;
    o.target = parse_database_url("sqlite:" + path);
    return o;
  }

  store::Connection c_;
};

// Rows of ~1 KiB each: a handful of rows fill a page.
std::string insert_rows(int from, int count) {
  return "WITH RECURSIVE s(v) AS (SELECT " + std::to_string(from) + " UNION ALL SELECT v + 1 FROM s "
         "WHERE v < " + std::to_string(from + count - 1) + ") "
         "INSERT INTO t (n, pad) SELECT v, hex(zeroblob(500)) FROM s";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wal_writes)

BOOST_AUTO_TEST_CASE(another_connection_sees_each_commit_in_full_and_normal_mode) {
  for (std::string sync : {"FULL", "NORMAL"}) {
    BOOST_TEST_CONTEXT("synchronous=" << sync) {
      TempDir dir;
      Db writer(dir.file("w.db"));
      writer.exec("PRAGMA synchronous=" + sync);
      writer.exec("CREATE TABLE t (n INTEGER, pad TEXT)");
      Db reader(dir.file("w.db"));
      for (int round = 0; round < 20; ++round) {
        writer.exec("BEGIN IMMEDIATE");
        writer.exec(insert_rows(round * 12, 12));  // several pages per commit
        writer.exec("COMMIT");
        BOOST_REQUIRE_EQUAL(reader.value("SELECT count(*) FROM t"), std::to_string((round + 1) * 12));
        BOOST_REQUIRE_EQUAL(reader.value("SELECT max(n) FROM t"), std::to_string(round * 12 + 11));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_transaction_larger_than_the_cache_reads_back_what_it_spilled) {
  TempDir dir;
  {
    Db writer(dir.file("big.db"));
    writer.exec("PRAGMA synchronous=FULL");
    writer.exec("PRAGMA cache_size=8");  // pages: the transaction spills frames to the log
    writer.exec("CREATE TABLE t (n INTEGER, pad TEXT)");
    writer.exec("BEGIN IMMEDIATE");
    writer.exec(insert_rows(0, 600));  // ~600 KiB: several gathered writes, none over the limit
    writer.exec("UPDATE t SET pad = hex(zeroblob(450)) WHERE n % 3 = 0");  // rewrites spilled pages
    BOOST_REQUIRE_EQUAL(writer.value("SELECT sum(length(pad)) FROM t"), std::to_string(400 * 1000 + 200 * 900));
    writer.exec("COMMIT");
    Db reader(dir.file("big.db"));
    BOOST_REQUIRE_EQUAL(reader.value("SELECT count(*) FROM t"), "600");
  }
  Db reopened(dir.file("big.db"));
  BOOST_REQUIRE_EQUAL(reopened.value("PRAGMA integrity_check"), "ok");
  BOOST_REQUIRE_EQUAL(reopened.value("SELECT sum(length(pad)) FROM t"), std::to_string(400 * 1000 + 200 * 900));
}

BOOST_AUTO_TEST_CASE(a_commit_reaches_the_log_in_one_write) {
  TempDir dir;
  Db writer(dir.file("one.db"));
  writer.exec("PRAGMA synchronous=FULL");
  writer.exec("CREATE TABLE t (n INTEGER, pad TEXT)");
  writer.exec(insert_rows(0, 1));
  auto before = store::wal_write_counts();
  writer.exec("BEGIN IMMEDIATE");
  writer.exec(insert_rows(1, 20));  // about five pages, each a header and a page
  writer.exec("COMMIT");
  auto after = store::wal_write_counts();
  BOOST_TEST(after.asked - before.asked >= 10u);
  BOOST_TEST(after.made - before.made == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace dlq::test

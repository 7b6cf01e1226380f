// Upgrades: a database made by every earlier schema version, holding messages and audit entries,
// is brought to the current one by three nodes starting at once, on the backend under test. Each
// migration is applied once; 008 fills dead_letter_hours from the deaths the messages table still
// remembers (dead and dismissed messages; a replayed one has lost its dead_at), 009 gives the
// batch actions of earlier versions the queue their filter names, 011 lists the queues that
// hold messages in queue_names, 012's fingerprints and titles are null on the rows it finds, and
// 014 fills the lineage (life, replay_id) of stored entries, 015 counts what open incidents
// reached as told, and after 016-018 no stored row names a worker version, an effect or a trial, nor after
// 019 SQS attributes or a registry row, nor after 020 a dead-letter queue's stamp or hiding.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "config/database_url.hpp"
#include "store/connection.hpp"
#include "store/migrations.hpp"
#include "store/sql_store.hpp"
#include "support/pg_admin.hpp"
#include "support/temp_dir.hpp"

namespace dlq::test {
namespace {

constexpr TimeMs kHour = 4102444800000;  // 2100-01-01T00:00Z, an hour's start

// A database at schema `version`, with two dead messages in the first hour, a dismissed one (dead
// before) in the second, and a pending and a succeeded one that never died.
std::string database_at(int version, const TempDir& dir) {
  std::string url = test_backend() == Backend::postgresql
                        ? create_pg_database("dlq_upgrade")
                        : "sqlite:" + dir.file("v" + std::to_string(version) + ".db");
  store::ConnectionOptions o;
  o.target = parse_database_url(url);
  store::Connection c(o);
  store::apply_migrations(c, version);
  BOOST_REQUIRE_EQUAL(store::applied_version(c), version);
  c.begin_write();
  struct Row {
    const char* status;
    TimeMs dead_at;  // 0: never died
  };
  for (Row r : {Row{"dead", kHour + 5}, Row{"dead", kHour + 3599999}, Row{"dismissed", kHour + 3600000},
                Row{"pending", 0}, Row{"succeeded", 0}}) {
    std::string dead_at = r.dead_at ? std::to_string(r.dead_at) : "NULL";
    c.execute(std::string("INSERT INTO messages (queue, payload, status, max_retries, created_at, "
                          "updated_at, dead_at, life_started_at, status_at) VALUES ('old', 'p', '") +
              r.status + "', 3, " + std::to_string(kHour) + ", " + std::to_string(kHour) + ", " +
              dead_at + ", " + std::to_string(kHour) + ", " + std::to_string(kHour) + ")");
  }
  // Audit entries as versions before 009 wrote them: batch actions with the queue only inside
  // their filter; a single dismiss with its own queue; a purge (not a batch action).
  for (const char* values :
       {"'batch_replay', NULL, '{\"queue\":\"q\"}'", "'dismiss', NULL, '{\"queue\":\"q-more\"}'",
        "'batch_replay_pause', NULL, '{\"queue\":\"q\",\"job_type\":\"x\"}'",
        "'batch_replay_resume', NULL, '{\"queue\":\"q\"}'",
        "'batch_replay_cancel', NULL, '{\"queue\":\"q\"}'",
        "'batch_replay', NULL, '{\"job_type\":\"x\"}'", "'dismiss', 'single', NULL",
        "'purge', NULL, '{\"queue\":\"p\"}'"}) {
    c.execute(std::string("INSERT INTO audit_log (at, action, queue, filter) VALUES (") +
              std::to_string(kHour) + ", " + values + ")");
  }
  // A history entry as versions before 010 wrote it: no count.
  c.execute(std::string("INSERT INTO attempts (message_id, attempt, outcome, finished_at) "
                        "SELECT id, 1, 'released', ") +
            std::to_string(kHour) + " FROM messages WHERE status = 'pending'");
  // A message replayed twice, the second time by a run (from 004 on, where runs exist), as
  // versions before 014 stored it: no lineage on its entries.
  const std::string t = std::to_string(kHour);
  c.execute("INSERT INTO messages (queue, payload, status, max_retries, created_at, updated_at, "
            "life_started_at, status_at, replay_count) VALUES ('lineage', 'p', 'pending', 3, " +
            t + ", " + t + ", " + t + ", " + t + ", 2)");
  for (const char* entry : {"1, 'failed', 10, NULL, NULL", "1, 'replayed', 20, 'ops', NULL",
                            "2, 'failed', 30, NULL, NULL", "2, 'replayed', 40, 'ops', 'again'"}) {
    c.execute(std::string("INSERT INTO attempts (message_id, attempt, outcome, finished_at, actor, "
                          "reason) SELECT id, ") +
              entry + " FROM messages WHERE queue = 'lineage'");
  }
  if (version >= 4) {
    c.execute("INSERT INTO replay_runs (status, filter, actor, reason, created_at, start_at, "
              "delay_seconds, rate_per_second, keep_order, matched, next_seq, replayed, skipped, "
              "paced_from, paced_count, updated_at) VALUES ('done', '{}', 'ops', 'again', 35, 35, "
              "0, 10, 0, 1, 1, 1, 0, 35, 1, 40)");
    c.execute("INSERT INTO replay_run_items (run_id, seq, message_id, outcome) "
              "SELECT (SELECT MAX(id) FROM replay_runs), 0, id, NULL FROM messages "
              "WHERE queue = 'lineage'");
  }
  if (version >= 13) {  // incidents before 015: open ones of several sizes and an emptied one
    for (const char* row : {"'00000000000000a0', 0", "'00000000000000a1', 7", "'00000000000000a2', 42",
                            "'00000000000000a3', 1500"}) {
      c.execute(std::string("INSERT INTO incidents (fingerprint, dead, title, last_death_at) "
                            "VALUES (") + row + ", 't', " + std::to_string(kHour) + ")");
    }
  }
  c.commit();
  return url;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(migrations)

BOOST_AUTO_TEST_CASE(every_earlier_version_upgrades_with_three_nodes_starting_at_once) {
  TempDir dir;
  const int latest = store::sqlite_migrations().back().version;
  BOOST_REQUIRE_EQUAL(latest, store::postgres_migrations().back().version);
  // Versions are numbered, not necessarily contiguous (a number may be taken by a branch that
  // has not landed yet): every version a migration has, and how many there are.
  std::vector<int> versions;
  for (const auto& m : store::sqlite_migrations()) versions.push_back(m.version);
  BOOST_REQUIRE_EQUAL(versions.size(), store::postgres_migrations().size());
  const long long count = static_cast<long long>(versions.size());
  for (int from : versions) {
    if (from == latest) break;
    BOOST_TEST_CONTEXT("upgrading from version " << from) {
      std::string url = database_at(from, dir);
      std::vector<std::unique_ptr<store::SqlStore>> nodes(3);
      std::vector<std::string> failures(3);
      std::vector<std::thread> starts;
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        starts.emplace_back([&, i] {
          try {
            store::SqlStoreOptions o;
            o.target = parse_database_url(url);
            nodes[i] = std::make_unique<store::SqlStore>(o);
          } catch (const std::exception& e) {
            failures[i] = e.what();
          }
        });
      }
      for (auto& t : starts) t.join();
      for (const auto& f : failures) BOOST_TEST(f.empty(), f);
      BOOST_REQUIRE(nodes[0]);

      store::ConnectionOptions o;
      o.target = parse_database_url(url);
      store::Connection c(o);
      BOOST_TEST(store::applied_version(c) == latest);
      long long rows = 0, distinct = 0;
      c.session() << "SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations",
          soci::into(rows), soci::into(distinct);
      BOOST_TEST(rows == count);  // each applied once
      BOOST_TEST(distinct == count);
      if (from < 8) {  // a database at 008 already counted these deaths as they happened
        long long first = 0, second = 0;
        c.session() << "SELECT count FROM dead_letter_hours WHERE queue = 'old' AND hour = "
                    << kHour, soci::into(first);
        c.session() << "SELECT count FROM dead_letter_hours WHERE queue = 'old' AND hour = "
                    << kHour + kMillisPerHour, soci::into(second);
        BOOST_TEST(first == 2);
        BOOST_TEST(second == 1);
      }
      long long count = 0;  // 010: an entry stored before stands for one release
      c.session() << "SELECT count FROM attempts WHERE outcome = 'released'", soci::into(count);
      BOOST_TEST(count == 1);
      if (from < 9) {  // a database at 009 wrote the queue of these entries itself
        std::vector<std::string> queues;
        {
          std::string action, queue;
          soci::indicator ind{};
          soci::statement st = (c.session().prepare << "SELECT action, queue FROM audit_log ORDER BY id",
                                soci::into(action), soci::into(queue, ind));
          st.execute();
          while (st.fetch()) queues.push_back(action + ":" + (ind == soci::i_ok ? queue : "NULL"));
        }
        const std::vector<std::string> expected{
            "batch_replay:q", "dismiss:q-more", "batch_replay_pause:q", "batch_replay_resume:q",
            "batch_replay_cancel:q", "batch_replay:NULL", "dismiss:single", "purge:NULL"};
        BOOST_TEST(queues == expected, boost::test_tools::per_element());
      }
      if (from < 11) {  // the rows above were written past the store, which keeps the names
        long long named = 0;
        c.session() << "SELECT COUNT(*) FROM queue_names WHERE queue = 'old'", soci::into(named);
        BOOST_TEST(named == 1);
      }
      {  // 012: rows stored before have no cause yet (the backfill gives the dead theirs)
        long long messages = 0, entries = 0;
        c.session() << "SELECT COUNT(*) FROM messages WHERE fingerprint IS NULL AND title IS NULL",
            soci::into(messages);
        c.session() << "SELECT COUNT(*) FROM attempts WHERE fingerprint IS NULL AND title IS NULL",
            soci::into(entries);
        BOOST_TEST(messages == 6);  // with 014's message of four entries
        BOOST_TEST(entries == 5);
      }
      if (from < 14) {  // 014: life counts the replays up to each entry; the run's replay is found as its
        std::vector<std::string> lineage;
        long long life = 0, replay_id = 0;
        soci::indicator ind{};
        soci::statement st =
            (c.session().prepare << "SELECT life, replay_id FROM attempts WHERE message_id = "
                                    "(SELECT id FROM messages WHERE queue = 'lineage') ORDER BY id",
             soci::into(life), soci::into(replay_id, ind));
        st.execute();
        while (st.fetch()) {
          lineage.push_back(std::to_string(life) + ":" +
                            (ind == soci::i_ok ? std::to_string(replay_id) : "NULL"));
        }
        long long run = 0;
        if (from >= 4) c.session() << "SELECT MAX(id) FROM replay_runs", soci::into(run);
        const std::vector<std::string> expected{"0:NULL", "1:NULL", "1:NULL",
                                                "2:" + (from >= 4 ? std::to_string(run) : "NULL")};
        BOOST_TEST(lineage == expected, boost::test_tools::per_element());
      }
      if (from >= 13 && from < 15) {  // 015: what incidents open then reached counts as told
        std::vector<long long> levels;
        long long level = 0;
        soci::statement st = (c.session().prepare
                                  << "SELECT alert_level FROM incidents ORDER BY fingerprint",
                              soci::into(level));
        st.execute();
        while (st.fetch()) levels.push_back(level);
        BOOST_TEST(levels == (std::vector<long long>{0, 1, 10, 1000}), boost::test_tools::per_element());
      }
      {  // 016: no entry or message stored before says which worker version ran it
        long long entries = 0, versioned = 0, messages = 0;
        c.session() << "SELECT COUNT(*), COUNT(worker_version) FROM attempts", soci::into(entries),
            soci::into(versioned);
        c.session() << "SELECT COUNT(worker_version) FROM messages", soci::into(messages);
        BOOST_TEST(entries >= 5);
        BOOST_TEST(versioned == 0);
        BOOST_TEST(messages == 0);
      }
      {  // 017, 018: messages stored before hold no effect, and no entry is a trial's
        long long counted = -1, effects = -1, trial_entries = -1, trials = -1;
        c.session() << "SELECT COALESCE(SUM(effect_count), 0) FROM messages", soci::into(counted);
        c.session() << "SELECT COUNT(*) FROM effects", soci::into(effects);
        c.session() << "SELECT COUNT(trial) FROM attempts", soci::into(trial_entries);
        c.session() << "SELECT COUNT(*) FROM trials", soci::into(trials);
        BOOST_TEST(counted == 0);
        BOOST_TEST(effects == 0);
        BOOST_TEST(trial_entries == 0);
        BOOST_TEST(trials == 0);
      }
      {  // 019: messages stored before are no SQS queue's: no attributes, no attempts before
         // their life, no registry row; the registry takes rows at once
        long long attributed = -1, earlier = -1, registered = -1;
        c.session() << "SELECT COUNT(sqs_attributes) FROM messages", soci::into(attributed);
        c.session() << "SELECT COALESCE(SUM(life_attempts), 0) FROM messages", soci::into(earlier);
        c.session() << "SELECT COUNT(*) FROM sqs_queues", soci::into(registered);
        BOOST_TEST(attributed == 0);
        BOOST_TEST(earlier == 0);
        BOOST_TEST(registered == 0);
        c.session() << "INSERT INTO sqs_queues (name, created_at, updated_at) VALUES ('old', 1, 1)";
        c.session() << "SELECT COUNT(*) FROM sqs_queues WHERE attributes = '{}' AND tags = '{}'",
            soci::into(registered);
        BOOST_TEST(registered == 1);
      }
      {  // 020: no message stored before died under a RedrivePolicy, and none is hidden by a
         // dead-letter queue's receive
        long long stamped = -1, hidden = -1;
        c.session() << "SELECT COUNT(dead_letter_queue) FROM messages", soci::into(stamped);
        c.session() << "SELECT COUNT(*) FROM messages WHERE sqs_hidden_until IS NOT NULL OR "
                       "sqs_receipt IS NOT NULL",
            soci::into(hidden);
        BOOST_TEST(stamped == 0);
        BOOST_TEST(hidden == 0);
      }
      for (auto& n : nodes) {
        if (n) n->close();
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace dlq::test

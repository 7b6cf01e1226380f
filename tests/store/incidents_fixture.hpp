// The incident tests' fixture (both databases): messages that die with a fingerprint, are
// replayed or dismissed through the store as the transitions decide it, and the incident tables
// read and recounted over a connection of the test's own.
#pragma once

#include <boost/test/unit_test.hpp>

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "config/database_url.hpp"
#include "store/connection.hpp"
#include "store/store_fixture.hpp"
#include "store/soci_optional.hpp"

namespace incidents_test {
using namespace dlq;
using namespace dlq::test;

inline const TimeMs T = 4102444800000;  // 2100-01-01, an hour's start
inline const std::string A = "00000000000000aa";
inline const std::string B = "00000000000000bb";

// What the incident tables must hold, recounted from the messages table.
struct Counts {
  std::map<std::string, long long> dead;                                // fingerprint -> dead
  std::map<std::pair<std::string, std::string>, long long> queues;      // (fingerprint, queue)
  std::map<std::string, std::pair<long long, long long>> span;          // first, last dead_at

  bool operator==(const Counts&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Counts& c) {
  for (const auto& [fp, n] : c.dead) os << fp << "=" << n << " ";
  for (const auto& [k, n] : c.queues) os << k.first << "/" << k.second << "=" << n << " ";
  for (const auto& [fp, s] : c.span) os << fp << "[" << s.first << "," << s.second << "] ";
  return os;
}

inline core::FailInput fatal(const std::string& error = "boom") {
  core::FailInput in;
  in.error = error;
  in.error_class = ErrorClass::timeout;
  in.retryable = false;
  return in;
}

}  // namespace incidents_test

using namespace incidents_test;

struct IncidentsFixture : StoreFixture {
  IncidentsFixture() {
    store::ConnectionOptions o;
    o.target = parse_database_url(url);
    raw = std::make_unique<store::Connection>(o);
  }

  // A message of `queue` that dies at `at` with `fingerprint` (the decision sets it, as the fail
  // transition does).
  Message die(const std::string& queue, const std::string& fingerprint, TimeMs at,
              store::Store* on = nullptr) {
    store::NewMessage n;
    n.max_retries = 1;
    n.job_type = "email";
    n.payload = "p";
    store::InsertParams ins{queue, {n}, at};
    Message m = wait(store->messages_insert(std::move(ins))).value().at(0).message;
    auto claimed = claim(queue, at);
    BOOST_REQUIRE(claimed.size() == 1u && claimed[0].id == m.id);
    return fail(claimed[0], fingerprint, at, on);
  }

  Message fail(const Message& m, const std::string& fingerprint, TimeMs at,
               store::Store* on = nullptr) {
    store::UpdateParams u;
    u.queue = m.queue;
    u.id = m.id;
    u.decide = [at, fingerprint](const Message& current, const store::Related&) {
      auto c = core::fail(current, fatal(), QueuePolicy{}, at, [] { return 0.0; });
      if (c) {
        c->next.fingerprint = fingerprint;
        c->next.title = "title of " + fingerprint;
      }
      return c;
    };
    Message dead = wait((on ? on : store.get())->message_update(u)).value();
    BOOST_REQUIRE(to_string(dead.status) == "dead");
    return dead;
  }

  Message replay(const Message& m, TimeMs at) {
    store::UpdateParams u;
    u.queue = m.queue;
    u.id = m.id;
    u.load_key_holders = true;
    u.decide = [at](const Message& current, const store::Related& r) {
      return core::replay(current, r, {}, at);
    };
    return wait(store->message_update(u)).value();
  }

  Message dismiss(const Message& m, TimeMs at) {
    store::UpdateParams u;
    u.queue = m.queue;
    u.id = m.id;
    u.decide = [at](const Message& current, const store::Related&) {
      return core::dismiss(current, std::nullopt, std::nullopt, at);
    };
    return wait(store->message_update(u)).value();
  }

  // The counts as the tables hold them (incidents with dead messages, queues above zero).
  Counts stored() {
    Counts c;
    std::string fp, queue;
    long long n = 0;
    std::optional<long long> first, last;
    {
      soci::statement st = (raw->session().prepare << "SELECT fingerprint, dead, first_dead_at, "
                                                      "last_dead_at FROM incidents WHERE dead <> 0",
                            soci::into(fp), soci::into(n), soci::into(first), soci::into(last));
      st.execute();
      while (st.fetch()) {
        c.dead[fp] = n;
        c.span[fp] = {first.value_or(-1), last.value_or(-1)};
      }
    }
    soci::statement st = (raw->session().prepare << "SELECT fingerprint, queue, dead FROM "
                                                    "incident_queues WHERE dead <> 0",
                          soci::into(fp), soci::into(queue), soci::into(n));
    st.execute();
    while (st.fetch()) c.queues[{fp, queue}] = n;
    return c;
  }

  // The same counted from the messages themselves.
  Counts recount() {
    Counts c;
    std::string fp, queue;
    long long n = 0, first = 0, last = 0;
    {
      soci::statement st = (raw->session().prepare
                                << "SELECT fingerprint, COUNT(*), MIN(dead_at), MAX(dead_at) "
                                   "FROM messages WHERE status = 'dead' AND fingerprint IS NOT "
                                   "NULL GROUP BY fingerprint",
                            soci::into(fp), soci::into(n), soci::into(first), soci::into(last));
      st.execute();
      while (st.fetch()) {
        c.dead[fp] = n;
        c.span[fp] = {first, last};
      }
    }
    soci::statement st = (raw->session().prepare
                              << "SELECT fingerprint, queue, COUNT(*) FROM messages WHERE status "
                                 "= 'dead' AND fingerprint IS NOT NULL GROUP BY fingerprint, queue",
                          soci::into(fp), soci::into(queue), soci::into(n));
    st.execute();
    while (st.fetch()) c.queues[{fp, queue}] = n;
    return c;
  }

  void check(const std::string& after) {
    BOOST_TEST_CONTEXT("after " << after) {
      Counts want = recount();
      BOOST_TEST(stored() == want);
    }
  }

  // A column of an incident's row: -1 when it is NULL or the row is gone.
  long long column(const std::string& fp, const std::string& name) {
    std::optional<long long> v;
    raw->session() << "SELECT " + name + " FROM incidents WHERE fingerprint = '" + fp + "'",
        soci::into(v);
    return v.value_or(-1);
  }

  long long hours_rows(const std::string& fp) {
    long long n = 0;
    raw->session() << "SELECT COUNT(*) FROM incident_hours WHERE fingerprint = '" + fp + "'",
        soci::into(n);
    return n;
  }

  std::unique_ptr<store::Connection> raw;
};

#include "store/store_fixture.hpp"

#include <stdexcept>

#include "config/database_url.hpp"
#include "core/transitions.hpp"
#include "support/pg_admin.hpp"

namespace dlq::test {

StoreFixture::StoreFixture() {
  url = test_backend() == Backend::postgresql ? create_pg_database("dlq_store")
                                              : "sqlite:" + dir.file("store.db");
  store = open_another();
}

StoreFixture::~StoreFixture() {
  if (store) store->close();
}

std::unique_ptr<store::SqlStore> StoreFixture::open_another() const { return open_another({}); }

std::unique_ptr<store::SqlStore> StoreFixture::open_another(store::SqlStoreOptions o) const {
  o.target = parse_database_url(url);
  return std::make_unique<store::SqlStore>(o);
}

Message StoreFixture::insert(const std::string& queue, const std::string& payload, TimeMs now,
                             store::NewMessage extra) {
  extra.payload = payload;
  store::InsertParams p{queue, {extra}, now};
  return wait(store->messages_insert(std::move(p))).value().at(0).message;
}

Message StoreFixture::dead_message(const std::string& queue, const std::string& payload,
                                   store::NewMessage extra) {
  constexpr TimeMs kAt = 4102444800000;  // 2100-01-01
  return dead_message_at(queue, payload, kAt, std::move(extra));
}

Message StoreFixture::dead_message_at(const std::string& queue, const std::string& payload,
                                      TimeMs at, store::NewMessage extra, core::FailInput why) {
  extra.max_retries = 1;
  Message m = insert(queue, payload, at, extra);
  auto claimed = claim(queue, at);
  if (claimed.size() != 1 || claimed[0].id != m.id) {
    throw std::logic_error("dead_message_at: queue " + queue + " holds another due message");
  }
  store::UpdateParams fail;
  fail.queue = queue;
  fail.id = m.id;
  fail.decide = [at, why = std::move(why)](const Message& current, const store::Related&) {
    return core::fail(current, why, QueuePolicy{}, at, [] { return 0.0; });
  };
  return wait(store->message_update(fail)).value();
}

std::vector<Message> StoreFixture::claim(const std::string& queue, TimeMs now, int max,
                                         const std::string& token) {
  store::ClaimParams p;
  p.queue = queue;
  p.now = now;
  p.max = max;
  p.lease_expires_at = now + 30000;
  p.lease_token = token;
  return wait(store->messages_claim(std::move(p)));
}

}  // namespace dlq::test

#include "store/store_fixture.hpp"

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

std::unique_ptr<store::SqlStore> StoreFixture::open_another() const {
  store::SqlStoreOptions o;
  o.target = parse_database_url(url);
  return std::make_unique<store::SqlStore>(o);
}

Message StoreFixture::insert(const std::string& queue, const std::string& payload, TimeMs now,
                             store::NewMessage extra) {
  extra.payload = payload;
  store::InsertParams p{queue, {extra}, now};
  return wait(store->messages_insert(std::move(p))).at(0).message;
}

Message StoreFixture::dead_message(const std::string& queue, const std::string& payload,
                                   store::NewMessage extra) {
  constexpr TimeMs kAt = 4102444800000;  // 2100-01-01
  extra.max_retries = 1;
  Message m = insert(queue, payload, kAt, extra);
  store::ClaimParams claim;
  claim.queue = queue;
  claim.now = kAt;
  claim.lease_expires_at = kAt + 30000;
  claim.lease_token = "0123456789abcdef0123456789abcdef";
  wait(store->messages_claim(claim));
  store::UpdateParams fail;
  fail.queue = queue;
  fail.id = m.id;
  fail.decide = [](const Message& current, const store::Related&) {
    return core::fail(current, {}, QueuePolicy{}, kAt, [] { return 0.0; });
  };
  return wait(store->message_update(fail)).value();
}

}  // namespace dlq::test

#include "store/store_fixture.hpp"

#include "config/database_url.hpp"
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

}  // namespace dlq::test

// Lease tokens: 32 lowercase hex digits (128 bits), never repeated, from any thread.
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <set>
#include <thread>

#include "core/lease_tokens.hpp"

BOOST_AUTO_TEST_SUITE(lease_tokens)

BOOST_AUTO_TEST_CASE(tokens_are_128_bit_hex_and_unique_across_threads) {
  std::mutex mu;
  std::set<std::string> all;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<std::string> mine;
      for (int i = 0; i < 5000; ++i) mine.push_back(dlq::core::new_lease_token());  // > one pool
      std::lock_guard lock(mu);
      all.insert(mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(all.size() == 20000u);
  for (const auto& token : all) {
    BOOST_TEST_REQUIRE(token.size() == 32u);
    BOOST_TEST_REQUIRE(token.find_first_not_of("0123456789abcdef") == std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

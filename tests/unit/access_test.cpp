// Who may do what, without HTTP: every role against every kind of access a route can need, the
// anonymous cases (no tokens configured, open routes), and the ways a token can be missing or
// wrong.
#include <boost/test/unit_test.hpp>

#include <map>

#include "core/access.hpp"

using namespace dlq;
using namespace dlq::core;

namespace {

AuthToken token(const std::string& name, const std::string& secret,
                std::vector<std::string> roles) {
  return {name, sha256_hex(secret), std::move(roles)};
}

Config with_tokens(bool public_metrics = false) {
  Config c;
  c.auth.tokens = {token("p", "producer-secret", {"producer"}),
                   token("w", "worker-secret", {"worker"}),
                   token("r", "reader-secret", {"reader"}),
                   token("a", "admin-secret", {"admin"}),
                   token("pw", "both-secret", {"producer", "worker"})};
  c.auth.public_metrics = public_metrics;
  return c;
}

std::string bearer(const std::string& secret) { return "Bearer " + secret; }

Verdict verdict(const AccessControl& access, Access needed, const std::string& header) {
  return access.check(needed, &header).verdict;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(access_control)

BOOST_AUTO_TEST_CASE(each_role_may_do_its_own_and_admin_may_do_everything) {
  AccessControl access(with_tokens());
  const Verdict yes = Verdict::allowed, no = Verdict::forbidden;
  // Rows: the access a route needs; columns: producer, worker, reader, admin, producer+worker.
  const std::map<Access, std::vector<Verdict>> expected = {
      {Access::open, {yes, yes, yes, yes, yes}},
      {Access::producer, {yes, no, no, yes, yes}},
      {Access::worker, {no, yes, no, yes, yes}},
      {Access::reader, {no, no, yes, yes, no}},
      {Access::admin, {no, no, no, yes, no}},
      {Access::reader_unless_public_metrics, {no, no, yes, yes, no}},
  };
  const std::vector<std::pair<std::string, std::string>> holders = {
      {"p", "producer-secret"}, {"w", "worker-secret"}, {"r", "reader-secret"},
      {"a", "admin-secret"}, {"pw", "both-secret"}};
  for (const auto& [needed, verdicts] : expected) {
    for (std::size_t i = 0; i < holders.size(); ++i) {
      BOOST_TEST_CONTEXT(to_string(needed) << " by " << holders[i].first) {
        const std::string header = bearer(holders[i].second);
        auto decision = access.check(needed, &header);
        BOOST_TEST((decision.verdict == verdicts[i]));
        // An open route does not ask who it is; every other names the token's holder.
        BOOST_TEST(decision.actor == (needed == Access::open ? "anonymous" : holders[i].first));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_missing_or_wrong_token_is_unauthorized_not_forbidden) {
  AccessControl access(with_tokens());
  for (Access needed : {Access::producer, Access::worker, Access::reader, Access::admin,
                        Access::reader_unless_public_metrics}) {
    BOOST_TEST_CONTEXT(to_string(needed)) {
      auto none = access.check(needed, nullptr);
      BOOST_TEST((none.verdict == Verdict::unauthorized));
      BOOST_TEST(none.actor == "anonymous");
      BOOST_TEST((verdict(access, needed, bearer("no-such-secret")) == Verdict::unauthorized));
      // The hash, not the token: a client that sends what the config holds is not let in.
      BOOST_TEST((verdict(access, needed, bearer(sha256_hex("admin-secret"))) ==
                  Verdict::unauthorized));
      for (const char* malformed : {"admin-secret", "Basic admin-secret", "Bearer", "Bearer ",
                                    "Bearer:admin-secret", "Bearertoken"}) {
        BOOST_TEST((verdict(access, needed, malformed) == Verdict::unauthorized), malformed);
      }
    }
  }
  // The scheme in any case, one or more spaces, trailing blanks ignored.
  BOOST_TEST((verdict(access, Access::admin, "bearer admin-secret") == Verdict::allowed));
  BOOST_TEST((verdict(access, Access::admin, "BEARER   admin-secret \t") == Verdict::allowed));
  // Open routes need nothing, whatever is sent.
  BOOST_TEST((access.check(Access::open, nullptr).verdict == Verdict::allowed));
  BOOST_TEST((verdict(access, Access::open, bearer("no-such-secret")) == Verdict::allowed));
}

BOOST_AUTO_TEST_CASE(public_metrics_opens_only_the_metrics_access) {
  AccessControl access(with_tokens(true));
  auto anonymous = access.check(Access::reader_unless_public_metrics, nullptr);
  BOOST_TEST((anonymous.verdict == Verdict::allowed));
  BOOST_TEST(anonymous.actor == "anonymous");
  BOOST_TEST((access.check(Access::reader, nullptr).verdict == Verdict::unauthorized));
}

BOOST_AUTO_TEST_CASE(without_tokens_everything_is_allowed_to_anonymous) {
  AccessControl access{Config{}};
  BOOST_TEST(!access.enforcing());
  BOOST_TEST(access.token_count() == 0u);
  for (Access needed : {Access::open, Access::producer, Access::worker, Access::reader,
                        Access::admin, Access::reader_unless_public_metrics}) {
    auto decision = access.check(needed, nullptr);
    BOOST_TEST((decision.verdict == Verdict::allowed), to_string(needed));
    BOOST_TEST(decision.actor == "anonymous");
  }
}

BOOST_AUTO_TEST_CASE(replaced_tokens_take_effect_and_the_old_ones_stop_working) {
  AccessControl access(with_tokens());
  BOOST_TEST(access.enforcing());
  BOOST_TEST(access.token_count() == 5u);
  access.replace({token("new", "new-secret", {"reader"})});
  BOOST_TEST(access.token_count() == 1u);
  BOOST_TEST((verdict(access, Access::reader, bearer("reader-secret")) == Verdict::unauthorized));
  auto fresh = access.check(Access::reader, nullptr);
  BOOST_TEST((fresh.verdict == Verdict::unauthorized));
  const std::string header = bearer("new-secret");
  BOOST_TEST(access.check(Access::reader, &header).actor == "new");
  BOOST_TEST((access.check(Access::admin, &header).verdict == Verdict::forbidden));
}

BOOST_AUTO_TEST_SUITE_END()

// Batch actions of the dead-letter desk on both databases: a stored preview confirmed once by its
// token and kind (a refusal writes nothing and spends nothing; a replay creates its run with the
// matched ids as items), one winner when two nodes confirm one token, and batch dismissal.
#include <boost/test/unit_test.hpp>

#include <array>
#include <thread>

#include <boost/json.hpp>

#include "store/store_fixture.hpp"
#include "support/preconditions.hpp"

using namespace dlq;
using namespace dlq::test;
namespace asio = boost::asio;
namespace utf = boost::unit_test;

namespace {

const TimeMs T = 4102444800000;  // 2100-01-01

using Ids = std::vector<MessageId>;

store::BatchPreview preview(const std::string& token, const std::string& kind) {
  store::BatchPreview p;
  p.token_sha256 = token;
  p.kind = kind;
  p.filter = R"({"queue":"q"})";
  p.matched = 2;
  p.ids_sha256 = "digest-of-the-ids";
  p.job_types = {"email", "sms"};
  p.created_at = T;
  p.expires_at = T + 600000;
  return p;
}

// A confirmation that records what the store showed it; no preview: refused as the core does.
struct Confirmation {
  store::ConfirmParams params;
  std::optional<store::ConfirmFacts> seen;
  store::ConfirmPlan plan;

  Confirmation(const std::string& token, const std::string& kind) {
    params.token_sha256 = token;
    params.kind = kind;
    params.filter.queue = "q";
    params.decide = [this](const store::ConfirmFacts& facts) -> Result<store::ConfirmPlan> {
      seen = facts;
      if (!facts.preview) return Error(Errc::preview_stale, "no such preview");
      return plan;
    };
  }
  Confirmation(const Confirmation&) = delete;  // decide points at this one
  Confirmation& operator=(const Confirmation&) = delete;
};

AuditEntry audit_entry(const std::string& action) {
  AuditEntry e;
  e.at = T + 1000;
  e.actor = "ops";
  e.action = action;
  e.details = R"({"matched":3})";
  return e;
}

store::ReplayRun scheduled_run() {
  store::ReplayRun r;
  r.filter = R"({"queue":"q"})";
  r.actor = "ops";
  r.reason = "fixed the consumer";
  r.created_at = T + 1000;
  r.start_at = T + 1000;
  r.delay_seconds = 0;
  r.rate_per_second = 10;
  r.keep_order = true;
  r.paced_from = T + 1000;
  r.updated_at = T + 1000;
  return r;
}

}  // namespace

struct BatchFixture : StoreFixture {
  Result<store::Confirmed> confirm(Confirmation& c) { return wait(store->batch_confirm(c.params)); }
};

BOOST_FIXTURE_TEST_SUITE(store_batch, BatchFixture)

BOOST_AUTO_TEST_CASE(a_confirm_finds_its_preview_by_token_and_kind_and_uses_it_once) {
  Message a = dead_message("q", "a");
  Message b = dead_message("q", "b");
  dead_message("other", "not in the filter");
  BOOST_TEST(wait(store->batch_preview_save(preview("token-1", "dismiss"))));

  // A dismiss token does not confirm a replay; the refusal leaves it usable.
  Confirmation as_replay("token-1", "replay");
  BOOST_TEST((confirm(as_replay).error().code == Errc::preview_stale));
  BOOST_REQUIRE(as_replay.seen.has_value());
  BOOST_TEST(!as_replay.seen->preview.has_value());

  Confirmation as_dismiss("token-1", "dismiss");
  auto confirmed = confirm(as_dismiss);
  BOOST_REQUIRE(confirmed.has_value());
  BOOST_TEST((confirmed->ids == Ids{a.id, b.id}));
  BOOST_TEST(!confirmed->run.has_value());
  const auto& stored = *as_dismiss.seen->preview;  // as it was saved
  BOOST_TEST(stored.token_sha256 == "token-1");
  BOOST_TEST(stored.kind == "dismiss");
  BOOST_TEST(stored.filter == R"({"queue":"q"})");
  BOOST_TEST(stored.matched == 2);
  BOOST_TEST(stored.ids_sha256 == "digest-of-the-ids");
  BOOST_TEST((stored.job_types == std::vector<std::string>{"email", "sms"}));
  BOOST_TEST(stored.created_at == T);
  BOOST_TEST(stored.expires_at == T + 600000);
  BOOST_TEST((as_dismiss.seen->ids_now == Ids{a.id, b.id}));

  // Used up.
  Confirmation again("token-1", "dismiss");
  BOOST_TEST((confirm(again).error().code == Errc::preview_stale));
  BOOST_TEST(!again.seen->preview.has_value());
  BOOST_TEST(wait(store->audit_list({})).empty());  // the plans carried no entry
}

BOOST_AUTO_TEST_CASE(a_refused_confirm_writes_nothing_and_leaves_the_token_usable) {
  Message a = dead_message("q", "a");
  wait(store->batch_preview_save(preview("token-1", "replay")));
  Confirmation refused("token-1", "replay");
  refused.plan.run = scheduled_run();
  refused.plan.audit = audit_entry("batch_replay");
  refused.params.decide = [&refused](const store::ConfirmFacts& facts) -> Result<store::ConfirmPlan> {
    refused.seen = facts;  // found, but the set changed since (say): refused
    return Error(Errc::preview_stale, "the matched set changed");
  };
  BOOST_TEST((confirm(refused).error().code == Errc::preview_stale));
  BOOST_TEST(refused.seen->preview.has_value());
  BOOST_TEST(wait(store->replay_runs_list({})).empty());
  BOOST_TEST(wait(store->audit_list({})).empty());
  BOOST_TEST(to_string(wait(store->message_find("q", a.id))->status) == "dead");

  Confirmation retried("token-1", "replay");
  BOOST_TEST(confirm(retried).has_value());
  BOOST_TEST(retried.seen->preview.has_value());
}

BOOST_AUTO_TEST_CASE(a_replay_confirm_creates_its_run_and_names_it_in_its_audit_entry) {
  // Dying in another order than their ids; keep_order takes them by dead_at.
  Message late = dead_message_at("q", "late", T + 300);
  Message early = dead_message_at("q", "early", T + 100);
  Message middle = dead_message_at("q", "middle", T + 200);
  Message elsewhere = dead_message_at("other", "not matched", T);
  wait(store->batch_preview_save(preview("token-1", "replay")));
  Confirmation c("token-1", "replay");
  c.params.dead_at_order = true;
  c.plan.run = scheduled_run();
  c.plan.audit = audit_entry("batch_replay");
  auto confirmed = confirm(c);
  BOOST_REQUIRE(confirmed.has_value());
  const Ids order{early.id, middle.id, late.id};
  BOOST_TEST((confirmed->ids == order));
  BOOST_REQUIRE(confirmed->run.has_value());
  const store::ReplayRun& run = *confirmed->run;
  BOOST_TEST(run.id > 0);
  BOOST_TEST(run.matched == 3);

  auto found = wait(store->replay_run_find(run.id));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(to_string(found->status) == "scheduled");
  BOOST_TEST(found->matched == 3);
  BOOST_TEST(found->next_seq == 0);
  BOOST_TEST(found->keep_order);
  BOOST_TEST(*found->actor == "ops");
  BOOST_TEST(*found->reason == "fixed the consumer");
  BOOST_TEST(found->start_at == T + 1000);
  BOOST_TEST(found->rate_per_second == 10.0);
  BOOST_TEST(found->paced_from == T + 1000);
  BOOST_TEST(found->filter == R"({"queue":"q"})");

  // Its items: the matched ids (and only they), in the confirmed order.
  for (MessageId id : order) {
    store::RunListParams holding;
    holding.message_id = id;
    auto runs = wait(store->replay_runs_list(holding));
    BOOST_REQUIRE_EQUAL(runs.size(), 1u);
    BOOST_TEST(runs[0].id == run.id);
  }
  store::RunListParams not_holding;
  not_holding.message_id = elsewhere.id;
  BOOST_TEST(wait(store->replay_runs_list(not_holding)).empty());
  store::RunStepParams step;
  step.run_id = run.id;
  step.max_replays = 10;
  step.max_items = 10;
  step.now = T + 1000;
  step.decide = [](const Message& m, const store::Related& r) {
    return core::replay(m, r, {}, T + 1000);
  };
  auto stepped = wait(store->replay_run_step(step));
  BOOST_REQUIRE_EQUAL(stepped.replayed.size(), 3u);
  Ids replayed;
  for (const auto& m : stepped.replayed) replayed.push_back(m.id);
  BOOST_TEST((replayed == order));

  auto entries = wait(store->audit_list({}));
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST(entries[0].action == "batch_replay");
  auto details = boost::json::parse(*entries[0].details).as_object();
  BOOST_TEST(details.at("replay_id").as_int64() == run.id);
  BOOST_TEST(details.at("matched").as_int64() == 3);  // the plan's own details kept
}

BOOST_AUTO_TEST_CASE(two_nodes_confirming_one_token_at_once_one_wins,
                     *utf::precondition(on_postgresql)) {
  dead_message("q", "a");
  dead_message("q", "b");
  constexpr int kTokens = 10;
  for (int i = 0; i < kTokens; ++i) {
    wait(store->batch_preview_save(preview("token-" + std::to_string(i), "replay")));
  }
  // Declared before the nodes, whose store threads post completions into them.
  std::array<asio::io_context, 2> contexts;
  std::array<std::unique_ptr<store::SqlStore>, 2> nodes{open_another(), open_another()};
  std::array<int, 2> wins{0, 0};
  std::array<int, 2> stale{0, 0};
  std::vector<std::thread> threads;
  for (std::size_t n = 0; n < 2; ++n) {
    threads.emplace_back([&, n] {
      for (int i = 0; i < kTokens; ++i) {
        Confirmation c("token-" + std::to_string(i), "replay");
        c.plan.run = scheduled_run();
        c.plan.audit = audit_entry("batch_replay");
        auto f = asio::co_spawn(contexts[n], nodes[n]->batch_confirm(c.params), asio::use_future);
        contexts[n].restart();
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
          contexts[n].run_one();
        }
        auto r = f.get();
        if (r) ++wins[n];
        if (!r && r.error().code == Errc::preview_stale) ++stale[n];
      }
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(wins[0] + wins[1] == kTokens);  // each token confirmed exactly once
  BOOST_TEST(stale[0] + stale[1] == kTokens);
  store::RunListParams all;
  all.limit = 100;
  BOOST_TEST(wait(store->replay_runs_list(all)).size() == static_cast<std::size_t>(kTokens));
  store::AuditQuery entries;
  entries.limit = 100;
  BOOST_TEST(wait(store->audit_list(entries)).size() == static_cast<std::size_t>(kTokens));
  for (auto& node : nodes) node->close();
}

BOOST_AUTO_TEST_CASE(a_batch_dismisses_the_dead_skips_the_rest_and_writes_one_entry) {
  Message d1 = dead_message("q", "d1");
  Message d2 = dead_message("other", "d2");
  Message pending = insert("q", "pending", T);
  int audits = 0;
  Ids audited;
  long long audited_skipped = -1;
  store::DismissBatchParams p;
  p.ids = {d1.id, pending.id, d2.id + 1000, d2.id};
  p.decide = [](const Message& m, const store::Related&) {
    return core::dismiss(m, std::string("noise"), std::string("ops"), T + 1000);
  };
  p.audit = [&](const Ids& dismissed, long long skipped) {
    ++audits;
    audited = dismissed;
    audited_skipped = skipped;
    AuditEntry e;
    e.at = T + 1000;
    e.action = "dismiss";
    e.message_ids = dismissed;
    return e;
  };
  auto done = wait(store->messages_dismiss_batch(p));
  BOOST_TEST(done.dismissed == 2);
  BOOST_TEST(done.skipped == 2);
  BOOST_REQUIRE_EQUAL(done.messages.size(), 2u);
  BOOST_TEST(done.messages[0].id == d1.id);
  BOOST_TEST(to_string(done.messages[0].status) == "dismissed");
  BOOST_TEST(done.messages[1].id == d2.id);
  BOOST_TEST(audits == 1);
  BOOST_TEST((audited == Ids{d1.id, d2.id}));
  BOOST_TEST(audited_skipped == 2);

  BOOST_TEST(to_string(wait(store->message_find("q", d1.id))->status) == "dismissed");
  BOOST_TEST(to_string(wait(store->message_find("other", d2.id))->status) == "dismissed");
  BOOST_TEST(to_string(wait(store->message_find("q", pending.id))->status) == "pending");
  auto history = wait(store->message_history("q", d1.id))->attempts;
  BOOST_TEST(to_string(history.back().outcome) == "dismissed");
  BOOST_TEST(*history.back().reason == "noise");
  auto entries = wait(store->audit_list({}));
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST((entries[0].message_ids == Ids{d1.id, d2.id}));

  // Nothing left to dismiss among them: no entry.
  auto again = wait(store->messages_dismiss_batch(p));
  BOOST_TEST(again.dismissed == 0);
  BOOST_TEST(again.skipped == 4);
  BOOST_TEST(again.messages.empty());
  BOOST_TEST(audits == 1);
  BOOST_TEST(wait(store->audit_list({})).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

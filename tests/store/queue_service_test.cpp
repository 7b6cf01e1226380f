// The QueueService on a real store (each backend, through the store fixture) with a ManualClock:
// the reaper and the due-time timer are driven by moving the clock, not by waiting for real
// leases to run out.
#include <boost/test/unit_test.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>

#include "core/queue_service.hpp"
#include "store/store_fixture.hpp"

namespace asio = boost::asio;
using namespace dlq;
using namespace dlq::core;

namespace {

const TimeMs kStart = 4102444800000;  // 2100-01-01: far from the real clock

// The fixture's store and io_context, with a service on them; the fixture closes the store after
// the service is gone.
struct Harness : test::StoreFixture {
  Config config;
  ManualClock clock{kStart};
  std::unique_ptr<QueueService> service;

  // `before_start` subscribes to events, as dlqd's wiring does before it starts the service.
  explicit Harness(std::function<void(QueueService&)> before_start = {}) {
    config.defaults.backoff.jitter_seconds = 0;
    service = std::make_unique<QueueService>(ioc.get_executor(), *store, config, clock);
    if (before_start) before_start(*service);
    service->start();
  }

  // Runs `body` to completion on the io_context, then stops the service.
  template <class F>
  void run(F body) {
    std::exception_ptr failure;
    auto wrapped = [this, body]() -> asio::awaitable<void> {
      co_await body(*this);
      service->shutdown();
    };
    asio::co_spawn(ioc, wrapped(), [&failure, this](std::exception_ptr e) {
      failure = e;
      if (e) service->shutdown();
    });
    ioc.run();
    if (failure) std::rethrow_exception(failure);
  }

  asio::awaitable<void> sleep_ms(int ms) {
    asio::steady_timer t(ioc, std::chrono::milliseconds(ms));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }

  // Polls until the message reaches `status` (the timer works in the background), or gives up.
  asio::awaitable<Message> await_status(const std::string& queue, MessageId id, Status status) {
    for (int i = 0; i < 300; ++i) {
      auto m = co_await service->find(ctx(), queue, id);
      if (m && m->status == status) co_return *m;
      co_await sleep_ms(10);
    }
    throw std::runtime_error("message never reached status " + std::string(to_string(status)));
  }

  // The context of a request made now, by nobody in particular.
  RequestContext ctx() const {
    RequestContext c;
    c.now = clock.now();
    return c;
  }

  asio::awaitable<MessageId> enqueue(const std::string& queue) {
    store::NewMessage m;
    m.payload = "p";
    std::vector<store::NewMessage> list{m};
    auto inserted = co_await service->enqueue(ctx(), queue, std::move(list));
    co_return inserted.value().at(0).message.id;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(queue_service)

BOOST_AUTO_TEST_CASE(reaper_returns_an_expired_lease_after_backoff) {
  Harness h;
  h.run([](Harness& h) -> asio::awaitable<void> {
    MessageId id = co_await h.enqueue("q");
    ClaimCommand cmd;
    cmd.queue = "q";
    auto claimed = (co_await h.service->claim(h.ctx(), cmd)).messages;
    BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
    BOOST_TEST(*claimed[0].lease_expires_at == kStart + 30000);
    co_await h.sleep_ms(50);
    auto still = co_await h.service->find(h.ctx(), "q", id);
    BOOST_TEST(to_string(still->status) == "processing");  // the lease still holds

    h.clock.advance(30001);
    h.service->clock_moved();
    Message m = co_await h.await_status("q", id, Status::pending);
    BOOST_TEST(m.lease_expiries == 1);
    BOOST_TEST(m.retry_count == 0);
    BOOST_TEST(*m.last_error == "lease expired");
    BOOST_TEST(*m.retry_after == kStart + 30000 + 2000);
    auto history = co_await h.service->attempts(h.ctx(), "q", id, {});
    BOOST_TEST(to_string(history->entries.at(0).outcome) == "lease_expired");
  });
}

BOOST_AUTO_TEST_CASE(poison_message_goes_dead_after_max_lease_expiries) {
  Harness h;
  h.run([](Harness& h) -> asio::awaitable<void> {
    MessageId id = co_await h.enqueue("q");
    for (int i = 1; i <= 3; ++i) {
      ClaimCommand cmd;
      cmd.queue = "q";
      auto claimed = (co_await h.service->claim(h.ctx(), cmd)).messages;
      BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
      h.clock.advance(31000);
      h.service->clock_moved();
      Status expected = i < 3 ? Status::pending : Status::dead;
      Message m = co_await h.await_status("q", id, expected);
      BOOST_TEST(m.lease_expiries == i);
      h.clock.advance(10 * 60 * 1000);  // past any backoff
    }
    auto dead = co_await h.service->find(h.ctx(), "q", id);
    BOOST_TEST(to_string(*dead->dead_reason) == "lease_expired");
  });
}

BOOST_AUTO_TEST_CASE(a_parked_claim_wakes_when_retry_after_passes) {
  Harness h;
  h.run([](Harness& h) -> asio::awaitable<void> {
    MessageId id = co_await h.enqueue("q");
    ClaimCommand cmd;
    cmd.queue = "q";
    auto claimed = (co_await h.service->claim(h.ctx(), cmd)).messages;
    FailInput in;
    auto failed = co_await h.service->fail(h.ctx(), "q", id, in);
    BOOST_TEST(*failed->retry_after == kStart + 2000);

    // Park a claimer (waits up to 10 s of real time), then move the clock past retry_after.
    ClaimCommand waiting = cmd;
    waiting.wait_ms = 10000;
    auto started = std::chrono::steady_clock::now();
    auto mover = [&h]() -> asio::awaitable<void> {
      co_await h.sleep_ms(100);
      h.clock.advance(2000);
      h.service->clock_moved();
    };
    asio::co_spawn(h.ioc, mover(), asio::detached);
    auto woke = (co_await h.service->claim(h.ctx(), waiting)).messages;
    BOOST_REQUIRE_EQUAL(woke.size(), 1u);
    BOOST_TEST(woke[0].id == id);
    BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(5)));
  });
}

BOOST_AUTO_TEST_CASE(a_parked_claim_wakes_on_enqueue_and_times_out_empty) {
  Harness h;
  h.run([](Harness& h) -> asio::awaitable<void> {
    ClaimCommand cmd;
    cmd.queue = "q";
    cmd.wait_ms = 300;
    auto started = std::chrono::steady_clock::now();
    auto none = (co_await h.service->claim(h.ctx(), cmd)).messages;
    auto waited = std::chrono::steady_clock::now() - started;
    BOOST_TEST(none.empty());
    BOOST_TEST((waited >= std::chrono::milliseconds(290)));
    BOOST_TEST((waited < std::chrono::seconds(3)));

    cmd.wait_ms = 10000;
    auto producer = [&h]() -> asio::awaitable<void> {
      co_await h.sleep_ms(100);
      co_await h.enqueue("q");
    };
    asio::co_spawn(h.ioc, producer(), asio::detached);
    started = std::chrono::steady_clock::now();
    auto got = (co_await h.service->claim(h.ctx(), cmd)).messages;
    BOOST_TEST(got.size() == 1u);
    BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(5)));
  });
}

BOOST_AUTO_TEST_CASE(a_cancelled_claim_leaves_no_waiter_and_takes_nothing) {
  Harness h;
  h.run([](Harness& h) -> asio::awaitable<void> {
    ClaimCommand cmd;
    cmd.queue = "q";
    cmd.wait_ms = 10000;
    // The client of this claim hangs up after 100 ms.
    struct LeavingClient final : ClientWatch {
      std::function<void()> on_gone;
      bool left = false;
      // A client gone before the watch starts (the first claim attempt outlasted its 100 ms) is
      // reported at once, as the real watch finds the closed socket when it starts reading.
      void start(std::function<void()> f) override {
        on_gone = std::move(f);
        if (left) on_gone();
      }
      asio::awaitable<void> stop() override { co_return; }
      bool gone() const override { return left; }
    } client;
    auto canceller = [&h, &client]() -> asio::awaitable<void> {
      co_await h.sleep_ms(100);
      client.left = true;
      if (client.on_gone) client.on_gone();
    };
    asio::co_spawn(h.ioc, canceller(), asio::detached);
    RequestContext ctx = h.ctx();
    ctx.client = &client;
    auto started = std::chrono::steady_clock::now();
    auto got = (co_await h.service->claim(ctx, cmd)).messages;
    BOOST_TEST(got.empty());
    BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(3)));
    // The next enqueue is not swallowed by a ghost waiter: it is still claimable.
    MessageId id = co_await h.enqueue("q");
    cmd.wait_ms = 0;
    auto next = (co_await h.service->claim(h.ctx(), cmd)).messages;
    BOOST_REQUIRE_EQUAL(next.size(), 1u);
    BOOST_TEST(next[0].id == id);
  });
}

BOOST_AUTO_TEST_CASE(the_client_is_watched_only_while_a_claim_waits) {
  Harness h;
  h.run([](Harness& h) -> asio::awaitable<void> {
    struct CountingClient final : ClientWatch {
      int started = 0;
      void start(std::function<void()>) override { ++started; }
      asio::awaitable<void> stop() override { co_return; }
      bool gone() const override { return false; }
    } client;
    ClaimCommand cmd;
    cmd.queue = "q";
    cmd.wait_ms = 200;
    RequestContext ctx = h.ctx();
    ctx.client = &client;
    // Work is there: the claim takes it at once and never watches (no read, no coroutine).
    co_await h.enqueue("q");
    BOOST_REQUIRE_EQUAL((co_await h.service->claim(ctx, cmd)).messages.size(), 1u);
    BOOST_TEST(client.started == 0);
    // Nothing is there: the claim waits, watching its client.
    BOOST_TEST((co_await h.service->claim(ctx, cmd)).messages.empty());
    BOOST_TEST(client.started == 1);
  });
}

// What subscribers of the event stream see, in order: counts for enqueues and claims, and one
// event per message that failed, went dead, was replayed, dismissed, or had its lease expire.
struct Seen {
  std::string kind;
  MessageId id = 0;
  std::string status;
  std::optional<std::string> dead_reason;
};

BOOST_AUTO_TEST_CASE(events_report_what_happened_to_messages) {
  std::vector<Seen> seen;
  Harness h([&seen](QueueService& service) {
    service.events().subscribe([&seen](const Event& e) {
      Seen s{std::string(to_string(e.kind)), e.message ? e.message->id : 0,
             e.message ? std::string(to_string(e.message->status)) : "", std::nullopt};
      if (e.message && e.message->dead_reason) {
        s.dead_reason = std::string(to_string(*e.message->dead_reason));
      }
      seen.push_back(std::move(s));
    });
    // A subscriber that throws is logged and skipped: the others still hear everything.
    service.events().subscribe([](const Event&) { throw std::runtime_error("subscriber bug"); });
  });
  h.run([&seen](Harness& h) -> asio::awaitable<void> {
    MessageId id = co_await h.enqueue("q");
    ClaimCommand cmd;
    cmd.queue = "q";
    FailInput fatal;
    fatal.retryable = false;
    co_await h.service->claim(h.ctx(), cmd);
    auto dead = co_await h.service->fail(h.ctx(), "q", id, fatal);
    BOOST_REQUIRE(dead.has_value());
    auto replayed = co_await h.service->replay(h.ctx(), "q", id, ReplayInput{});
    BOOST_REQUIRE(replayed.has_value());
    auto dry = co_await h.service->replay(h.ctx(), "q", id, ReplayInput{}, true);
    BOOST_TEST(!dry.has_value());  // no longer dead; a dry run publishes nothing either way

    // Three leases run out (the default max_lease_expiries): three lease_expired events, the
    // last with the reaper's dead letter.
    for (int i = 0; i < 3; ++i) {
      auto claimed = (co_await h.service->claim(h.ctx(), cmd)).messages;
      BOOST_REQUIRE_EQUAL(claimed.size(), 1u);
      h.clock.advance(31000);
      h.service->clock_moved();
      co_await h.await_status("q", id, i < 2 ? Status::pending : Status::dead);
      h.clock.advance(10 * 60 * 1000);
    }
    auto dismissed = co_await h.service->dismiss(h.ctx(), "q", id, std::string("won't fix"));
    BOOST_REQUIRE(dismissed.has_value());

    std::vector<std::string> kinds;
    for (const auto& s : seen) kinds.push_back(s.kind + ":" + s.status);
    BOOST_TEST(kinds == std::vector<std::string>(
                            {"enqueued:", "claimed:", "failed:dead", "dead_lettered:dead",
                             "replayed:pending", "claimed:", "lease_expired:pending", "claimed:",
                             "lease_expired:pending", "claimed:", "lease_expired:dead",
                             "dead_lettered:dead", "dismissed:dismissed"}));
    for (const auto& s : seen) {
      if (!s.status.empty()) BOOST_TEST(s.id == id);
    }
    BOOST_TEST(*seen.at(3).dead_reason == "non_retryable");
    BOOST_TEST(*seen.at(11).dead_reason == "lease_expired");
  });
}

BOOST_AUTO_TEST_SUITE_END()

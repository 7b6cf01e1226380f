// The store threads: group commit (Writer), queries (Readers), and the job queue they share.
#include "store/workers.hpp"

#include <string_view>

#include "model/error.hpp"
#include "model/logging.hpp"
#include "store/connection.hpp"
#include "store/entity_sql.hpp"

namespace dlq::store {
namespace {

constexpr std::string_view kCommitting = "committing";

// The current exception as the store reports it: a lost connection is DatabaseUnavailable
// whatever the driver said; other database errors are classified by their codes.
std::exception_ptr as_store_fault(const char* context, const Session& s) {
  try {
    if (s.connection && s.connection->broken()) {
      try {
        throw;
      } catch (const std::exception& e) {
        throw DatabaseUnavailable(std::string(context) + ": connection lost: " + e.what(),
                                  std::string_view(context) == kCommitting);
      }
    }
    rethrow_database_error(context, s.connection ? s.connection->sqlite_path() : "");
  } catch (...) {
    return std::current_exception();
  }
}

bool open_session(Session& s, const SessionFactory& factory, std::exception_ptr& error) {
  if (s.connection) return true;
  try {
    s.connection = factory.connect();
    s.sql = std::make_unique<EntitySql>(*s.connection, factory.node);
    return true;
  } catch (...) {
    s.sql.reset();
    s.connection.reset();
    error = std::current_exception();
    log::warn("database connection failed", {{"error", describe(error)}});
    return false;
  }
}

// Marks the session's connection idle again when a job is done with it (the job marks it busy
// once it has a connection: see StatementWatch).
class BusySpell {
 public:
  explicit BusySpell(Session& s) : s_(s) {}
  ~BusySpell() {
    if (s_.connection) s_.connection->mark_idle();
  }
  BusySpell(const BusySpell&) = delete;
  BusySpell& operator=(const BusySpell&) = delete;

 private:
  Session& s_;
};

void close_if_broken(Session& s) {
  if (s.connection && s.connection->broken()) {
    log::warn("database connection lost; reconnecting on next use");
    s.sql.reset();
    s.connection.reset();
  }
}

}  // namespace

void JobQueue::push(std::unique_ptr<StoreJob> job) {
  std::unique_lock lock(mu_);
  if (closed_) {
    lock.unlock();
    job->complete(std::make_exception_ptr(ShuttingDown()));
    return;
  }
  jobs_.push_back(std::move(job));
  bool wake = waiting_ > 0;
  lock.unlock();
  // Outside the lock: a store thread woken inside it would only wait again, for the mutex.
  if (wake) cv_.notify_one();
}

bool JobQueue::pop(std::vector<std::unique_ptr<StoreJob>>& out, std::size_t max,
                   std::chrono::microseconds linger) {
  std::unique_lock lock(mu_);
  ++waiting_;
  cv_.wait(lock, [this] { return closed_ || !jobs_.empty(); });
  if (!jobs_.empty() && linger.count() > 0 && jobs_.size() < max && !closed_) {
    // Optional: trade a little latency for fuller groups.
    cv_.wait_for(lock, linger, [this, max] { return closed_ || jobs_.size() >= max; });
  }
  --waiting_;
  if (jobs_.empty()) return false;
  while (!jobs_.empty() && out.size() < max) {
    out.push_back(std::move(jobs_.front()));
    jobs_.pop_front();
  }
  return true;
}

void JobQueue::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

void JobThreads::start(int threads, const std::function<void(int index)>& body) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([body, i] { body(i); });
}

void JobThreads::stop() {
  std::call_once(stopped_, [this] {
    queue_.close();
    for (auto& t : threads_) t.join();
  });
}

Session::~Session() {
  sql.reset();  // statements before the session they were prepared on
  connection.reset();
}

Writer::Writer(SessionFactory factory, std::unique_ptr<Connection> first, std::size_t max_batch,
               std::chrono::microseconds max_wait, int threads, bool answer_before_commit)
    : factory_(std::move(factory)),
      max_batch_(max_batch),
      max_wait_(max_wait),
      answer_before_commit_(answer_before_commit) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    auto session = std::make_unique<Session>();
    if (i == 0 && first) {
      session->connection = std::move(first);
      session->sql = std::make_unique<EntitySql>(*session->connection, factory_.node);
    }
    sessions_.push_back(std::move(session));
  }
  threads_.start(static_cast<int>(sessions_.size()), [this](int i) { loop(*sessions_[i]); });
}

Writer::~Writer() { stop(); }

void Writer::loop(Session& session) {
  std::vector<std::unique_ptr<StoreJob>> batch;
  // A group is everything queued when the previous commit ended (up to max_batch).
  while (threads_.queue().pop(batch, max_batch_, max_wait_)) {
    run_batch(session, batch);
    batch.clear();
  }
}

// Opens the write transaction. A connection that died while idle (the database restarted)
// fails here, before any job ran: replacing it and trying once more is safe.
bool Writer::begin(Session& s, std::exception_ptr& error) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!open_session(s, factory_, error)) return false;
    s.connection->mark_busy();
    try {
      s.connection->begin_write();
      error = nullptr;  // a failed first attempt must not be reported for a committed write
      return true;
    } catch (...) {
      error = as_store_fault("beginning a transaction", s);
      bool broken = s.connection->broken();
      close_if_broken(s);
      if (!broken) return false;
    }
  }
  return false;
}

void Writer::run_batch(Session& s, std::vector<std::unique_ptr<StoreJob>>& batch) {
  stats_.jobs += batch.size();
  auto began = std::chrono::steady_clock::now();
  for (const auto& job : batch) stats_.wait_seconds.observe(began - job->queued_at);
  if (batch.size() == 1) {
    run_alone(s, *batch.front());
    return;
  }
  std::exception_ptr commit_error;
  bool answered = false;
  if (run_together(s, batch, commit_error, answered)) {
    if (answered) return;  // answer_before_commit: whatever the commit did
    for (auto& job : batch) job->complete(commit_error);
    return;
  }
  // One job threw: its neighbours must not pay for it. Each runs again, alone.
  for (auto& job : batch) run_alone(s, *job);
}

// Runs the whole group in one transaction. Returns false when a job or what goes with the commit
// threw (the transaction is rolled back and nothing of the group is applied); true otherwise,
// with commit_error set when the commit itself failed (then nothing is applied either, and every
// job gets that error) and `answered` set when the jobs were answered before the COMMIT.
bool Writer::run_together(Session& s, std::vector<std::unique_ptr<StoreJob>>& batch,
                          std::exception_ptr& commit_error, bool& answered) {
  BusySpell spell(s);
  if (!begin(s, commit_error)) return true;
  Connection& c = *s.connection;
  auto began = std::chrono::steady_clock::now();
  std::vector<char> prepared(batch.size(), 0);
  try {
    for (std::size_t i = 0; i < batch.size(); ++i) prepared[i] = batch[i]->prepare(*s.sql);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      s.sql->messages.start_job(prepared[i]);
      batch[i]->run(*s.sql);
    }
  } catch (...) {
    s.sql->discard_pending();
    c.rollback();
    close_if_broken(s);
    return false;
  }
  try {
    s.sql->before_commit();
    for (auto& job : batch) job->settle(*s.sql);
  } catch (...) {
    // The group's own writes are done, but what goes with its commit (NOTIFY, the hourly
    // counts) failed: roll back, or the connection stays in a failed transaction (PostgreSQL
    // refuses every later statement), and let each job try alone.
    s.sql->discard_pending();
    c.rollback();
    close_if_broken(s);
    return false;
  }
  stats_.statements_seconds.observe(std::chrono::steady_clock::now() - began);
  if (answer_before_commit_) {
    for (auto& job : batch) job->complete(nullptr);
    answered = true;
  }
  try {
    commit(c);
  } catch (...) {
    commit_error = as_store_fault(kCommitting.data(), s);
    close_if_broken(s);
  }
  return true;
}

void Writer::commit(Connection& c) {
  auto start = std::chrono::steady_clock::now();
  c.commit();
  stats_.commit_seconds.observe(std::chrono::steady_clock::now() - start);
  ++stats_.commits;
}

void Writer::run_alone(Session& s, StoreJob& job) {
  BusySpell spell(s);
  std::exception_ptr error;
  if (!begin(s, error)) {
    job.complete(error);
    return;
  }
  Connection& c = *s.connection;
  bool in_transaction = true;
  auto began = std::chrono::steady_clock::now();
  try {
    s.sql->messages.start_job(job.prepare(*s.sql));
    job.run(*s.sql);
    s.sql->before_commit();
    job.settle(*s.sql);
    stats_.statements_seconds.observe(std::chrono::steady_clock::now() - began);
    in_transaction = false;  // a failed COMMIT ends the transaction too
    if (answer_before_commit_) job.complete(nullptr);
    commit(c);
  } catch (...) {
    error = as_store_fault(in_transaction ? "running a write" : kCommitting.data(), s);
    if (s.sql) s.sql->discard_pending();
    if (in_transaction) c.rollback();
    close_if_broken(s);
  }
  if (answer_before_commit_ && !in_transaction) return;  // answered before the COMMIT
  job.complete(error);
}

Readers::Readers(SessionFactory factory, int threads) : factory_(std::move(factory)) {
  threads_.start(threads, [this](int) { loop(); });
}

Readers::~Readers() { stop(); }

void Readers::loop() {
  Session session;
  std::vector<std::unique_ptr<StoreJob>> next;
  while (threads_.queue().pop(next, 1)) {
    std::unique_ptr<StoreJob> job = std::move(next.front());
    next.clear();
    // Reads are idempotent: a connection that died while idle is replaced and the query tried
    // once more, so one restart of the database does not fail a request per reader thread.
    std::exception_ptr error;
    BusySpell spell(session);
    for (int attempt = 0; attempt < 2; ++attempt) {
      error = nullptr;
      if (!open_session(session, factory_, error)) break;
      session.connection->mark_busy();
      try {
        job->run(*session.sql);
        break;
      } catch (...) {
        error = as_store_fault("running a query", session);
        bool broken = session.connection->broken();
        close_if_broken(session);
        if (!broken) break;
      }
    }
    job->complete(error);
  }
}

}  // namespace dlq::store

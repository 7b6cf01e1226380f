// The store's own threads. Writer: one thread and one connection that applies write jobs in
// groups — every job that queued up while the previous commit ran shares the next transaction
// (one fsync), and each job learns its outcome only after that commit. Readers: a few threads
// with their own connections for queries. Neither ever runs on an I/O thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "model/histogram.hpp"

namespace dlq::store {

class Connection;
struct EntitySql;

class StoreJob {
 public:
  virtual ~StoreJob() = default;
  std::chrono::steady_clock::time_point queued_at;  // set by Writer::submit
  // Does the job's database work. May run twice: if a neighbour in its group throws, the group
  // is rolled back and every job runs again in a transaction of its own.
  virtual void run(EntitySql& sql) = 0;
  // Before any job of its group runs, in the group's transaction (writes only): the job may name
  // the messages its run will lock (MessageSql::lock_later), so that the group locks them all in
  // one statement. True when its run reads and changes existing message rows only through
  // MessageSql, which keeps the group's copies of locked rows honest and writes the transitions
  // it left for the group's end before a read needs them. Before a job that says false runs,
  // those are written and the copies dropped, and its own transitions are written at once
  // (MessageSql::start_job).
  virtual bool prepare(EntitySql&) { return false; }
  // After the group's before_commit() and before its COMMIT: an answer that run() left to the
  // commit's preparation is taken (an enqueue stored with its group, MessageSql::insert_later).
  virtual void settle(EntitySql&) {}
  // Called exactly once, after the commit (error null) or with the fault that stopped it.
  virtual void complete(std::exception_ptr error) = 0;
};

// A connection with the entities' statements prepared on it; replaced when it breaks.
struct Session {
  std::unique_ptr<Connection> connection;
  std::unique_ptr<EntitySql> sql;
  ~Session();
};
using Connector = std::function<std::unique_ptr<Connection>()>;

// What every store thread needs to open a session: a way to connect, and this node's id.
struct SessionFactory {
  Connector connect;
  std::string node;
};

// The jobs waiting for a store thread. After close(), new jobs are answered ShuttingDown at once
// and pop() drains what is left, then returns false.
class JobQueue {
 public:
  void push(std::unique_ptr<StoreJob> job);
  // Waits for work, then moves up to `max` jobs into `out` (waiting up to `linger` for more
  // when fewer are queued). False once closed and drained.
  bool pop(std::vector<std::unique_ptr<StoreJob>>& out, std::size_t max,
           std::chrono::microseconds linger = std::chrono::microseconds(0));
  void close();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<StoreJob>> jobs_;
  int waiting_ = 0;  // threads in pop(), waiting or about to
  bool closed_ = false;
};

// A job queue and the threads that serve it. stop() lets them run what is queued, then joins
// them; later submissions fail at once. Declare it last in its owner, so its threads stop before
// anything they use is destroyed.
class JobThreads {
 public:
  ~JobThreads() { stop(); }
  void start(int threads, const std::function<void(int index)>& body);
  void submit(std::unique_ptr<StoreJob> job) { queue_.push(std::move(job)); }
  JobQueue& queue() { return queue_; }
  void stop();

 private:
  JobQueue queue_;
  std::once_flag stopped_;
  std::vector<std::thread> threads_;
};

struct WriterStats {
  std::atomic<std::uint64_t> commits{0};
  std::atomic<std::uint64_t> jobs{0};
  Histogram commit_seconds;      // how long each COMMIT (and its fsync) took
  Histogram wait_seconds;        // each job: queued until its group began
  Histogram statements_seconds;  // each group: BEGIN until COMMIT was sent
  Histogram handback_seconds;    // each job: committed until its coroutine resumed (Job)
};

// Applies write jobs in groups. With several threads (PostgreSQL), each has its own connection
// and takes the next group from the shared queue while the others commit.
class Writer {
 public:
  Writer(SessionFactory factory, std::unique_ptr<Connection> first, std::size_t max_batch,
         std::chrono::microseconds max_wait, int threads = 1, bool answer_before_commit = false);
  ~Writer();
  void submit(std::unique_ptr<StoreJob> job) {
    job->queued_at = std::chrono::steady_clock::now();  // for stats_.wait_seconds
    threads_.submit(std::move(job));
  }
  // Runs what is queued, then stops the threads. Later submissions fail at once.
  void stop() { threads_.stop(); }
  const WriterStats& stats() const { return stats_; }
  Histogram& handback_seconds() { return stats_.handback_seconds; }

 private:
  void loop(Session& session);
  void run_batch(Session& s, std::vector<std::unique_ptr<StoreJob>>& batch);
  bool run_together(Session& s, std::vector<std::unique_ptr<StoreJob>>& batch,
                    std::exception_ptr& commit_error, bool& answered);
  void run_alone(Session& s, StoreJob& job);
  void commit(Connection& c);  // timed into stats_.commit_seconds
  bool begin(Session& s, std::exception_ptr& error);

  SessionFactory factory_;
  std::size_t max_batch_;
  std::chrono::microseconds max_wait_;
  // testing.faults.answer_before_commit: each job is answered before its COMMIT, a durability
  // bug on purpose, for the fault tests to catch.
  bool answer_before_commit_;
  WriterStats stats_;
  std::vector<std::unique_ptr<Session>> sessions_;
  JobThreads threads_;
};

class Readers {
 public:
  Readers(SessionFactory factory, int threads);
  ~Readers();
  void submit(std::unique_ptr<StoreJob> job) { threads_.submit(std::move(job)); }
  void stop() { threads_.stop(); }

 private:
  void loop();

  SessionFactory factory_;
  JobThreads threads_;
};

}  // namespace dlq::store

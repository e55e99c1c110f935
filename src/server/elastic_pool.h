// The HTTP server's thread pool (an httplib TaskQueue).
#pragma once

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace trainyard::server {

// A thread for each task, kept for the next one when it is done, up to
// `max` at once; past that, tasks wait. httplib's own pool has a fixed size,
// and a connection holds its thread while it stays open, so a fixed pool
// would let a few watchers starve every other client.
//
// A thread idle for `idle_exit` ends, but for the last `kept`: the stacks
// and allocator arenas a burst of 200 clients left (some 40 MiB) go back
// to the system instead of staying resident for good.
class ElasticPool final : public httplib::TaskQueue {
 public:
  explicit ElasticPool(size_t max, std::chrono::milliseconds idle_exit = std::chrono::seconds(30),
                       size_t kept = 4)
      : max_(max), idle_exit_(idle_exit), kept_(kept) {}
  ~ElasticPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    MutexLock lock(mu_);
    JoinLeft();
    tasks_.push_back(std::move(fn));
    // Idle threads not yet woken count against the tasks already waiting:
    // two connections arriving together must not both wait for one thread.
    if (tasks_.size() <= idle_ || threads_.size() >= max_) {
      ready_.NotifyOne();
      return;
    }
    threads_.emplace_back([this] { Work(); });
  }

  // How many threads it has now.
  size_t threads() const {
    MutexLock lock(mu_);
    return threads_.size();
  }

  void shutdown() override {
    std::vector<std::thread> threads;
    {
      MutexLock lock(mu_);
      if (shut_) return;
      shut_ = true;
      threads.swap(threads_);  // joined unlocked: the workers take mu_ to finish
      for (std::thread& t : left_) threads.push_back(std::move(t));
      left_.clear();
    }
    ready_.NotifyAll();
    for (std::thread& t : threads) t.join();
  }

 private:
  void Work() {
    MutexLock lock(mu_);
    while (true) {
      ++idle_;
      bool woken = ready_.WaitFor(
          mu_, idle_exit_, [&]() TRAINYARD_REQUIRES(mu_) { return shut_ || !tasks_.empty(); });
      --idle_;
      if (!woken) {
        if (threads_.size() > kept_) return Leave();
        continue;
      }
      if (tasks_.empty()) return;  // shut down, nothing left
      std::function<void()> fn = std::move(tasks_.front());
      tasks_.pop_front();
      lock.Unlock();
      fn();
      lock.Lock();
    }
  }

  // Ends this thread's part in the pool: moved to left_, to be joined by
  // the next enqueue or by shutdown (never detached: its last step, letting
  // go of mu_, must come before the pool can be destroyed).
  void Leave() TRAINYARD_REQUIRES(mu_) {
    auto self = std::ranges::find_if(
        threads_, [](const std::thread& t) { return t.get_id() == std::this_thread::get_id(); });
    left_.push_back(std::move(*self));
    threads_.erase(self);
  }
  // Joins the threads that left, letting go of mu_ meanwhile: a leaving
  // thread's last step is letting go of it. Each has nothing else left to
  // do, so the join is short.
  void JoinLeft() TRAINYARD_REQUIRES(mu_) {
    std::vector<std::thread> left;
    left.swap(left_);
    mu_.Unlock();
    for (std::thread& t : left) t.join();
    mu_.Lock();
  }

  const size_t max_;
  const std::chrono::milliseconds idle_exit_;
  const size_t kept_;
  mutable Mutex mu_;
  CondVar ready_;
  std::deque<std::function<void()>> tasks_ TRAINYARD_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ TRAINYARD_GUARDED_BY(mu_);
  std::vector<std::thread> left_ TRAINYARD_GUARDED_BY(mu_);  // ended, not yet joined
  size_t idle_ TRAINYARD_GUARDED_BY(mu_) = 0;
  bool shut_ TRAINYARD_GUARDED_BY(mu_) = false;
};

}  // namespace trainyard::server

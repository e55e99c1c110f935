// The HTTP server's thread pool (an httplib TaskQueue).
#pragma once

#include <httplib.h>

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
class ElasticPool final : public httplib::TaskQueue {
 public:
  explicit ElasticPool(size_t max) : max_(max) {}
  ~ElasticPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    MutexLock lock(mu_);
    tasks_.push_back(std::move(fn));
    // Idle threads not yet woken count against the tasks already waiting:
    // two connections arriving together must not both wait for one thread.
    if (tasks_.size() <= idle_ || threads_.size() >= max_) {
      ready_.NotifyOne();
      return;
    }
    threads_.emplace_back([this] { Work(); });
  }

  void shutdown() override {
    std::vector<std::thread> threads;
    {
      MutexLock lock(mu_);
      if (shut_) return;
      shut_ = true;
      threads.swap(threads_);  // joined unlocked: the workers take mu_ to finish
    }
    ready_.NotifyAll();
    for (std::thread& t : threads) t.join();
  }

 private:
  void Work() {
    MutexLock lock(mu_);
    while (true) {
      ++idle_;
      ready_.Wait(mu_, [&]() TRAINYARD_REQUIRES(mu_) { return shut_ || !tasks_.empty(); });
      --idle_;
      if (tasks_.empty()) return;  // shut down, nothing left
      std::function<void()> fn = std::move(tasks_.front());
      tasks_.pop_front();
      lock.Unlock();
      fn();
      lock.Lock();
    }
  }

  const size_t max_;
  Mutex mu_;
  CondVar ready_;
  std::deque<std::function<void()>> tasks_ TRAINYARD_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ TRAINYARD_GUARDED_BY(mu_);
  size_t idle_ TRAINYARD_GUARDED_BY(mu_) = 0;
  bool shut_ TRAINYARD_GUARDED_BY(mu_) = false;
};

}  // namespace trainyard::server

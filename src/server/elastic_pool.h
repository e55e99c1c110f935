// The HTTP server's thread pool (an httplib TaskQueue).
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(fn));
    // Idle threads not yet woken count against the tasks already waiting:
    // two connections arriving together must not both wait for one thread.
    if (tasks_.size() <= idle_ || threads_.size() >= max_) {
      ready_.notify_one();
      return;
    }
    threads_.emplace_back([this] { Work(); });
  }

  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      if (shut_) return;
      shut_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work() {
    std::unique_lock lock(mu_);
    while (true) {
      ++idle_;
      ready_.wait(lock, [&] { return shut_ || !tasks_.empty(); });
      --idle_;
      if (tasks_.empty()) return;  // shut down, nothing left
      std::function<void()> fn = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const size_t max_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  std::vector<std::thread> threads_;         // guarded by mu_
  size_t idle_ = 0;                          // guarded by mu_
  bool shut_ = false;                        // guarded by mu_
};

}  // namespace trainyard::server

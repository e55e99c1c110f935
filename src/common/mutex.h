// The mutex trainyard's classes lock: a std::mutex that clang's
// thread-safety analysis can follow (common/thread_annotations.h).
// libstdc++'s own mutex and locks carry no annotations, so members guarded
// by one could never be checked.
//
//   Mutex mu_;
//   std::deque<Task> tasks_ TRAINYARD_GUARDED_BY(mu_);
//   CondVar ready_;
//
//   MutexLock lock(mu_);
//   ready_.Wait(mu_, [&]() TRAINYARD_REQUIRES(mu_) { return !tasks_.empty(); });
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace trainyard {

class TRAINYARD_CAPABILITY("mutex") Mutex {
 public:
  constexpr Mutex() noexcept = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() TRAINYARD_ACQUIRE() { mu_.lock(); }
  void Unlock() TRAINYARD_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from its construction to the end of its scope. Unlock() and
// Lock() let go of it for a stretch (a task run outside the lock) and take
// it back; the analysis knows which parts run unlocked.
class TRAINYARD_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) TRAINYARD_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() TRAINYARD_RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() TRAINYARD_RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() TRAINYARD_ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  // False between Unlock() and Lock(): an exception thrown there (by the
  // task run unlocked) must not unlock it a second time.
  bool held_ = true;
};

// A std::condition_variable waited on with a Mutex held (by a MutexLock).
// The predicate runs with the mutex held, but inside the standard library,
// where the analysis does not look: a lambda that reads guarded members
// says that it needs the lock, `[&]() TRAINYARD_REQUIRES(mu_) { ... }`.
class CondVar {
 public:
  // Until `done()` is true; `mu` is let go of while asleep.
  template <class Predicate>
  void Wait(Mutex& mu, Predicate done) TRAINYARD_REQUIRES(mu) {
    Lent lock(mu);
    cv_.wait(lock.get(), std::move(done));
  }
  // As Wait, for at most `timeout`: what `done()` says at the end.
  template <class Rep, class Period, class Predicate>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout, Predicate done)
      TRAINYARD_REQUIRES(mu) {
    Lent lock(mu);
    return cv_.wait_for(lock.get(), timeout, std::move(done));
  }

  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

 private:
  // std::condition_variable waits with a std::unique_lock. The caller's
  // hold of the mutex is lent to one for the wait (adopt_lock: it is held
  // already), and taken back still held however the wait ends (the
  // standard relocks before it returns or throws): the caller's MutexLock
  // unlocks it, not this.
  class Lent {
   public:
    explicit Lent(Mutex& mu) : lock_(mu.mu_, std::adopt_lock) {}
    ~Lent() { lock_.release(); }
    Lent(const Lent&) = delete;
    Lent& operator=(const Lent&) = delete;
    std::unique_lock<std::mutex>& get() { return lock_; }

   private:
    std::unique_lock<std::mutex> lock_;
  };

  std::condition_variable cv_;
};

}  // namespace trainyard

// Waits for requests without a thread per connection: one thread polls
// every connection that is between requests (epoll), completes TLS
// handshakes, and reads each request until it is whole (head, then body),
// before handing it to a pool thread to serve. A connection that sends
// slowly or not at all costs a descriptor and its bytes, never a thread;
// deadlines (ConnectionLimits) bound how long it may take.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "server/connection.h"

namespace trainyard::server {

class RequestReader {
 public:
  using Serve = std::function<void(std::unique_ptr<Connection>)>;
  RequestReader(ConnectionLimits limits, std::chrono::milliseconds idle_timeout, Serve serve);
  ~RequestReader();

  Status Start();
  // Closes every connection waiting here; what is added later is closed.
  void Stop();
  // Takes a connection to wait for its next request: `fresh` when it was
  // just accepted (its head is due within head_timeout), else between
  // requests (idle up to idle_timeout). Thread-safe.
  void Add(std::unique_ptr<Connection> connection, bool fresh);

 private:
  enum class Phase { kIdle, kHead, kBody };
  struct Waiting {
    std::unique_ptr<Connection> connection;
    Phase phase;
    std::chrono::steady_clock::time_point deadline;
    size_t counted = 0;    // its bytes in buffered_
    bool headed = false;   // its head was seen whole
    bool starved = false;  // not read until there is room
  };
  using Clock = std::chrono::steady_clock;

  void Loop();
  void TakeAdded();
  void Watch(std::unique_ptr<Connection> connection, bool fresh);
  void OnReadable(int fd, uint32_t events);
  // Frames what `w` holds: serves it when whole, answers 400 and closes it
  // when it cannot be a request, else waits for more.
  void Advance(int fd, Waiting& w);
  void SetDeadline(int fd, Waiting& w, Clock::time_point deadline);
  void Expire(Clock::time_point now);
  // Stops watching `fd`; its connection is returned (to serve) or closed.
  std::unique_ptr<Connection> Release(int fd);
  void Count(Waiting& w);
  void Feed();  // reads starved connections again, while there is room

  const ConnectionLimits limits_;
  const std::chrono::milliseconds idle_timeout_;
  const Serve serve_;
  int epoll_ = -1;
  int wake_ = -1;  // an eventfd: something was added, or Stop
  std::thread thread_;

  Mutex mu_;
  std::vector<std::pair<std::unique_ptr<Connection>, bool>> added_ TRAINYARD_GUARDED_BY(mu_);
  bool stopped_ TRAINYARD_GUARDED_BY(mu_) = false;

  // The loop's alone:
  std::map<int, Waiting> waiting_;
  std::set<std::pair<Clock::time_point, int>> deadlines_;
  std::deque<int> starved_;
  size_t buffered_ = 0;
};

}  // namespace trainyard::server

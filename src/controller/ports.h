// Ports for replicas: on one machine every replica shares 127.0.0.1, so each
// one that listens needs a port nobody else uses.
#pragma once

#include <set>

#include "common/status.h"

namespace trainyard::controller {

class PortAllocator {
 public:
  virtual ~PortAllocator() = default;
  // A port free now and not handed out before by this allocator.
  virtual Result<int> Allocate() = 0;
  // Gives a port back once the job that had it is gone.
  virtual void Release(int port) = 0;
};

// Asks the kernel for a free ephemeral port on 127.0.0.1 (bind to port 0),
// and never hands the same port to two live jobs.
class LocalPortAllocator final : public PortAllocator {
 public:
  Result<int> Allocate() override;
  void Release(int port) override { in_use_.erase(port); }

 private:
  std::set<int> in_use_;
};

// Sequential ports from `first`, for tests; remembers what was released.
class FakePortAllocator final : public PortAllocator {
 public:
  explicit FakePortAllocator(int first = 30000) : next_(first) {}
  Result<int> Allocate() override { return next_++; }
  void Release(int port) override { released_.insert(port); }
  const std::set<int>& released() const { return released_; }

 private:
  int next_;
  std::set<int> released_;
};

}  // namespace trainyard::controller

// Ports for replicas: on one machine every replica shares 127.0.0.1, so each
// one that listens needs a port nobody else uses.
#pragma once

#include <map>
#include <set>
#include <string>

#include "common/status.h"

namespace trainyard::controller {

class PortAllocator {
 public:
  virtual ~PortAllocator() = default;
  // A port free now and not handed out before by this allocator, held by
  // `owner` (its job's store key, "PyTorchJob ns/name").
  virtual Result<int> Allocate(const std::string& owner) = 0;
  // Gives a port back once the job that had it has finished.
  virtual void Release(int port) = 0;
  // Gives back every port `owner` still holds: its job was deleted, and
  // what it recorded them in went with it.
  virtual void ReleaseAll(const std::string& owner) = 0;
};

// Asks the kernel for a free ephemeral port on 127.0.0.1 (bind to port 0),
// and never hands the same port to two live jobs.
class LocalPortAllocator final : public PortAllocator {
 public:
  Result<int> Allocate(const std::string& owner) override;
  void Release(int port) override { owners_.erase(port); }
  void ReleaseAll(const std::string& owner) override {
    std::erase_if(owners_, [&](const auto& held) { return held.second == owner; });
  }

 private:
  std::map<int, std::string> owners_;  // port -> who holds it
};

// Sequential ports from `first`, for tests; remembers what was released.
class FakePortAllocator final : public PortAllocator {
 public:
  explicit FakePortAllocator(int first = 30000) : next_(first) {}
  Result<int> Allocate(const std::string& owner) override {
    owners_[next_] = owner;
    return next_++;
  }
  void Release(int port) override { released_.insert(port); }
  void ReleaseAll(const std::string& owner) override {
    for (const auto& [port, held_by] : owners_) {
      if (held_by == owner) released_.insert(port);
    }
  }
  const std::set<int>& released() const { return released_; }

 private:
  int next_;
  std::map<int, std::string> owners_;
  std::set<int> released_;
};

}  // namespace trainyard::controller

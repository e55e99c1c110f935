// The HTTP server's thread pool: a thread per waiting task up to its
// bound, never more, and every task run, those queued at shutdown too.
#include "server/elastic_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace trainyard::server {
namespace {

// A gate tasks wait at until the test opens it, and counts of how many
// wait there now and at most.
struct Gate {
  std::mutex mu;
  std::condition_variable changed;
  bool open = false;
  int waiting = 0;
  int most = 0;
  int done = 0;

  void Pass() {
    std::unique_lock lock(mu);
    most = std::max(most, ++waiting);
    changed.notify_all();
    changed.wait(lock, [&] { return open; });
    --waiting;
    ++done;
    changed.notify_all();
  }
  // Waits (up to 10 s) until `holds`; whether it did.
  bool Await(const std::function<bool()>& holds) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, std::chrono::seconds(10), holds);
  }
  void Open() {
    std::lock_guard lock(mu);
    open = true;
    changed.notify_all();
  }
};

TEST(ElasticPoolTest, TasksArrivingTogetherEachGetAThreadUpToTheBound) {
  Gate gate;
  {
    ElasticPool pool(3);
    for (int i = 0; i < 5; ++i) pool.enqueue([&] { gate.Pass(); });
    // Three run at once, none of them waiting for another; two wait.
    EXPECT_TRUE(gate.Await([&] { return gate.waiting == 3; }));
    gate.Open();
    EXPECT_TRUE(gate.Await([&] { return gate.done == 5; }));
  }
  EXPECT_EQ(gate.most, 3);
}

TEST(ElasticPoolTest, ShutdownRunsWhatIsQueuedAndReturnsOnceAllEnded) {
  std::atomic<int> ran{0};
  Gate gate;
  {
    ElasticPool pool(1);
    pool.enqueue([&] { gate.Pass(); });
    for (int i = 0; i < 10; ++i) pool.enqueue([&] { ++ran; });
    EXPECT_TRUE(gate.Await([&] { return gate.waiting == 1; }));
    gate.Open();
    pool.shutdown();
    EXPECT_EQ(ran.load(), 10);
  }
  EXPECT_EQ(gate.done, 1);
}

TEST(ElasticPoolTest, ThreadsIdleLongerThanTheirTimeEndButTheKeptOnes) {
  Gate gate;
  ElasticPool pool(5, std::chrono::milliseconds(20), /*kept=*/2);
  for (int i = 0; i < 5; ++i) pool.enqueue([&] { gate.Pass(); });
  EXPECT_TRUE(gate.Await([&] { return gate.waiting == 5; }));
  EXPECT_EQ(pool.threads(), 5u);
  gate.Open();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.threads() > 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(pool.threads(), 2u);
  // What is left serves the next tasks, and the pool grows again.
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; ++i) pool.enqueue([&] { ++ran; });
  pool.shutdown();
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace trainyard::server

// The reconcile queue's timers: one per object, the soonest, however many
// reconciles ask to be repeated.
#include "engine/reconcile_queue.h"

#include <gtest/gtest.h>

namespace trainyard::engine {
namespace {

using std::chrono::seconds;

// Counts its reconciles; each asks to be repeated in `every`.
class Polling final : public controller::Reconciler {
 public:
  explicit Polling(Duration every) : every_(every) {}
  std::vector<std::string> Kinds() const override { return {"PyTorchJob"}; }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey&) override {
    ++count;
    return controller::ReconcileResult{every_};
  }
  int count = 0;

 private:
  Duration every_;
};

TEST(ReconcileQueueTest, ReconcilesThatEachAskToBeRepeatedKeepOneTimer) {
  FakeClock clock;
  ReconcileQueue queue(&clock, nullptr);
  Polling job(seconds(1));
  queue.Register(&job);
  store::ObjectKey key{"PyTorchJob", "default", "tracked"};
  // Three changes 0.3 s apart, each reconciled: three asks to be
  // repeated a second later.
  for (int i = 0; i < 3; ++i) {
    queue.Queue(key);
    queue.ReconcileNext();
    clock.Advance(std::chrono::milliseconds(300));
  }
  ASSERT_EQ(job.count, 3);
  // Over the next two seconds the one timer fires once a second, not
  // three chains of their own.
  for (int tick = 0; tick < 20; ++tick) {
    clock.Advance(std::chrono::milliseconds(100));
    queue.TakeDueTimers();
    while (!queue.empty()) queue.ReconcileNext();
  }
  EXPECT_EQ(job.count, 5);
}

// Asks to be repeated in each of `asks` in turn.
class Asking final : public controller::Reconciler {
 public:
  explicit Asking(std::vector<Duration> asks) : asks_(std::move(asks)) {}
  std::vector<std::string> Kinds() const override { return {"PyTorchJob"}; }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey&) override {
    return controller::ReconcileResult{asks_[next_++ % asks_.size()]};
  }

 private:
  std::vector<Duration> asks_;
  size_t next_ = 0;
};

TEST(ReconcileQueueTest, TheSoonerOfTwoTimersWins) {
  FakeClock clock;
  ReconcileQueue queue(&clock, nullptr);
  Asking job({seconds(30), seconds(1), seconds(30)});
  queue.Register(&job);
  store::ObjectKey key{"PyTorchJob", "default", "tracked"};
  TimePoint start = clock.Now();
  for (int i = 0; i < 3; ++i) {
    queue.Queue(key);
    queue.ReconcileNext();
  }
  // 30 s, then 1 s (sooner: it replaces), then 30 s (later: kept out).
  ASSERT_TRUE(queue.NextTimer().has_value());
  EXPECT_EQ(*queue.NextTimer(), start + seconds(1));
  clock.Advance(seconds(1));
  queue.TakeDueTimers();
  EXPECT_FALSE(queue.empty());
  queue.ReconcileNext();
  EXPECT_EQ(*queue.NextTimer(), start + seconds(31)) << "the only timer: the one just asked for";
}

// Keeps what it is told, with its level.
class KeptLog final : public Logger {
 public:
  void Write(LogLevel level, std::string_view line) override {
    lines.emplace_back(level, std::string(line));
  }
  std::vector<std::pair<LogLevel, std::string>> lines;
};

class Failing final : public controller::Reconciler {
 public:
  std::vector<std::string> Kinds() const override { return {"PyTorchJob"}; }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey&) override {
    return UnavailableError("the store is away");
  }
};

// A failed reconcile is said through the logger the queue was given, as a
// warning, and retried; nothing goes to stderr behind its back.
TEST(ReconcileQueueTest, AFailedReconcileIsSaidThroughItsLogger) {
  FakeClock clock;
  KeptLog log;
  ReconcileQueue queue(&clock, nullptr, &log);
  Failing job;
  queue.Register(&job);
  queue.Queue({"PyTorchJob", "default", "broken"});
  queue.ReconcileNext();
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0].first, LogLevel::kWarning);
  EXPECT_EQ(log.lines[0].second, "trainyard: PyTorchJob default/broken: the store is away");
}

}  // namespace
}  // namespace trainyard::engine

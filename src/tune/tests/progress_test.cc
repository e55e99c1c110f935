// Progress read from what a job prints: the counts of a total it declares,
// and the time left at the pace so far.
#include "tune/progress.h"

#include <gtest/gtest.h>

namespace trainyard::tune {
namespace {

using std::chrono::seconds;

TEST(ProgressLineTest, CountsOfATotalAreMarks) {
  auto mark = [](std::string_view line) { return ParseProgressLine(line); };
  ASSERT_TRUE(mark("Epoch 3/10, loss=0.25"));
  EXPECT_EQ(mark("Epoch 3/10, loss=0.25")->done, 3);
  EXPECT_EQ(mark("Epoch 3/10, loss=0.25")->total, 10);
  EXPECT_TRUE(mark("Epoch 3/10, loss=0.25")->epochs);
  EXPECT_EQ(mark("epoch [4/20] step 100/500")->done, 4);  // the epoch's count wins
  EXPECT_EQ(mark("Step: 150 / 1000")->done, 150);
  EXPECT_FALSE(mark("Step: 150 / 1000")->epochs);
  EXPECT_EQ(mark("iteration 5 of 20")->total, 20);
  EXPECT_EQ(mark("ITERATION 5 OF 20")->total, 20);
  EXPECT_EQ(mark("train:  45%|████      | 450/1000 [00:10<00:12, 40.0it/s]")->done, 450);
  // A bar redrawn with \r: its last state.
  EXPECT_EQ(mark(" 10%|█ | 1/10 [00:01<00:09]\r 20%|██ | 2/10 [00:02<00:08]")->done, 2);
  EXPECT_FALSE(mark("loss=0.5 accuracy=0.9"));
  EXPECT_FALSE(mark("epoch 12/10"));   // more done than the total: no count
  EXPECT_FALSE(mark("stepped 3/4"));   // not the word
  EXPECT_FALSE(mark("date 2026/12"));  // nothing counted
}

TEST(ProgressTrackerTest, ThePaceSoFarGivesTheTimeLeft) {
  ProgressTracker tracker;
  TimePoint t0{};
  EXPECT_TRUE(tracker.Observe({.done = 1, .total = 10}, t0));
  EXPECT_EQ(tracker.Current()->percentage, 10);
  EXPECT_FALSE(tracker.Current()->remaining_seconds.has_value());  // no pace yet
  EXPECT_TRUE(tracker.Observe({.done = 3, .total = 10}, t0 + seconds(20)));
  EXPECT_EQ(tracker.Current()->percentage, 30);
  // A fifth done in 20 s: seven tenths left take 70 s.
  EXPECT_EQ(*tracker.Current()->remaining_seconds, 70);
  // The same share again: nothing new to write.
  EXPECT_FALSE(tracker.Observe({.done = 3, .total = 10}, t0 + seconds(21)));
}

TEST(ProgressTrackerTest, OnceEpochsArePrintedStepsWithinThemAreNotTheMeasure) {
  ProgressTracker tracker;
  TimePoint t0{};
  tracker.Observe({.done = 2, .total = 4, .epochs = true}, t0);
  EXPECT_FALSE(tracker.Observe({.done = 90, .total = 100}, t0 + seconds(1)));
  EXPECT_EQ(tracker.Current()->percentage, 50);
}

// A bar closed before it was read (a dataset's Map: 100%) is no measure;
// a count of another total starts the pace anew.
TEST(ProgressTrackerTest, ASetupBarDoneBeforeItWasReadIsNoMeasure) {
  ProgressTracker tracker;
  TimePoint t0{};
  EXPECT_FALSE(tracker.Observe({.done = 2, .total = 2}, t0));
  EXPECT_FALSE(tracker.Current().has_value());
  EXPECT_TRUE(tracker.Observe({.done = 10, .total = 100}, t0 + seconds(1)));
  EXPECT_TRUE(tracker.Observe({.done = 20, .total = 100}, t0 + seconds(11)));
  EXPECT_EQ(*tracker.Current()->remaining_seconds, 80);
  // An evaluation's count of another total: no pace from the training's.
  EXPECT_TRUE(tracker.Observe({.done = 1, .total = 8}, t0 + seconds(12)));
  EXPECT_FALSE(tracker.Current()->remaining_seconds.has_value());
}

}  // namespace
}  // namespace trainyard::tune

// Progress a job's code declares in what it prints, for code that reports
// nothing itself (KEP-2779 beyond upstream): a count of a total, "epoch
// 3/10", "Epoch [3/10]", "step 150 of 1000", "iteration 5/20", or a tqdm
// bar's "450/1000 [" (on a line its reader sees end). Epochs, where a job prints them, are the
// measure (the steps within one restart each epoch); otherwise steps, iterations, batches or a
// bar's counts. From the marks and when they were read: the share done and, once it moves, the time
// left at the pace so far.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/clock.h"

namespace trainyard::tune {

struct ProgressMark {
  int64_t done = 0;
  int64_t total = 0;
  bool epochs = false;  // of epochs, rather than steps
};

// The mark `line` declares, if any (the last one on it).
std::optional<ProgressMark> ParseProgressLine(std::string_view line);

struct Progress {
  int32_t percentage = 0;                    // 0 to 100
  std::optional<int64_t> remaining_seconds;  // once the pace is known
};

// One job's marks, in the order they were read.
class ProgressTracker {
 public:
  // Takes a mark read at `now`; whether the progress it gives changed. A
  // count already at its total when first seen (a bar of setup work
  // closed before it was read) is no measure; one of another total, or
  // going back (a new phase, a restart), starts the pace anew.
  bool Observe(const ProgressMark& mark, TimePoint now);
  std::optional<Progress> Current() const { return current_; }

 private:
  bool epochs_ = false;  // once a job prints epochs, they are the measure
  std::optional<TimePoint> first_at_;
  double first_share_ = 0;
  double last_share_ = 0;
  int64_t total_ = 0;
  std::optional<Progress> current_;
};

}  // namespace trainyard::tune

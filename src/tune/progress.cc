#include "tune/progress.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace trainyard::tune {
namespace {

// A word for what is counted, then "N/M", "N of M" or "[N/M]".
const RE2& CountPattern() {
  static const RE2 kPattern(
      R"((?i)\b(epoch|step|iter|iteration|batch)s?\b\s*[:=#]?\s*\[?\s*(\d{1,12})\s*(?:/|of)\s*(\d{1,12}))");
  return kPattern;
}

// tqdm's bar: " 45%|████      | 450/1000 [00:10<00:12, 40.0it/s]".
const RE2& BarPattern() {
  static const RE2 kPattern(R"(\d{1,3}%\|[^|]*\|\s*(\d{1,12})/(\d{1,12})\s*\[)");
  return kPattern;
}

}  // namespace

std::optional<ProgressMark> ParseProgressLine(std::string_view line) {
  // Every line a job prints comes here: one that holds no "/" and no "of"
  // (in any case) can declare no count, and is passed over without a regex.
  bool counted = line.find('/') != std::string_view::npos;
  for (std::string_view of : {"of", "Of", "OF"}) {
    counted = counted || line.find(of) != std::string_view::npos;
  }
  if (!counted) return std::nullopt;
  // A progress bar redraws itself with \r: its last state is what counts.
  if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
  std::optional<ProgressMark> found;
  re2::StringPiece input(line.data(), line.size());
  std::string word;
  int64_t done = 0, total = 0;
  while (RE2::FindAndConsume(&input, CountPattern(), &word, &done, &total)) {
    if (total <= 0 || done < 0 || done > total) continue;
    bool epochs = word.size() == 5 && std::tolower(word[0]) == 'e';
    // An epoch's count wins over a step's printed beside it.
    if (!found || epochs || !found->epochs) found = ProgressMark{done, total, epochs};
  }
  if (found) return found;
  if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), BarPattern(), &done, &total) &&
      total > 0 && done <= total) {
    return ProgressMark{done, total, false};
  }
  return std::nullopt;
}

bool ProgressTracker::Observe(const ProgressMark& mark, TimePoint now) {
  if (mark.epochs) epochs_ = true;
  if (epochs_ && !mark.epochs) return false;  // steps within an epoch
  double share = static_cast<double>(mark.done) / static_cast<double>(mark.total);
  if (!first_at_ && share >= 1) return false;
  Progress next{.percentage = static_cast<int32_t>(std::floor(share * 100))};
  if (!first_at_ || mark.total != total_ || share < last_share_) {
    first_at_ = now;
    first_share_ = share;
  } else if (share > first_share_ && now > *first_at_) {
    double seconds = std::chrono::duration<double>(now - *first_at_).count();
    double rate = (share - first_share_) / seconds;  // share a second, so far
    // Bounded before it is an integer: a crawl would overflow it.
    next.remaining_seconds = static_cast<int64_t>(std::min(std::ceil((1 - share) / rate), 1e12));
  }
  total_ = mark.total;
  last_share_ = share;
  // A new estimate of the time left is worth a write only when it moved
  // by more than a tenth (and 5 s): the pace wavers with every mark.
  bool changed = !current_ || current_->percentage != next.percentage ||
                 current_->remaining_seconds.has_value() != next.remaining_seconds.has_value();
  if (!changed && next.remaining_seconds) {
    int64_t was = *current_->remaining_seconds, now_left = *next.remaining_seconds;
    changed = std::llabs(now_left - was) > std::max<int64_t>(5, was / 10);
  }
  if (changed) current_ = next;
  return changed;
}

}  // namespace trainyard::tune

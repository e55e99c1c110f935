// Gives back to the system the memory the allocator holds but no longer
// uses. glibc's malloc keeps freed heap memory for reuse instead of
// returning it, so a long-lived process keeps the RSS of its busiest
// moment for good (a server held 5.9 GB for 30 minutes after one large
// observations read). A thread looks every `period` at the process's
// resident memory and the heap's free bytes (mallinfo2): when the heap
// holds more than `threshold` free, and it or the RSS grew by `threshold`
// since its last trim (or low point), it calls malloc_trim(0), which returns
// every whole free page of every arena. Under a sanitizer's allocator it
// does nothing. TRAINYARD_MEMORY_TRIM=0 in the environment turns it off
// (to measure what it gives back).
#pragma once

#include <chrono>
#include <cstddef>
#include <thread>

#include "common/mutex.h"

namespace trainyard {

struct MemoryTrimmerOptions {
  std::chrono::milliseconds period{5000};
  size_t threshold = 16 << 20;
};

class MemoryTrimmer {
 public:
  // Whether the environment leaves it on (TRAINYARD_MEMORY_TRIM is not "0").
  static bool Wanted();
  explicit MemoryTrimmer(MemoryTrimmerOptions options = {});
  ~MemoryTrimmer();  // stops the thread
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // Free bytes the heap holds (mallinfo2's fordblks; 0 under a sanitizer).
  static size_t HeapFreeBytes();
  // This process's resident bytes.
  static size_t ResidentBytes();
  // What a look compares with: the RSS and the heap's free bytes after the
  // last trim, or their lows since.
  struct Floor {
    size_t resident = 0;
    size_t free = 0;
  };
  // One look: trims when the heap holds more than `threshold` free and
  // either the RSS or the free bytes grew by `threshold` above `floor`
  // (memory freed after a trim, or reused and freed again). The floor for
  // the next look, so that what a trim could not return (fragments
  // between live blocks, still counted free) is not trimmed for again and
  // again.
  static Floor TrimAbove(Floor floor, size_t threshold);

 private:
  void Run();

  const MemoryTrimmerOptions options_;
  Mutex mu_;
  CondVar wake_;
  bool stop_ TRAINYARD_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace trainyard

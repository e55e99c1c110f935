#include "common/memory_trimmer.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string_view>

namespace trainyard {
namespace {

// A sanitizer's allocator is not glibc's: mallinfo2 and malloc_trim say
// nothing of it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

}  // namespace

MemoryTrimmer::MemoryTrimmer(MemoryTrimmerOptions options)
    : options_(options), thread_([this] { Run(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

bool MemoryTrimmer::Wanted() {
  const char* setting = std::getenv("TRAINYARD_MEMORY_TRIM");
  return setting == nullptr || std::string_view(setting) != "0";
}

size_t MemoryTrimmer::HeapFreeBytes() {
  if (!kGlibcHeap) return 0;
  return mallinfo2().fordblks;
}

size_t MemoryTrimmer::ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

MemoryTrimmer::Floor MemoryTrimmer::TrimAbove(Floor floor, size_t threshold) {
  Floor now{.resident = ResidentBytes(), .free = HeapFreeBytes()};
  bool grew = now.resident > floor.resident + threshold || now.free > floor.free + threshold;
  if (now.free <= threshold || !grew) {
    return {.resident = std::min(floor.resident, now.resident),
            .free = std::min(floor.free, now.free)};
  }
  malloc_trim(0);
  return {.resident = ResidentBytes(), .free = HeapFreeBytes()};
}

void MemoryTrimmer::Run() {
  Floor floor;
  MutexLock lock(mu_);
  while (!wake_.WaitFor(mu_, options_.period, [this]() TRAINYARD_REQUIRES(mu_) { return stop_; })) {
    lock.Unlock();
    floor = TrimAbove(floor, options_.threshold);
    lock.Lock();
  }
}

}  // namespace trainyard

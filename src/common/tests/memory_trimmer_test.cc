// What the heap holds free after a peak goes back to the system: at once
// by TrimAbove, and within a few periods by the trimmer's thread.
#include "common/memory_trimmer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace trainyard {
namespace {

size_t Rss() { return MemoryTrimmer::ResidentBytes(); }

volatile char sink;

// 256 MiB of small blocks (from the heap, not mmap), touched, then freed
// below one still held, so that free() alone returns none of it. The
// held block, to free last.
char* MakePeak() {
  std::vector<char*> blocks;
  for (int i = 0; i < 64 * 1024; ++i) {
    char* block = static_cast<char*>(std::malloc(4000));
    std::memset(block, i, 4000);
    blocks.push_back(block);
  }
  char* held = static_cast<char*>(std::malloc(4000));
  held[0] = 1;
  for (char* block : blocks) {
    sink = block[123];
    std::free(block);
  }
  return held;
}

constexpr size_t kMiB = 1 << 20;

TEST(MemoryTrimmerTest, WhatAPeakLeftFreeGoesBackAtOnce) {
  char* held = MakePeak();
  if (MemoryTrimmer::HeapFreeBytes() == 0) {
    std::free(held);
    GTEST_SKIP() << "not glibc's heap (a sanitizer's allocator)";
  }
  size_t before = Rss();
  MemoryTrimmer::Floor left = MemoryTrimmer::TrimAbove({}, 16 * kMiB);
  size_t after = Rss();
  EXPECT_LT(after + 200 * kMiB, before)
      << "before " << before / kMiB << " MiB, after " << after / kMiB << " MiB";
  // What a trim could not give (the freed blocks still count as free) is
  // not trimmed for again.
  MemoryTrimmer::Floor again = MemoryTrimmer::TrimAbove(left, 16 * kMiB);
  EXPECT_LE(again.resident, left.resident + kMiB);
  EXPECT_LE(again.free, left.free);
  std::free(held);
}

TEST(MemoryTrimmerTest, TheThreadGivesItBackWhileTheProcessIdles) {
  MemoryTrimmer trimmer({.period = std::chrono::milliseconds(20)});
  char* held = MakePeak();
  if (MemoryTrimmer::HeapFreeBytes() == 0) {
    std::free(held);
    GTEST_SKIP() << "not glibc's heap (a sanitizer's allocator)";
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Rss() > 128 * kMiB && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling, with a deadline
  }
  EXPECT_LT(Rss(), 128 * kMiB);
  std::free(held);
}

}  // namespace
}  // namespace trainyard

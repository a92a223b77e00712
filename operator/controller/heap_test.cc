#include "operator/controller/heap.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace kc::op {
namespace {

long RssKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// The case heap.h is for: a burst of small allocations (a parsed list page)
// freed except for a few survivors (the kept objects) stays resident until
// trimmed.
TEST(HeapTest, TrimHandsFreedPagesBack) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc only";
#endif
  std::vector<std::unique_ptr<char[]>> blocks;
  constexpr int kBlocks = 200000;  // 200,000 x 1 KiB: ~200 MiB with headers
  blocks.reserve(kBlocks);
  for (int i = 0; i < kBlocks; ++i) {
    blocks.emplace_back(new char[1000]);
    blocks.back()[0] = static_cast<char>(i);  // touch
    for (int j = 0; j < 1000; j += 512) blocks.back()[j] = 1;
  }
  // Free all but every 1,000th: no page at the heap's top is free, so
  // free() alone gives nothing back.
  for (int i = 0; i < kBlocks; ++i) {
    if (i % 1000 != 999) blocks[i].reset();
  }
  const long before = RssKiB();
  ASSERT_TRUE(TrimHeap());
  const long after = RssKiB();
  ASSERT_GT(before, 0);
  EXPECT_LT(after, before - 100 * 1024) << "before " << before << " KiB, after " << after << " KiB";
}

TEST(HeapTest, TrimmerStopsWhenDestroyed) {
  // A long interval: the destructor must not wait it out.
  { HeapTrimmer t(std::chrono::hours(1)); }
  HeapTrimmer fast(std::chrono::milliseconds(1));  // and trims concurrently with allocation
  std::vector<std::string> churn;
  for (int i = 0; i < 100000; ++i) churn.emplace_back(100, 'x');
  EXPECT_EQ(churn.size(), 100000u);
}

}  // namespace
}  // namespace kc::op

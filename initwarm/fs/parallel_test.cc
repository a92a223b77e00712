#include "initwarm/fs/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace kc::initwarm {
namespace {

TEST(ParallelFor, EveryIndexOnce) {
  for (int threads : {0, 1, 3, 64}) {
    std::vector<std::atomic<int>> seen(100);
    ASSERT_TRUE(ParallelFor(seen.size(), threads, [&](std::size_t i) {
                  ++seen[i];
                  return OkStatus();
                }).ok());
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << threads;
  }
  EXPECT_TRUE(ParallelFor(0, 4, [](std::size_t) { return InternalError("never"); }).ok());
}

TEST(ParallelFor, FirstErrorStopsAndIsReturned) {
  std::atomic<int> calls{0};
  Status s = ParallelFor(1000, 1, [&](std::size_t i) {
    ++calls;
    return i == 5 ? NotFoundError("index 5") : OkStatus();
  });
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "index 5");
  EXPECT_EQ(calls.load(), 6);  // one worker: in order, nothing after the error
  calls = 0;
  s = ParallelFor(1000, 4, [&](std::size_t) {
    ++calls;
    return InternalError("all fail");
  });
  EXPECT_FALSE(s.ok());
  EXPECT_LE(calls.load(), 4);  // each worker stops after its first failure
}

}  // namespace
}  // namespace kc::initwarm

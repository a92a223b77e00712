#include "kube/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ExponentialDelayTest, Table) {
  struct Case {
    BackoffDuration base, max;
    int failures;
    BackoffDuration want;
  };
  const std::vector<Case> cases = {
      {milliseconds(5), seconds(1000), 0, milliseconds(5)},
      {milliseconds(5), seconds(1000), 1, milliseconds(10)},
      {milliseconds(5), seconds(1000), 4, milliseconds(80)},
      {milliseconds(5), seconds(1000), 17, milliseconds(655360)},
      {milliseconds(5), seconds(1000), 18, seconds(1000)},    // capped
      {milliseconds(5), seconds(1000), 1000, seconds(1000)},  // no overflow
      {milliseconds(5), seconds(1000), -3, milliseconds(5)},  // negative = 0
      {milliseconds(0), seconds(1000), 5, milliseconds(0)},   // no base, no delay
      {seconds(3), seconds(2), 0, seconds(2)},                // base above max
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ExponentialDelay(c.base, c.max, c.failures), c.want) << c.failures;
  }
}

TEST(BackoffTest, GrowsAndResets) {
  Backoff b(milliseconds(100), seconds(1));
  EXPECT_EQ(b.Next(), milliseconds(100));
  EXPECT_EQ(b.Next(), milliseconds(200));
  EXPECT_EQ(b.Next(), milliseconds(400));
  EXPECT_EQ(b.Next(), milliseconds(800));
  EXPECT_EQ(b.Next(), seconds(1));
  EXPECT_EQ(b.Next(), seconds(1));
  EXPECT_EQ(b.failures(), 6);
  b.Reset();
  EXPECT_EQ(b.Next(), milliseconds(100));
}

TEST(BackoffTest, JitterStaysWithinBounds) {
  Backoff b(milliseconds(100), seconds(10), 0.5);
  for (int i = 0; i < 5; ++i) {
    const BackoffDuration plain = ExponentialDelay(milliseconds(100), seconds(10), i);
    const BackoffDuration d = b.Next();
    EXPECT_GE(d, plain);
    EXPECT_LE(d, plain + plain / 2);
  }
}

TEST(ItemBackoffTest, PerItemCountsForgetAndRequeues) {
  ItemBackoff b(milliseconds(5), seconds(1000));
  EXPECT_EQ(b.NumRequeues("a"), 0);
  EXPECT_EQ(b.When("a"), milliseconds(5));
  EXPECT_EQ(b.When("a"), milliseconds(10));
  EXPECT_EQ(b.When("b"), milliseconds(5));  // independent per item
  EXPECT_EQ(b.When("a"), milliseconds(20));
  EXPECT_EQ(b.NumRequeues("a"), 3);
  EXPECT_EQ(b.NumRequeues("b"), 1);
  b.Forget("a");
  EXPECT_EQ(b.NumRequeues("a"), 0);
  EXPECT_EQ(b.When("a"), milliseconds(5));
  EXPECT_EQ(b.NumRequeues("b"), 1);
}

}  // namespace
}  // namespace kc::kube

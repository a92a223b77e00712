#include "kube/rate_limiter.h"

#include <gtest/gtest.h>

#include <thread>

#include "kube/testing/fake_clock.h"

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TokenBucketTest, StartsFullThenRefillsAtQps) {
  FakeClock clock;
  TokenBucket bucket(10.0, 3, clock);
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_FALSE(bucket.TryAccept());  // burst spent
  clock.Advance(milliseconds(99));
  EXPECT_FALSE(bucket.TryAccept());
  clock.Advance(milliseconds(1));  // 100ms at 10 qps = one token
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_FALSE(bucket.TryAccept());
  clock.Advance(seconds(60));  // refill caps at burst
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.TryAccept());
  EXPECT_FALSE(bucket.TryAccept());
}

TEST(TokenBucketTest, ReserveReturnsTheWaitAndGoesIntoDebt) {
  FakeClock clock;
  TokenBucket bucket(10.0, 2, clock);
  EXPECT_EQ(bucket.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
  EXPECT_EQ(bucket.When(), milliseconds(200));
  EXPECT_FALSE(bucket.TryAccept());  // reservations are owed
  clock.Advance(milliseconds(200));
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
}

TEST(TokenBucketTest, NonPositiveQpsIsUnlimited) {
  FakeClock clock;
  TokenBucket bucket(0, 1, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(bucket.TryAccept());
  EXPECT_EQ(bucket.Reserve(), Clock::Duration::zero());
}

TEST(TokenBucketTest, AcceptWaitsOnTheClockAndStops) {
  FakeClock clock;
  TokenBucket bucket(1.0, 1, clock);
  ASSERT_TRUE(bucket.Accept());
  std::atomic<bool> done{false};
  std::jthread waiter([&] {
    EXPECT_TRUE(bucket.Accept());
    done = true;
  });
  // The waiter needs one second of clock time; advance until it gets it.
  while (!done) {
    clock.Advance(milliseconds(100));
    std::this_thread::yield();
  }
  waiter.join();
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(bucket.Accept(stop.get_token()));
}

TEST(RateLimiterTest, ItemExponential) {
  ItemExponentialRateLimiter l(milliseconds(1), seconds(1));
  EXPECT_EQ(l.When("x"), milliseconds(1));
  EXPECT_EQ(l.When("x"), milliseconds(2));
  EXPECT_EQ(l.When("x"), milliseconds(4));
  EXPECT_EQ(l.NumRequeues("x"), 3);
  l.Forget("x");
  EXPECT_EQ(l.NumRequeues("x"), 0);
}

TEST(RateLimiterTest, DefaultControllerIsMaxOfItemAndBucket) {
  FakeClock clock;
  auto l = DefaultControllerRateLimiter(clock);
  // Per item: 5ms, 10ms, 20ms... while the bucket (burst 100) is not spent.
  EXPECT_EQ(l->When("a"), milliseconds(5));
  EXPECT_EQ(l->When("a"), milliseconds(10));
  EXPECT_EQ(l->When("b"), milliseconds(5));
  EXPECT_EQ(l->NumRequeues("a"), 2);
  // Spend the burst with distinct items: the overall bucket now dominates.
  for (int i = 0; i < 97; ++i) l->When("item-" + std::to_string(i));
  EXPECT_EQ(l->When("c"), milliseconds(100));  // 10 qps: 100ms per token owed
  EXPECT_EQ(l->When("d"), milliseconds(200));
  l->Forget("a");
  EXPECT_EQ(l->NumRequeues("a"), 0);
  // Per-item growth caps at 1000s.
  for (int i = 0; i < 40; ++i) l->When("slow");
  clock.Advance(seconds(3600));
  EXPECT_EQ(l->When("slow"), seconds(1000));
}

}  // namespace
}  // namespace kc::kube

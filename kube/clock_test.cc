#include "kube/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kube/testing/fake_clock.h"

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(FakeClockTest, WaitForWaitersSeesOnlyThreadsAsleepOnTheClock) {
  FakeClock clock;
  EXPECT_EQ(clock.BlockedWaiters(), 0);
  EXPECT_FALSE(clock.WaitForWaiters(1, milliseconds(20)));  // nobody waits
  std::stop_source stop;
  std::atomic<bool> woke{false};
  std::jthread sleeper([&] {
    clock.SleepFor(seconds(2), stop.get_token());
    woke = true;
  });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_FALSE(woke);
  clock.Advance(seconds(1));
  // Not yet due: it blocks again at the new time.
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_FALSE(woke);
  clock.Advance(seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke);
  EXPECT_EQ(clock.BlockedWaiters(), 0);  // it unregistered
}

TEST(FakeClockTest, CountsEveryBlockedWaiter) {
  FakeClock clock;
  std::stop_source stop;
  std::jthread a([&] { clock.SleepFor(seconds(5), stop.get_token()); });
  std::jthread b([&] { clock.SleepFor(seconds(9), stop.get_token()); });
  ASSERT_TRUE(clock.WaitForWaiters(2));
  EXPECT_EQ(clock.BlockedWaiters(), 2);
  stop.request_stop();
  a.join();
  b.join();
  EXPECT_EQ(clock.BlockedWaiters(), 0);
}

}  // namespace
}  // namespace kc::kube

#include "kube/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "kube/testing/fake_clock.h"

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

WorkQueue::Options FakeOptions(FakeClock& clock) {
  WorkQueue::Options o;
  o.name = "test";
  o.clock = &clock;
  o.rate_limiter = std::make_unique<ItemExponentialRateLimiter>(milliseconds(10), seconds(1));
  return o;
}

TEST(WorkQueueTest, DeduplicatesQueuedKeysInFifoOrder) {
  WorkQueue q;
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(q.Len(), 0u);
  q.Done("a");
  q.Done("b");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, UrgentKeysGoFirstInTheirOwnOrderAndQueuedKeysMoveAhead) {
  WorkQueue q;
  q.Add("a");
  q.Add("b");
  q.Add("c");
  q.AddUrgent("c");  // queued: moves ahead, not duplicated
  q.AddUrgent("x");  // new: ahead of a and b, after c
  q.Add("x");        // a plain add of an urgent key leaves it urgent
  EXPECT_EQ(q.Len(), 4u);
  EXPECT_EQ(q.UrgentLen(), 2u);
  std::vector<std::string> order;
  while (q.Len() > 0) {
    auto k = q.Get();
    ASSERT_TRUE(k.has_value());
    order.push_back(*k);
    q.Done(*k);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"c", "x", "a", "b"}));
}

TEST(WorkQueueTest, UrgentAddWhileProcessingIsQueuedAheadWhenDone) {
  WorkQueue q;
  q.Add("busy");
  EXPECT_EQ(q.Get(), "busy");
  q.Add("a");
  q.AddUrgent("busy");  // never to a second worker while processing
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.UrgentLen(), 0u);  // it waits for Done, not for a worker
  EXPECT_EQ(q.Get(), "a");
  q.Add("b");
  q.Done("busy");  // dirty and urgent: queued ahead of b
  EXPECT_EQ(q.UrgentLen(), 1u);
  EXPECT_EQ(q.Get(), "busy");
  EXPECT_EQ(q.UrgentLen(), 0u);
  EXPECT_EQ(q.Get(), "b");
  q.Done("a");
  q.Done("busy");
  q.Done("b");
  EXPECT_EQ(q.Len(), 0u);
  // Urgency ends with the hand-out: a later plain add is plain.
  q.Add("c");
  q.Add("busy");
  EXPECT_EQ(q.Get(), "c");
  q.ShutDown();
  q.AddUrgent("late");  // ignored after shutdown
  EXPECT_EQ(q.Get(), "busy");
  q.Done("c");
  q.Done("busy");
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueueTest, KeyReaddedWhileProcessingIsRequeuedAfterDone) {
  WorkQueue q;
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 0u);  // not handed to a second worker
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u);  // once, however often it was re-added
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, AddAfterWaitsForTheClock) {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.AddAfter("a", seconds(1));
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.NumWaiting(), 1u);
  clock.Advance(milliseconds(999));
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.NumWaiting(), 0u);
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
}

TEST(WorkQueueTest, AddAfterKeepsTheEarlierTimeAndAddsOnce) {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.AddAfter("b", seconds(10));
  q.AddAfter("b", seconds(2));
  q.AddAfter("b", seconds(5));
  EXPECT_EQ(q.NumWaiting(), 1u);
  clock.Advance(seconds(2));
  EXPECT_EQ(q.Len(), 1u);
  clock.Advance(seconds(20));
  EXPECT_EQ(q.Len(), 1u);                    // the superseded 10s and 5s entries add nothing
  q.AddAfter("c", Clock::Duration::zero());  // no delay: immediate
  EXPECT_EQ(q.Len(), 2u);
}

TEST(WorkQueueTest, DelayedKeysComeOutInReadyOrder) {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.AddAfter("late", seconds(3));
  q.AddAfter("early", seconds(1));
  q.AddAfter("middle", seconds(2));
  clock.Advance(seconds(5));
  EXPECT_EQ(q.Get(), "early");
  EXPECT_EQ(q.Get(), "middle");
  EXPECT_EQ(q.Get(), "late");
}

TEST(WorkQueueTest, GetBlocksUntilADelayedKeyIsReady) {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  const auto start = clock.Now();
  q.AddAfter("a", seconds(30));
  std::atomic<bool> got{false};
  std::atomic<int64_t> waited_s{-1};
  std::jthread worker([&] {
    auto key = q.Get();
    // Read the clock before signalling: the main thread stops advancing it
    // only after `got`, so this is the time Get returned at (or later).
    waited_s = std::chrono::duration_cast<seconds>(clock.Now() - start).count();
    EXPECT_EQ(key, "a");
    got = true;
  });
  while (!got) {
    clock.Advance(seconds(1));
    std::this_thread::yield();
  }
  worker.join();
  // Get returned only once the key's 30 s delay had passed on the clock.
  EXPECT_GE(waited_s.load(), 30);
}

TEST(WorkQueueTest, GetWakesForAnAddFromAnotherThread) {
  WorkQueue q;
  std::jthread worker([&] { EXPECT_EQ(q.Get(), "x"); });
  q.Add("x");
  worker.join();
}

TEST(WorkQueueTest, AddRateLimitedForgetAndNumRequeues) {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.AddRateLimited("a");  // 10ms
  EXPECT_EQ(q.NumRequeues("a"), 1);
  clock.Advance(milliseconds(10));
  ASSERT_EQ(q.Get(), "a");
  q.Done("a");
  q.AddRateLimited("a");  // 20ms
  EXPECT_EQ(q.NumRequeues("a"), 2);
  clock.Advance(milliseconds(19));
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(q.Len(), 1u);
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
  ASSERT_EQ(q.Get(), "a");
  q.Done("a");
  q.AddRateLimited("a");  // back to 10ms after Forget
  clock.Advance(milliseconds(10));
  EXPECT_EQ(q.Len(), 1u);
}

TEST(WorkQueueTest, ShutDownHandsOutQueuedKeysThenStops) {
  FakeClock clock;
  WorkQueue q(FakeOptions(clock));
  q.Add("a");
  q.AddAfter("later", seconds(1));
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  q.Add("b");  // ignored
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  clock.Advance(seconds(2));
  EXPECT_EQ(q.Get(), std::nullopt);  // the delayed key was dropped
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, ShutDownWakesBlockedWorkers) {
  WorkQueue q;
  std::vector<std::jthread> workers;
  workers.reserve(3);
  std::atomic<int> stopped{0};
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      EXPECT_EQ(q.Get(), std::nullopt);
      ++stopped;
    });
  }
  q.ShutDown();
  workers.clear();  // joins
  EXPECT_EQ(stopped, 3);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForProcessingKeys) {
  WorkQueue q;
  q.Add("a");
  q.Add("b");
  ASSERT_EQ(q.Get(), "a");
  std::atomic<bool> drained{false};
  std::jthread drainer([&] {
    q.ShutDownWithDrain();
    drained = true;
  });
  // "b" is still queued and "a" processing: the drain cannot have finished.
  while (!q.ShuttingDown()) std::this_thread::yield();
  EXPECT_FALSE(drained);
  EXPECT_EQ(q.Get(), "b");  // queued keys are still handed out while draining
  q.Done("a");
  EXPECT_FALSE(drained);
  q.Done("b");
  drainer.join();
  EXPECT_TRUE(drained);
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueueTest, TwoWorkersNeverHoldTheSameKey) {
  WorkQueue q;
  constexpr int kKeys = 8;
  constexpr int kAddsPerProducer = 4000;
  std::mutex held_mu;
  std::set<std::string> held;
  std::atomic<int> violations{0};
  std::atomic<int> processed{0};
  std::vector<std::jthread> workers;
  workers.reserve(4);
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        {
          std::lock_guard<std::mutex> l(held_mu);
          if (!held.insert(*key).second) ++violations;
        }
        std::this_thread::yield();  // widen the window for a second worker
        {
          std::lock_guard<std::mutex> l(held_mu);
          held.erase(*key);
        }
        ++processed;
        q.Done(*key);
      }
    });
  }
  {
    std::vector<std::jthread> producers;
    producers.reserve(2);
    for (int p = 0; p < 2; ++p) {
      producers.emplace_back([&, p] {
        for (int i = 0; i < kAddsPerProducer; ++i) q.Add("key-" + std::to_string((i + p) % kKeys));
      });
    }
  }
  q.ShutDownWithDrain();
  workers.clear();
  EXPECT_EQ(violations, 0);
  EXPECT_GE(processed, kKeys);                 // every key at least once
  EXPECT_LE(processed, 2 * kAddsPerProducer);  // dedup never duplicates
  EXPECT_EQ(q.Len(), 0u);
}

}  // namespace
}  // namespace kc::kube

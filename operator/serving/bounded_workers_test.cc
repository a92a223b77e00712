#include "operator/serving/bounded_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace kc::op {
namespace {

TEST(BoundedWorkers, RefusesAtOnceWhenTheQueueIsFull) {
  BoundedWorkers workers(1, 2);
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> ran{0};
  ASSERT_TRUE(workers.TrySubmit([&] {
    started.set_value();
    released.wait();
    ++ran;
  }));
  started.get_future().wait();  // the one thread is busy; the queue is empty
  EXPECT_TRUE(workers.TrySubmit([&] { ++ran; }));
  EXPECT_TRUE(workers.TrySubmit([&] { ++ran; }));
  EXPECT_EQ(workers.waiting(), 2u);
  EXPECT_FALSE(workers.TrySubmit([&] { ++ran; })) << "a third waiting job is refused";
  std::promise<void> last;
  std::atomic<bool> queued{false};
  release.set_value();
  // The queue drains; one more is accepted once there is room, and runs.
  while (!queued) queued = workers.TrySubmit([&] { last.set_value(); });
  last.get_future().wait();
  workers.Stop();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_FALSE(workers.TrySubmit([] {})) << "nothing is accepted after Stop";
}

TEST(BoundedWorkers, StopDropsWaitingJobsUnrun) {
  std::atomic<int> ran{0};
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  BoundedWorkers workers(1, 4);
  ASSERT_TRUE(workers.TrySubmit([&] {
    started.set_value();
    released.wait();
  }));
  started.get_future().wait();
  ASSERT_TRUE(workers.TrySubmit([&] { ++ran; }));
  std::thread stopper([&] { workers.Stop(); });
  // Stop() has taken the queue before it joins; release the running job.
  while (workers.waiting() != 0) std::this_thread::yield();
  release.set_value();
  stopper.join();
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace kc::op

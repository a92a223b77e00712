#include "kube/testing/fake_clock.h"

#include <algorithm>

namespace kc::kube {

Clock::TimePoint FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

Clock::WallTime FakeClock::WallNow() const {
  std::lock_guard<std::mutex> l(mu_);
  return wall_;
}

void FakeClock::Advance(Duration d) {
  std::lock_guard<std::mutex> l(mu_);
  now_ += d;
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  ++generation_;
}

int FakeClock::BlockedWaiters() const {
  std::lock_guard<std::mutex> l(mu_);
  return BlockedLocked();
}

bool FakeClock::WaitForWaiters(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  return blocked_cv_.wait_for(l, timeout, [&] { return BlockedLocked() >= n; });
}

bool FakeClock::WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                          TimePoint deadline, std::stop_token stop,
                          const std::function<bool()>& pred) {
  Waiter self;
  {
    std::lock_guard<std::mutex> l(mu_);
    waiters_.push_back(&self);
  }
  struct Unregister {
    FakeClock* clock;
    Waiter* self;
    ~Unregister() {
      std::lock_guard<std::mutex> l(clock->mu_);
      clock->waiters_.erase(std::find(clock->waiters_.begin(), clock->waiters_.end(), self));
    }
  } unregister{this, &self};
  for (;;) {
    uint64_t generation;
    TimePoint now;
    {
      std::lock_guard<std::mutex> l(mu_);
      generation = generation_;
      now = now_;
    }
    if (pred()) return true;
    if (stop.stop_requested() || now >= deadline) return pred();
    {
      // Blocked as of `generation`: an Advance since makes it count again
      // only after the next check.
      std::lock_guard<std::mutex> l(mu_);
      self.checked = generation;
    }
    blocked_cv_.notify_all();
    cv.wait_for(lock, kTick);  // a notify wakes it early
    {
      std::lock_guard<std::mutex> l(mu_);
      self.checked.reset();
    }
  }
}

int FakeClock::BlockedLocked() const {
  return static_cast<int>(std::count_if(waiters_.begin(), waiters_.end(), [&](const Waiter* w) {
    return w->checked == generation_;
  }));
}

}  // namespace kc::kube

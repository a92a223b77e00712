// Clock: the time source of the controller machinery, injectable for tests.
//
// Contract:
// - Now() is monotonic (steady) time, for delays, backoff and rate limits;
//   WallNow() is calendar time, for timestamps written to the API server
//   (Lease renewTime, Event lastTimestamp).
// - WaitUntil() blocks on a condition variable until `pred` holds, `deadline`
//   (in this clock's Now() time) passes, or `stop` is requested, and returns
//   pred(). Everything that waits for time goes through it, so a FakeClock
//   can drive timers without real sleeps.
// - RealClock() is the process-wide real clock. FakeClock only moves when a
//   test calls Advance()/Set(); waiters notice within about a millisecond of
//   real time (they re-check the fake time on a short real-time tick, so no
//   wake-up can be lost). A test that drives threads through the clock
//   calls WaitForWaiters(n) before each Advance, so time moves only once
//   those threads are asleep on it (no real sleeps, no steps skipped past
//   a thread that was still running).
//
// Thread-safe.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

namespace kc::kube {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  virtual TimePoint Now() const = 0;
  virtual WallTime WallNow() const = 0;

  // `lock` must hold the mutex that guards what `pred` reads and that the
  // notifier of `cv` takes.
  virtual bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                         TimePoint deadline, std::stop_token stop,
                         const std::function<bool()>& pred) = 0;

  // Sleeps until `deadline` (clock time). Returns false when `stop` was
  // requested.
  bool SleepUntil(TimePoint deadline, std::stop_token stop) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(mu);
    WaitUntil(lock, cv, deadline, stop, [&] { return stop.stop_requested() || Now() >= deadline; });
    return !stop.stop_requested();
  }
  bool SleepFor(Duration d, std::stop_token stop) { return SleepUntil(Now() + d, stop); }
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                 TimePoint deadline, std::stop_token stop,
                 const std::function<bool()>& pred) override {
    return cv.wait_until(lock, stop, deadline, pred);
  }
};

inline Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

class FakeClock final : public Clock {
 public:
  FakeClock() = default;
  // Starts at the given wall time (steady time starts at an arbitrary epoch).
  explicit FakeClock(WallTime wall) : wall_(wall) {}

  TimePoint Now() const override {
    std::lock_guard<std::mutex> l(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> l(mu_);
    return wall_;
  }
  void Advance(Duration d) {
    std::lock_guard<std::mutex> l(mu_);
    now_ += d;
    wall_ += std::chrono::duration_cast<WallTime::duration>(d);
    ++generation_;
  }

  // How many WaitUntil calls are blocked now: each has checked its
  // predicate and its deadline against the current fake time (after the
  // last Advance) and is waiting for a later one.
  int BlockedWaiters() const {
    std::lock_guard<std::mutex> l(mu_);
    return BlockedLocked();
  }
  // Blocks (real time, at most `timeout`) until at least `n` waiters are
  // blocked at the current fake time, so a test advances only once the
  // threads it drives are asleep on this clock, never before they got
  // there. False on timeout.
  bool WaitForWaiters(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    std::unique_lock<std::mutex> l(mu_);
    return blocked_cv_.wait_for(l, timeout, [&] { return BlockedLocked() >= n; });
  }

  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                 TimePoint deadline, std::stop_token stop,
                 const std::function<bool()>& pred) override {
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

 private:
  struct Waiter {
    std::optional<uint64_t> checked;  // the generation it is blocked at
  };
  int BlockedLocked() const {
    return static_cast<int>(std::count_if(waiters_.begin(), waiters_.end(), [&](const Waiter* w) {
      return w->checked == generation_;
    }));
  }

  static constexpr std::chrono::milliseconds kTick{1};
  mutable std::mutex mu_;
  mutable std::condition_variable blocked_cv_;
  std::vector<Waiter*> waiters_;
  uint64_t generation_ = 0;
  TimePoint now_ = TimePoint() + std::chrono::hours(1000);
  WallTime wall_ = WallTime() + std::chrono::seconds(1'800'000'000);
};

}  // namespace kc::kube

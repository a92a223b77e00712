// Clock: the time source of the controller machinery, injectable for tests.
//
// Contract:
// - Now() is monotonic (steady) time, for delays, backoff and rate limits;
//   WallNow() is calendar time, for timestamps written to the API server
//   (Lease renewTime, Event lastTimestamp).
// - WaitUntil() blocks on a condition variable until `pred` holds, `deadline`
//   (in this clock's Now() time) passes, or `stop` is requested, and returns
//   pred(). Everything that waits for time goes through it, so a fake clock
//   (kube/testing/fake_clock.h, for tests only) can drive timers without
//   real sleeps.
// - RealClock() is the process-wide real clock.
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

}  // namespace kc::kube

// FakeClock: a kube::Clock that moves only when a test calls Advance().
// Waiters notice within about a millisecond of real time (they re-check the
// fake time on a short real-time tick, so no wake-up can be lost). A test
// that drives threads through the clock calls WaitForWaiters(n) before each
// Advance, so time moves only once those threads are asleep on it (no real
// sleeps, no steps skipped past a thread that was still running).
// Part of kc_kube_testing: linked by tests only, never by a program.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

#include "kube/clock.h"

namespace kc::kube {

class FakeClock final : public Clock {
 public:
  FakeClock() = default;
  // Starts at the given wall time (steady time starts at an arbitrary epoch).
  explicit FakeClock(WallTime wall) : wall_(wall) {}

  TimePoint Now() const override;
  WallTime WallNow() const override;
  void Advance(Duration d);

  // How many WaitUntil calls are blocked now: each has checked its
  // predicate and its deadline against the current fake time (after the
  // last Advance) and is waiting for a later one.
  int BlockedWaiters() const;
  // Blocks (real time, at most `timeout`) until at least `n` waiters are
  // blocked at the current fake time, so a test advances only once the
  // threads it drives are asleep on this clock, never before they got
  // there. False on timeout.
  bool WaitForWaiters(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable_any& cv,
                 TimePoint deadline, std::stop_token stop,
                 const std::function<bool()>& pred) override;

 private:
  struct Waiter {
    std::optional<uint64_t> checked;  // the generation it is blocked at
  };
  int BlockedLocked() const;

  static constexpr std::chrono::milliseconds kTick{1};
  mutable std::mutex mu_;
  mutable std::condition_variable blocked_cv_;
  std::vector<Waiter*> waiters_;
  uint64_t generation_ = 0;
  TimePoint now_ = TimePoint() + std::chrono::hours(1000);
  WallTime wall_ = WallTime() + std::chrono::seconds(1'800'000'000);
};

}  // namespace kc::kube

// Backoff: exponential delays for retries.
//
// - ExponentialDelay(base, max, failures): base * 2^failures, capped at max
//   (failures = 0 gives base). Pure, overflow-safe.
// - Backoff: one stream of retries (a watch reconnect loop): Next() returns
//   the delay before the next attempt and grows it; Reset() after a success.
//   Optional jitter adds up to `jitter` * delay (deterministic when 0).
// - ItemBackoff: per-key failure counts (the work queue's per-item limiter):
//   When(item) returns ExponentialDelay(base, max, failures(item)) and counts
//   one more failure; Forget(item) clears the count; NumRequeues(item) reads it.
//
// Backoff is not thread-safe (one per loop); ItemBackoff is thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <string>

namespace kc::kube {

using BackoffDuration = std::chrono::steady_clock::duration;

BackoffDuration ExponentialDelay(BackoffDuration base, BackoffDuration max, int failures);

class Backoff {
 public:
  Backoff(BackoffDuration base, BackoffDuration max, double jitter = 0.0)
      : base_(base), max_(max), jitter_(jitter) {}

  BackoffDuration Next();
  void Reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  BackoffDuration base_;
  BackoffDuration max_;
  double jitter_;
  int failures_ = 0;
  std::mt19937_64 rng_{std::random_device{}()};
};

class ItemBackoff {
 public:
  ItemBackoff(BackoffDuration base, BackoffDuration max) : base_(base), max_(max) {}

  BackoffDuration When(const std::string& item);
  void Forget(const std::string& item);
  int NumRequeues(const std::string& item) const;

 private:
  BackoffDuration base_;
  BackoffDuration max_;
  mutable std::mutex mu_;
  std::map<std::string, int> failures_;
};

}  // namespace kc::kube

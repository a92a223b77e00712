// Rate limiters for the work queue and for client-side request pacing.
//
// - TokenBucket: `qps` tokens per second refill, at most `burst` stored
//   (starts full). TryAccept() takes a token if one is there now. Reserve()
//   always takes one (possibly going into debt) and returns how long the
//   caller must wait before using it (client-go's Limiter.Reserve().Delay()).
//   qps <= 0 means unlimited.
// - RateLimiter: per-item delay policy of the work queue (client-go's
//   workqueue.TypedRateLimiter): When(item) is the delay before the item may
//   be retried (and records a retry), Forget(item) ends its tracking,
//   NumRequeues(item) counts its retries.
// - ItemExponentialRateLimiter (base..max, doubling per failure),
//   BucketRateLimiter (one shared TokenBucket), MaxOfRateLimiter (largest
//   delay of several), and DefaultControllerRateLimiter(): max of per-item
//   5ms..1000s exponential and an overall 10 qps / 100 burst bucket.
//
// All thread-safe. Time comes from an injectable Clock.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kube/backoff.h"
#include "kube/clock.h"

namespace kc::kube {

class TokenBucket {
 public:
  TokenBucket(double qps, int burst, Clock& clock = RealClock());

  bool TryAccept();
  Clock::Duration Reserve();
  // Same as Reserve(): the delay before the caller may proceed.
  Clock::Duration When() { return Reserve(); }
  // Blocks (on the clock) until a token is available; false if stopped.
  bool Accept(const std::stop_token& stop = {});

 private:
  void RefillLocked(Clock::TimePoint now);

  const double qps_;
  const double burst_;
  Clock& clock_;
  std::mutex mu_;
  double tokens_;
  Clock::TimePoint last_;
};

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  virtual Clock::Duration When(const std::string& item) = 0;
  virtual void Forget(const std::string& item) = 0;
  virtual int NumRequeues(const std::string& item) = 0;
};

class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(Clock::Duration base, Clock::Duration max) : backoff_(base, max) {}
  Clock::Duration When(const std::string& item) override { return backoff_.When(item); }
  void Forget(const std::string& item) override { backoff_.Forget(item); }
  int NumRequeues(const std::string& item) override { return backoff_.NumRequeues(item); }

 private:
  ItemBackoff backoff_;
};

class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, Clock& clock = RealClock())
      : bucket_(qps, burst, clock) {}
  Clock::Duration When(const std::string& item) override { return bucket_.Reserve(); }
  void Forget(const std::string& item) override {}
  int NumRequeues(const std::string& item) override { return 0; }

 private:
  TokenBucket bucket_;
};

class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Clock::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock = RealClock());

}  // namespace kc::kube

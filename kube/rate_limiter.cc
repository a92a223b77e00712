#include "kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace kc::kube {

TokenBucket::TokenBucket(double qps, int burst, Clock& clock)
    : qps_(qps),
      burst_(std::max(1, burst)),
      clock_(clock),
      tokens_(std::max(1, burst)),
      last_(clock.Now()) {}

void TokenBucket::RefillLocked(Clock::TimePoint now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool TokenBucket::TryAccept() {
  if (qps_ <= 0) return true;
  std::lock_guard<std::mutex> l(mu_);
  RefillLocked(clock_.Now());
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

Clock::Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Clock::Duration::zero();
  std::lock_guard<std::mutex> l(mu_);
  RefillLocked(clock_.Now());
  tokens_ -= 1.0;
  if (tokens_ >= 0.0) return Clock::Duration::zero();
  const double wait_s = -tokens_ / qps_;
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(std::ceil(wait_s * 1e9) / 1e9));
}

bool TokenBucket::Accept(const std::stop_token& stop) {
  const Clock::Duration d = Reserve();
  if (d <= Clock::Duration::zero()) return !stop.stop_requested();
  return clock_.SleepFor(d, stop);
}

Clock::Duration MaxOfRateLimiter::When(const std::string& item) {
  Clock::Duration d = Clock::Duration::zero();
  for (auto& l : limiters_) d = std::max(d, l->When(item));
  return d;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& l : limiters_) l->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int n = 0;
  for (auto& l : limiters_) n = std::max(n, l->NumRequeues(item));
  return n;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialRateLimiter>(std::chrono::milliseconds(5),
                                                                  std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace kc::kube

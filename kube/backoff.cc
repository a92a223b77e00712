#include "kube/backoff.h"

#include <algorithm>
#include <limits>

namespace kc::kube {

BackoffDuration ExponentialDelay(BackoffDuration base, BackoffDuration max, int failures) {
  if (base <= BackoffDuration::zero()) return BackoffDuration::zero();
  if (failures < 0) failures = 0;
  // Double until past max; at most ~62 doublings keep the count in range.
  BackoffDuration d = base;
  for (int i = 0; i < failures; ++i) {
    if (d >= max || d.count() > std::numeric_limits<BackoffDuration::rep>::max() / 2) return max;
    d *= 2;
  }
  return std::min(d, max);
}

BackoffDuration Backoff::Next() {
  BackoffDuration d = ExponentialDelay(base_, max_, failures_);
  if (failures_ < 64) ++failures_;
  if (jitter_ > 0.0) {
    std::uniform_real_distribution<double> dist(0.0, jitter_);
    d += std::chrono::duration_cast<BackoffDuration>(d * dist(rng_));
  }
  return d;
}

BackoffDuration ItemBackoff::When(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  int& failures = failures_[item];
  BackoffDuration d = ExponentialDelay(base_, max_, failures);
  if (failures < 64) ++failures;
  return d;
}

void ItemBackoff::Forget(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  failures_.erase(item);
}

int ItemBackoff::NumRequeues(const std::string& item) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

}  // namespace kc::kube

#include "kube/workqueue.h"

#include <algorithm>
#include <utility>

namespace kc::kube {

WorkQueue::WorkQueue(Options options)
    : name_(std::move(options.name)),
      rate_limiter_(std::move(options.rate_limiter)),
      clock_(options.clock != nullptr ? *options.clock : RealClock()) {
  if (rate_limiter_ == nullptr) rate_limiter_ = DefaultControllerRateLimiter(clock_);
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (!dirty_.insert(key).second) return;   // already queued (or dirty while processing)
  if (processing_.count(key) != 0) return;  // queued again by Done()
  queue_.push_back(key);
  cv_.notify_all();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  AddLocked(key);
}

void WorkQueue::MakeUrgentLocked(const std::string& key) {
  if (!urgent_keys_.insert(key).second) return;  // already urgent
  if (processing_.count(key) != 0) return;       // Done() queues it in urgent_
  auto it = std::find(queue_.begin(), queue_.end(), key);
  if (it != queue_.end()) queue_.erase(it);
  urgent_.push_back(key);
  cv_.notify_all();
}

void WorkQueue::AddUrgent(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  AddLocked(key);
  if (dirty_.count(key) != 0) MakeUrgentLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Clock::Duration delay) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  if (delay <= Clock::Duration::zero()) {
    AddLocked(key);
    return;
  }
  const Clock::TimePoint ready = clock_.Now() + delay;
  auto it = waiting_.find(key);
  if (it != waiting_.end() && it->second <= ready) return;  // keeps the earlier time
  waiting_[key] = ready;
  waiting_heap_.push(Waiting{ready, seq_++, key});
  cv_.notify_all();  // a Get() may need to wait for an earlier time now
}

void WorkQueue::AddRateLimited(const std::string& key) { AddAfter(key, rate_limiter_->When(key)); }

void WorkQueue::Forget(const std::string& key) { rate_limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return rate_limiter_->NumRequeues(key); }

std::optional<Clock::TimePoint> WorkQueue::PromoteLocked(Clock::TimePoint now) {
  while (!waiting_heap_.empty()) {
    const Waiting& top = waiting_heap_.top();
    auto it = waiting_.find(top.key);
    if (it == waiting_.end() || it->second != top.ready) {  // superseded entry
      waiting_heap_.pop();
      continue;
    }
    if (top.ready > now) return top.ready;
    std::string key = top.key;
    waiting_heap_.pop();
    waiting_.erase(it);
    AddLocked(key);
  }
  return std::nullopt;
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    std::optional<Clock::TimePoint> next = PromoteLocked(clock_.Now());
    if (!urgent_.empty() || !queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    // Without a waiting key, wake up at least hourly (keeps deadlines finite).
    const Clock::TimePoint deadline = next.value_or(clock_.Now() + std::chrono::hours(1));
    const size_t waiting_before = waiting_.size();
    clock_.WaitUntil(lock, cv_, deadline, {}, [&] {
      return !urgent_.empty() || !queue_.empty() || shutting_down_ ||
             waiting_.size() != waiting_before || (next && clock_.Now() >= *next);
    });
  }
  std::deque<std::string>& from = urgent_.empty() ? queue_ : urgent_;
  std::string key = std::move(from.front());
  from.pop_front();
  urgent_keys_.erase(key);
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  processing_.erase(key);
  if (dirty_.count(key) != 0) {
    (urgent_keys_.count(key) != 0 ? urgent_ : queue_).push_back(key);
  }
  cv_.notify_all();  // a Get() or a drain may be waiting
}

size_t WorkQueue::Len() {
  std::lock_guard<std::mutex> l(mu_);
  PromoteLocked(clock_.Now());
  return urgent_.size() + queue_.size();
}

size_t WorkQueue::UrgentLen() {
  std::lock_guard<std::mutex> l(mu_);
  return urgent_.size();
}

size_t WorkQueue::NumWaiting() {
  std::lock_guard<std::mutex> l(mu_);
  PromoteLocked(clock_.Now());
  return waiting_.size();
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> l(mu_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_heap_ = {};
  cv_.notify_all();
}

void WorkQueue::ShutDownWithDrain() {
  std::unique_lock<std::mutex> lock(mu_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_heap_ = {};
  cv_.notify_all();
  cv_.wait(lock, [&] { return urgent_.empty() && queue_.empty() && processing_.empty(); });
}

bool WorkQueue::ShuttingDown() {
  std::lock_guard<std::mutex> l(mu_);
  return shutting_down_;
}

}  // namespace kc::kube

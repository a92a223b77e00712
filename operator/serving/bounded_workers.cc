#include "operator/serving/bounded_workers.h"

namespace kc::op {

BoundedWorkers::BoundedWorkers(std::size_t threads, std::size_t capacity) : capacity_(capacity) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

BoundedWorkers::~BoundedWorkers() { Stop(); }

bool BoundedWorkers::TrySubmit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopped_ || queue_.size() >= capacity_) return false;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void BoundedWorkers::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    dropped.swap(queue_);
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  // `dropped` goes out of scope here, after the threads: its jobs never run.
}

std::size_t BoundedWorkers::waiting() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void BoundedWorkers::Loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace kc::op

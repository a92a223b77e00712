// BoundedWorkers: a fixed number of threads running jobs from a queue of
// fixed capacity, for the work a handler must not do on the HTTP server's
// thread (an API call).
//
// TrySubmit() never blocks: it queues the job and returns true, or returns
// false at once when `capacity` jobs are already waiting (the caller
// answers 429), so a flood costs a bounded amount of memory and never more
// than `threads` concurrent jobs. Stop() (and the destructor) lets the
// running jobs finish, drops the waiting ones unrun and joins the threads;
// TrySubmit() after Stop() returns false. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kc::op {

class BoundedWorkers {
 public:
  BoundedWorkers(std::size_t threads, std::size_t capacity);
  ~BoundedWorkers();
  BoundedWorkers(const BoundedWorkers&) = delete;
  BoundedWorkers& operator=(const BoundedWorkers&) = delete;

  bool TrySubmit(std::function<void()> job);
  void Stop();
  std::size_t waiting() const;

 private:
  void Loop();

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kc::op

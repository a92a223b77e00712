#include "initwarm/fs/fsync_pool.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "initwarm/fs/fsutil.h"

namespace kc::initwarm {

FsyncPool::FsyncPool(int threads, std::size_t max_pending,
                     std::function<void(std::uint64_t)> on_synced)
    : on_synced_(std::move(on_synced)), max_pending_(std::max<std::size_t>(1, max_pending)) {
  const int n = std::max(1, threads);
  threads_.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
}

FsyncPool::~FsyncPool() { (void)Finish(); }

void FsyncPool::Add(int fd, std::string what) {
  std::unique_lock<std::mutex> l(mu_);
  has_room_.wait(l, [&] { return queue_.size() < max_pending_; });
  queue_.emplace_back(fd, std::move(what));
  has_work_.notify_one();
}

bool FsyncPool::failed() const {
  std::lock_guard<std::mutex> l(mu_);
  return !first_error_.ok();
}

Status FsyncPool::Finish() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (finished_) return first_error_;
    finished_ = true;
    closing_ = true;
  }
  has_work_.notify_all();
  for (auto& t : threads_) t.join();
  std::lock_guard<std::mutex> l(mu_);
  return first_error_;
}

void FsyncPool::Work() {
  while (true) {
    std::unique_lock<std::mutex> l(mu_);
    has_work_.wait(l, [&] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing, drained
    auto [fd, what] = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = !first_error_.ok();
    l.unlock();
    has_room_.notify_one();
    Status s;
    if (!skip && ::fsync(fd) != 0 && errno != EINVAL) s = ErrnoStatus(errno, "fsync " + what);
    ::close(fd);
    if (skip) continue;
    l.lock();
    if (!s.ok()) {
      if (first_error_.ok()) first_error_ = std::move(s);
      continue;
    }
    const std::uint64_t n = ++synced_;
    l.unlock();
    if (on_synced_) on_synced_(n);
  }
}

}  // namespace kc::initwarm

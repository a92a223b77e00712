#include "initwarm/fs/parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace kc::initwarm {

Status ParallelFor(std::size_t n, int threads, const std::function<Status(std::size_t)>& fn) {
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, threads)),
                                                    std::max<std::size_t>(1, n));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  Status first_error;
  auto work = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      Status s = fn(i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> l(mu);
        if (first_error.ok()) first_error = std::move(s);
        stop = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();  // the caller's thread is one of the workers
  for (auto& t : pool) t.join();
  return first_error;
}

}  // namespace kc::initwarm

#include "bench/seal/raw_io.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

namespace kc::bench {

using initwarm::HashJob;

double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void DropCache(const std::vector<HashJob>& jobs) {
  for (const auto& j : jobs) {
    int fd = ::open(j.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

std::uint64_t ReadAll(const std::vector<HashJob>& jobs, int threads) {
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return jobs[a].size > jobs[b].size; });
  std::atomic<size_t> next{0};
  std::atomic<std::uint64_t> total{0};
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::vector<char> buf(1 << 20);
      std::uint64_t mine = 0;
      while (true) {
        size_t i = next.fetch_add(1);
        if (i >= order.size()) break;
        int fd = ::open(jobs[order[i]].path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        ssize_t n;
        while ((n = ::read(fd, buf.data(), buf.size())) > 0) mine += static_cast<std::uint64_t>(n);
        ::close(fd);
      }
      total += mine;
    });
  }
  for (auto& t : pool) t.join();
  return total;
}

}  // namespace kc::bench

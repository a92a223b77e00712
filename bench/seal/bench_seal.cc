// bench_seal: is sealing I/O-bound? Builds a cache of realistic file sizes
// (many small Triton files of 1-50 KB, a few large files of 50-200 MB),
// then, in the same run and on the same files, times
//   read:  plain parallel read of every file (the thread pool seal uses)
//   hash:  seal's parallel EVP sha256 of every file (initwarm/hasher.h)
// both cold (pages dropped with posix_fadvise(DONTNEED) before each pass)
// and warm (page cache), and prints hash/read throughput ratios; then a full
// Seal() and a Checksums-level verify of the result.
//
//   bench_seal [--size-mib 2048] [--dir $TMPDIR] [--threads 0] [--keep]
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "core/layout.h"
#include "initwarm/hasher.h"
#include "initwarm/seal.h"
#include "initwarm/verify.h"

namespace fs = std::filesystem;
using kc::initwarm::HashJob;

namespace {

// CPU seconds (user + system) this process has used so far.
double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void WriteFileOfSize(const fs::path& p, std::uint64_t size, const std::vector<char>& block,
                     std::uint64_t salt) {
  fs::create_directories(p.parent_path());
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(p.c_str());
    std::exit(1);
  }
  std::vector<char> buf = block;
  std::memcpy(buf.data(), &salt, sizeof(salt));
  std::uint64_t left = size;
  while (left > 0) {
    size_t n = static_cast<size_t>(std::min<std::uint64_t>(left, buf.size()));
    if (::write(fd, buf.data(), n) != static_cast<ssize_t>(n)) {
      std::perror("write");
      std::exit(1);
    }
    left -= n;
    ++buf[8];
  }
  ::fsync(fd);
  ::close(fd);
}

void DropCache(const std::vector<HashJob>& jobs) {
  for (const auto& j : jobs) {
    int fd = ::open(j.path.c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// Same pool shape as HashFiles: largest first, shared index, 1 MiB reads.
std::uint64_t ReadAll(const std::vector<HashJob>& jobs, int threads) {
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
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
        int fd = ::open(jobs[order[i]].path.c_str(), O_RDONLY);
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

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t size_mib = 2048;
  std::string dir;
  int threads = 0;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--size-mib") {
      size_mib = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--dir") {
      dir = next();
    } else if (a == "--threads") {
      threads = std::atoi(next().c_str());
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::cerr << "usage: bench_seal [--size-mib 2048] [--dir DIR] [--threads N] [--keep]\n";
      return 2;
    }
  }
  if (threads <= 0) threads = kc::initwarm::DefaultHashThreads();
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = std::string(t != nullptr ? t : "/tmp") + "/kc-bench-seal-" + std::to_string(::getpid());
  }
  const std::string fp = "0123456789abcdef";
  kc::core::Layout layout(dir);
  fs::path staging = layout.Staging(fp, "bench");
  const std::uint64_t total = size_mib << 20;

  // Build the cache: a quarter in small files (1-50 KB), the rest large (50-200 MB).
  std::vector<char> block(1 << 20);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>((i * 2654435761u) >> 13);
  std::vector<HashJob> jobs;
  std::uint64_t written = 0;
  std::uint64_t salt = 0;
  const std::uint64_t small_budget = total / 4;
  while (written < small_budget) {
    std::uint64_t sz = 1024 + (salt * 7919) % (std::uint64_t{49} * 1024);
    fs::path p = staging / "triton" / ("K" + std::to_string(salt / 8)) /
                 ("kernel_" + std::to_string(salt) + (salt % 2 ? ".cubin" : ".json"));
    WriteFileOfSize(p, sz, block, ++salt);
    jobs.push_back({p, sz});
    written += sz;
  }
  const std::uint64_t large_sizes[] = {50, 120, 200, 80, 160};
  for (int i = 0; written < total; ++i) {
    std::uint64_t sz = std::min<std::uint64_t>(large_sizes[i % 5] << 20, total - written);
    fs::path p = staging / (i % 2 ? "inductor" : "nv") / ("large_" + std::to_string(i));
    WriteFileOfSize(p, sz, block, ++salt);
    jobs.push_back({p, sz});
    written += sz;
  }
  std::printf("cache: %zu files, %.1f MiB (small files: %.1f MiB), threads %d, cores %u\n",
              jobs.size(), static_cast<double>(written) / 1048576.0,
              static_cast<double>(small_budget) / 1048576.0, threads,
              std::thread::hardware_concurrency());

  kc::initwarm::HashOptions ho;
  ho.threads = threads;
  auto pass = [&](bool cold) {
    if (cold) DropCache(jobs);
    double t0 = Now();
    double c0 = CpuSeconds();
    std::uint64_t bytes = ReadAll(jobs, threads);
    double read_s = Now() - t0;
    double read_cpu = CpuSeconds() - c0;
    if (cold) DropCache(jobs);
    t0 = Now();
    c0 = CpuSeconds();
    auto sums = kc::initwarm::HashFiles(jobs, ho);
    double hash_s = Now() - t0;
    double hash_cpu = CpuSeconds() - c0;
    if (!sums.ok()) {
      std::cerr << sums.status() << "\n";
      std::exit(1);
    }
    double read_mbs = static_cast<double>(bytes) / 1048576.0 / read_s;
    double hash_mbs = static_cast<double>(written) / 1048576.0 / hash_s;
    std::printf(
        "%s: read %.0f MiB/s (%.2fs wall, %.2fs cpu), hash %.0f MiB/s (%.2fs wall, %.2fs cpu), "
        "ratio hash/read %.2f\n",
        cold ? "cold" : "warm", read_mbs, read_s, read_cpu, hash_mbs, hash_s, hash_cpu,
        hash_mbs / read_mbs);
    std::fflush(stdout);
  };
  pass(true);
  pass(false);

  // Full seal (walk + hash + fsync + manifest + publish) and verify.
  kc::initwarm::SealOptions so;
  so.root = dir;
  so.fingerprint = fp;
  so.owner = "bench";
  so.threads = threads;
  double t0 = Now();
  auto r = kc::initwarm::Seal(so);
  if (!r.ok()) {
    std::cerr << "seal: " << r.status() << "\n";
    return 1;
  }
  std::printf("seal: %.2fs total (%s)\n", Now() - t0, kc::initwarm::SealResultJson(*r).c_str());
  kc::initwarm::VerifyOptions vo;
  vo.dir = layout.Published(fp);
  vo.level = kc::core::Level::kChecksums;
  vo.threads = threads;
  t0 = Now();
  auto v = kc::initwarm::VerifyCache(vo);
  std::printf("verify (Checksums, warm): %.2fs, %s\n", Now() - t0,
              v.ok ? "ok" : v.finding.ToString().c_str());
  if (!keep) fs::remove_all(dir);
  return v.ok ? 0 : 1;
}

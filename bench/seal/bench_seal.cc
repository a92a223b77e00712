// bench_seal: is sealing I/O-bound? Builds a vLLM-shaped cache (bench/seal/
// tree.h: thousands of 1-50 KB Triton/Inductor files, a few 50-200 MB
// artifacts), then, in the same run and on the same files, times
//   read:  plain parallel read of every file (the thread pool seal uses)
//   hash:  seal's parallel EVP sha256 of every file (initwarm/fs/hasher.h)
// both cold (pages dropped with posix_fadvise(DONTNEED) before each pass)
// and warm (page cache), and prints hash/read throughput ratios; then a full
// Seal() and a Checksums-level verify of the result, through the library.
//
//   bench_seal [--size-mib 2048] [--dir $TMPDIR] [--threads 0] [--keep]
//
// The pieces bench/seal/run.sh drives the real CLI with:
//   bench_seal --only-tree --size-mib N --dir DIR [--fresh]   build the tree
//       in DIR and exit (--fresh: no fsync, dirty pages as a warmup leaves them)
//   bench_seal --read DIR [--threads 0]              walk DIR as seal does and
//       read every file (the yardstick); one JSON line: files, bytes, walkS,
//       readS, cpuS
//   bench_seal --drop DIR                            drop DIR's files' pages
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench/seal/raw_io.h"
#include "bench/seal/tree.h"
#include "core/layout.h"
#include "initwarm/cache/seal.h"
#include "initwarm/cache/verify.h"
#include "initwarm/fs/hasher.h"

namespace fs = std::filesystem;
using kc::bench::CpuSeconds;
using kc::bench::DropCache;
using kc::bench::Now;
using kc::bench::ReadAll;
using kc::initwarm::HashJob;

namespace {

struct Args {
  std::uint64_t size_mib = 2048;
  std::string dir;
  int threads = 0;
  bool keep = false;
  bool only_tree = false;
  bool fresh = false;
  std::string read;  // --read DIR
  std::string drop;  // --drop DIR
};

std::vector<HashJob> ListOrDie(const std::string& dir) {
  auto jobs = kc::bench::ListTree(dir);
  if (!jobs.ok()) {
    std::cerr << "bench_seal: " << jobs.status() << "\n";
    std::exit(1);
  }
  return *jobs;
}

// --read DIR: walk + parallel read, timed in-process as well.
int ReadMode(const Args& a) {
  double t0 = Now();
  double c0 = CpuSeconds();
  std::vector<HashJob> jobs = ListOrDie(a.read);
  double walk_s = Now() - t0;
  std::uint64_t bytes = ReadAll(jobs, a.threads);
  std::printf(
      "{\"files\":%zu,\"bytes\":%llu,\"threads\":%d,\"walkS\":%.3f,\"readS\":%.3f,\"cpuS\":%.3f}\n",
      jobs.size(), static_cast<unsigned long long>(bytes), a.threads, walk_s, Now() - t0 - walk_s,
      CpuSeconds() - c0);
  return 0;
}

// The in-process comparison on a tree it builds (the original benchmark).
int FullRun(const Args& a, const std::string& dir) {
  const std::string fp = "0123456789abcdef";
  kc::core::Layout layout(dir);
  fs::path staging = layout.Staging(fp, "bench");
  std::vector<HashJob> jobs = kc::bench::BuildTree(staging, a.size_mib << 20);
  std::uint64_t written = 0;
  for (const auto& j : jobs) written += j.size;
  std::printf("cache: %zu files, %.1f MiB, threads %d, cores %u\n", jobs.size(),
              static_cast<double>(written) / 1048576.0, a.threads,
              std::thread::hardware_concurrency());

  kc::initwarm::HashOptions ho;
  ho.threads = a.threads;
  auto pass = [&](bool cold) {
    if (cold) DropCache(jobs);
    double t0 = Now();
    double c0 = CpuSeconds();
    std::uint64_t bytes = ReadAll(jobs, a.threads);
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
  so.threads = a.threads;
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
  vo.threads = a.threads;
  t0 = Now();
  auto v = kc::initwarm::VerifyCache(vo);
  std::printf("verify (Checksums, warm): %.2fs, %s\n", Now() - t0,
              v.ok ? "ok" : v.finding.ToString().c_str());
  if (!a.keep) fs::remove_all(dir);
  return v.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (arg == "--size-mib") {
      a.size_mib = std::strtoull(next().c_str(), nullptr, 10);
    } else if (arg == "--dir") {
      a.dir = next();
    } else if (arg == "--threads") {
      a.threads = std::atoi(next().c_str());
    } else if (arg == "--keep") {
      a.keep = true;
    } else if (arg == "--only-tree") {
      a.only_tree = true;
    } else if (arg == "--fresh") {
      a.fresh = true;
    } else if (arg == "--read") {
      a.read = next();
    } else if (arg == "--drop") {
      a.drop = next();
    } else {
      std::cerr << "usage: bench_seal [--size-mib 2048] [--dir DIR] [--threads N] [--keep]\n"
                   "       bench_seal --only-tree --size-mib N --dir DIR [--fresh]\n"
                   "       bench_seal --read DIR [--threads N] | --drop DIR\n";
      return 2;
    }
  }
  if (a.threads <= 0) a.threads = kc::initwarm::DefaultHashThreads();
  if (!a.drop.empty()) {
    DropCache(ListOrDie(a.drop));
    return 0;
  }
  if (!a.read.empty()) return ReadMode(a);
  if (a.only_tree) {
    if (a.dir.empty()) {
      std::cerr << "bench_seal: --only-tree needs --dir\n";
      return 2;
    }
    auto jobs = kc::bench::BuildTree(a.dir, a.size_mib << 20, !a.fresh);
    std::printf("tree: %zu files, %llu MiB in %s\n", jobs.size(),
                static_cast<unsigned long long>(a.size_mib), a.dir.c_str());
    return 0;
  }
  std::string dir = a.dir;
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = std::string(t != nullptr ? t : "/tmp") + "/kc-bench-seal-" + std::to_string(::getpid());
  }
  return FullRun(a, dir);
}

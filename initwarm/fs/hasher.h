// Hasher: sha256 of many files on all cores (OpenSSL EVP).
//
// HashFiles runs `threads` workers (default: 2 x hardware threads, so one
// worker's read overlaps another's hashing) that take files largest-first
// from a shared index. Each file is streamed in 1 MiB reads (never mapped
// whole), its size checked against the expected size (a file that changed
// since the walk is DataLoss naming it), and, when `fsync` is set, handed
// to an FsyncPool of `fsync_threads` (fsync_pool.h) that fsyncs it through
// the same descriptor while the workers hash on; all fsyncs are done when
// HashFiles returns. The first error (a failed fsync too) stops the other
// workers.
// `on_progress(files_done, bytes_done)` is called after every read and every
// finished file (from worker threads); seal hangs its failpoints on it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

struct HashJob {
  std::filesystem::path path;  // relative to HashOptions::dir when that is set
  std::uint64_t size = 0;      // expected
};

struct HashOptions {
  // The directory the jobs' paths are relative to; null: each path's parent
  // directory is trusted.
  const SafeDir* dir = nullptr;
  int threads = 0;  // 0: 2 x std::thread::hardware_concurrency()
  bool fsync = false;
  std::size_t buffer_bytes = 1 << 20;
  // Concurrent fsyncs share device flushes (and journal commits): 16 at once
  // synced a 5,141-file tree 1.8x faster than 4 and 11x faster than 1
  // (docs/benchmarks.md).
  int fsync_threads = 16;
  std::function<void(std::uint64_t files_done, std::uint64_t bytes_done)> on_progress;
  // After each fsync, with the count so far (from a pool thread).
  std::function<void(std::uint64_t files_synced)> on_fsynced;
};

// Hex sha256 per job, in job order.
StatusOr<std::vector<std::string>> HashFiles(const std::vector<HashJob>& jobs,
                                             const HashOptions& opts);

// One file, streamed. Sets *size to the bytes read.
StatusOr<std::string> HashFile(const std::filesystem::path& path, std::uint64_t* size,
                               std::size_t buffer_bytes = 1 << 20);

int DefaultHashThreads();

// Copies exactly `size` bytes of the open file `in` into the new file `to`
// (created O_EXCL, never through a symlink, `mode`, parents created,
// fsynced) and returns their sha256. DataLoss naming `what` when the source
// is shorter or longer than `size`.
StatusOr<std::string> CopyHashed(int in, std::uint64_t size, const std::string& what,
                                 const std::filesystem::path& to, unsigned mode);

}  // namespace kc::initwarm

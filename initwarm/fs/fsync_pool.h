// FsyncPool: fsyncs and closes descriptors on threads of its own.
//
// Each fsync waits for the device's write cache to be flushed (and, on a
// journaling filesystem, for a journal commit): about 1 ms per file on the
// development VM's disk, so one after another on seal's hashing threads they
// cost more than the hashing (docs/benchmarks.md, "Seal, verify and copy
// throughput"). Concurrent fsyncs share flushes and commits, so the pool runs
// `threads` of them at once while the caller goes on. Add() takes ownership of an open descriptor:
// it is fsynced through that same descriptor, then closed. Add() blocks while `max_pending`
// descriptors wait, which bounds the open descriptors. After the first failure the rest are closed
// unsynced. Finish() waits for all and returns the first error; EINVAL from fsync (a filesystem
// that cannot sync this object, as some network filesystems for directories) is success, as in
// FsyncPath. `on_synced(n)` runs after each fsync with the count so far (failpoints), on a pool
// thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"

namespace kc::initwarm {

class FsyncPool {
 public:
  explicit FsyncPool(int threads, std::size_t max_pending = 256,
                     std::function<void(std::uint64_t)> on_synced = nullptr);
  ~FsyncPool();
  FsyncPool(const FsyncPool&) = delete;
  FsyncPool& operator=(const FsyncPool&) = delete;

  // `what` names the descriptor in an error ("fsync <what>: ...").
  void Add(int fd, std::string what);
  Status Finish();
  bool failed() const;

 private:
  void Work();

  std::function<void(std::uint64_t)> on_synced_;
  std::size_t max_pending_;
  mutable std::mutex mu_;
  std::condition_variable has_work_;
  std::condition_variable has_room_;
  std::deque<std::pair<int, std::string>> queue_;
  bool closing_ = false;
  bool finished_ = false;
  Status first_error_;
  std::uint64_t synced_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace kc::initwarm

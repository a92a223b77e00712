#include "initwarm/fs/hasher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "core/sha256.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/fsync_pool.h"

namespace kc::initwarm {
namespace {

// Hashes an open descriptor. `on_bytes(n)` after each read.
// Reads at most `limit` bytes (the rest is left unread: *size then says
// the file is larger than expected).
StatusOr<std::string> HashFd(int fd, const std::filesystem::path& path, std::vector<char>* buf,
                             std::uint64_t limit, std::uint64_t* size,
                             const std::function<void(std::uint64_t)>& on_bytes,
                             const std::atomic<bool>* stop) {
  core::Sha256 digest;
  std::uint64_t total = 0;
  while (true) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      return CancelledError("hashing stopped after another file failed");
    }
    if (total >= limit) break;
    ssize_t n = ::read(fd, buf->data(), std::min<std::uint64_t>(buf->size(), limit - total));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read " + path.string());
    }
    if (n == 0) break;
    digest.Update(buf->data(), static_cast<size_t>(n));
    total += static_cast<std::uint64_t>(n);
    if (on_bytes) on_bytes(static_cast<std::uint64_t>(n));
  }
  *size = total;
  return digest.HexDigest();
}

// Opens one job's file for hashing (safe_file.h: regular, one name, no link
// followed).
StatusOr<UniqueFd> OpenJob(const HashJob& job, const HashOptions& opts) {
  if (opts.dir != nullptr) return opts.dir->OpenFile(job.path.string(), true);
  const std::filesystem::path parent =
      job.path.parent_path().empty() ? std::filesystem::path(".") : job.path.parent_path();
  KC_ASSIGN_OR_RETURN(SafeDir dir, SafeDir::OpenTrusted(parent));
  return dir.OpenFile(job.path.filename().string(), true);
}

}  // namespace

int DefaultHashThreads() {
  unsigned hc = std::thread::hardware_concurrency();
  return static_cast<int>(std::max(2u, 2 * (hc == 0 ? 1 : hc)));
}

StatusOr<std::string> HashFile(const std::filesystem::path& path, std::uint64_t* size,
                               std::size_t buffer_bytes) {
  KC_ASSIGN_OR_RETURN(UniqueFd fd, OpenJob({path, 0}, HashOptions{}));
  std::vector<char> buf(buffer_bytes);
  return HashFd(fd.get(), path, &buf, UINT64_MAX, size, nullptr, nullptr);
}

StatusOr<std::vector<std::string>> HashFiles(const std::vector<HashJob>& jobs,
                                             const HashOptions& opts) {
  std::vector<std::string> out(jobs.size());
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return jobs[a].size > jobs[b].size; });
  int threads = opts.threads > 0 ? opts.threads : DefaultHashThreads();
  threads = static_cast<int>(
      std::min<size_t>(static_cast<size_t>(threads), std::max<size_t>(1, jobs.size())));
  std::atomic<size_t> next{0};
  std::atomic<std::uint64_t> files_done{0};
  std::atomic<std::uint64_t> bytes_done{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  Status first_error;

  auto fail = [&](Status s) {
    std::lock_guard<std::mutex> l(mu);
    if (first_error.ok()) first_error = std::move(s);
    stop = true;
  };
  std::optional<FsyncPool> syncer;
  if (opts.fsync) syncer.emplace(opts.fsync_threads, 256, opts.on_fsynced);
  auto worker = [&] {
    std::vector<char> buf(opts.buffer_bytes);
    auto on_bytes = [&](std::uint64_t n) {
      std::uint64_t b = bytes_done.fetch_add(n) + n;
      if (opts.on_progress) opts.on_progress(files_done.load(), b);
    };
    while (!stop.load() && !(syncer && syncer->failed())) {
      size_t i = next.fetch_add(1);
      if (i >= order.size()) return;
      const HashJob& job = jobs[order[i]];
      auto opened = OpenJob(job, opts);
      if (!opened.ok()) {
        fail(opened.status());
        return;
      }
      const int fd = opened->Release();
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      std::uint64_t size = 0;
      auto h = HashFd(fd, job.path, &buf, job.size + 1, &size, on_bytes, &stop);
      Status s = h.status();
      if (s.ok() && size != job.size) {
        s = DataLossError(job.path.string() +
                          " changed while sealing: " + (size > job.size ? "more than " : "") +
                          std::to_string(size) + " bytes now, " + std::to_string(job.size) +
                          " when listed; seal after the warmup has stopped writing");
      }
      if (s.ok() && syncer) {
        syncer->Add(fd, job.path.string());  // fsynced and closed there
      } else {
        ::close(fd);
      }
      if (!s.ok()) {
        fail(s);
        return;
      }
      out[order[i]] = *h;
      std::uint64_t f = files_done.fetch_add(1) + 1;
      if (opts.on_progress) opts.on_progress(f, bytes_done.load());
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (syncer) {
    Status synced = syncer->Finish();
    if (first_error.ok()) first_error = synced;
  }
  if (!first_error.ok()) return first_error;
  return out;
}

StatusOr<std::string> CopyHashed(int in, std::uint64_t size, const std::string& what,
                                 const std::filesystem::path& to, unsigned mode) {
  core::Sha256 digest;
  KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (out.get() < 0) return ErrnoStatus(errno, "create " + to.string());
  if (::fchmod(out.get(), mode) != 0) return ErrnoStatus(errno, "chmod " + to.string());
  std::string buf(1 << 20, '\0');
  std::uint64_t left = size;
  for (;;) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read " + what);
    }
    if (n == 0) break;
    if (static_cast<std::uint64_t>(n) > left) {
      return DataLossError(what + " grew past its listed " + std::to_string(size) + " bytes");
    }
    left -= static_cast<std::uint64_t>(n);
    digest.Update(buf.data(), static_cast<size_t>(n));
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = ::write(out.get(), buf.data() + off, static_cast<size_t>(n - off));
      if (w < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "write " + to.string());
      }
      off += w;
    }
  }
  if (left != 0) {
    return DataLossError(what + " is shorter than its listed " + std::to_string(size) + " bytes");
  }
  if (::fsync(out.get()) != 0) return ErrnoStatus(errno, "fsync " + to.string());
  return digest.HexDigest();
}

}  // namespace kc::initwarm

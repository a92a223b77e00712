#include "initwarm/cache/copy_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "core/layout.h"
#include "core/security_context.h"
#include "initwarm/cache/verify.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/parallel.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

namespace {

Status WriteAllFd(int fd, const char* data, size_t n, const fs::path& to) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write " + to.string());
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return OkStatus();
}

// Copies exactly `size` bytes of `in` to the new file `to`; one more byte
// to read, or fewer, is DataLoss (the file changed since it was checked).
Status CopyBounded(int in, std::uint64_t size, const std::string& what, const fs::path& to) {
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) return ErrnoStatus(errno, "create " + to.string());
  UniqueFd owned(out);
  std::vector<char> buf(1 << 20);
  std::uint64_t done = 0;
  while (true) {
    const std::uint64_t want = std::min<std::uint64_t>(buf.size(), size - done + 1);
    ssize_t n = ::read(in, buf.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read " + what);
    }
    if (n == 0) break;
    if (done + static_cast<std::uint64_t>(n) > size) {
      return DataLossError(what + " is larger than the " + std::to_string(size) +
                           " bytes the manifest lists (changed while copying)");
    }
    KC_RETURN_IF_ERROR(WriteAllFd(out, buf.data(), static_cast<size_t>(n), to));
    done += static_cast<std::uint64_t>(n);
  }
  if (done != size) {
    return DataLossError(what + " has " + std::to_string(done) + " bytes, the manifest lists " +
                         std::to_string(size) + " (changed while copying)");
  }
  // The copy is the pod's own: the app containers (the cache group) may
  // rewrite it (docs/permissions.md).
  if (::fchmod(out, core::kCopyFileMode) != 0) return ErrnoStatus(errno, "chmod " + to.string());
  return OkStatus();
}

}  // namespace

Status CopyCache(const SafeDir& src, const fs::path& dst, const core::Manifest& m, int threads) {
  KC_RETURN_IF_ERROR(MkdirAll(dst));
  for (auto dir : core::kFrameworkDirs) KC_RETURN_IF_ERROR(MkdirAll(dst / dir));
  // Directories once each, then the files, largest first, on `threads`.
  std::set<fs::path> parents;
  for (const auto& f : m.files) {
    KC_RETURN_IF_ERROR(core::CheckRelativePath(f.path));
    parents.insert((dst / f.path).parent_path());
  }
  for (const auto& p : parents) KC_RETURN_IF_ERROR(MkdirAll(p));
  std::vector<size_t> order(m.files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return m.files[a].size > m.files[b].size; });
  KC_RETURN_IF_ERROR(ParallelFor(
      order.size(), threads > 0 ? threads : DefaultHashThreads(), [&](size_t i) -> Status {
        const core::ManifestFile& f = m.files[order[i]];
        KC_ASSIGN_OR_RETURN(UniqueFd in, src.OpenFile(f.path, true));
        return CopyBounded(in.get(), f.size, (src.path() / f.path).string(), dst / f.path);
      }));
  for (const auto& l : m.links) {
    KC_RETURN_IF_ERROR(core::CheckSymlinkTarget(l.path, l.target));
    fs::path to = dst / l.path;
    KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
    if (::symlink(l.target.c_str(), to.c_str()) != 0) {
      return ErrnoStatus(errno, "symlink " + to.string());
    }
  }
  for (auto [name, max] : {std::pair{core::kManifestFileName, kMaxManifestBytes},
                           std::pair{core::kReadyFileName, kMaxReadyBytes}}) {
    KC_ASSIGN_OR_RETURN(std::string bytes, src.ReadFile(name, max, true));
    KC_RETURN_IF_ERROR(WriteNewFile(dst / name, bytes));
  }
  return OkStatus();
}

Status CopyCache(const fs::path& src, const fs::path& dst, const core::Manifest& m, int threads) {
  KC_ASSIGN_OR_RETURN(SafeDir dir, SafeDir::OpenTrusted(src));
  return CopyCache(dir, dst, m, threads);
}

}  // namespace kc::initwarm

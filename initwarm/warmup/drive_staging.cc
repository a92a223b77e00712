#include "initwarm/warmup/drive_staging.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <vector>

#include "initwarm/fs/fsutil.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

StatusOr<DetachedView> DetachView(const fs::path& view) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(view, ec);
  if (ec) {
    return FailedPreconditionError("the view " + view.string() +
                                   " is not a symlink to the staging directory: " + ec.message());
  }
  DetachedView out;
  out.staging = target.is_absolute() ? target : (view.parent_path() / target).lexically_normal();
  out.detached = view.parent_path() / "detached";
  if (out.staging == out.detached) {
    return FailedPreconditionError("the view " + view.string() +
                                   " is already detached (an earlier drive of this pod); its "
                                   "staging directory is unknown");
  }
  if (::mkdir(out.detached.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "mkdir " + out.detached.string());
  }
  KC_RETURN_IF_ERROR(ReplaceSymlink(out.detached, view));
  return out;
}

StatusOr<TreeListing> ListTree(const fs::path& dir) {
  TreeListing out;
  std::vector<fs::path> pending = {dir};
  while (!pending.empty()) {
    const fs::path at = std::move(pending.back());
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(at, ec);
    // A subdirectory removed while listed (a compiler's temp directory) is
    // left out: the next look tells whether the tree still changes.
    if (ec && at != dir && ec == std::errc::no_such_file_or_directory) continue;
    if (ec) return ErrnoStatus(ec.value(), "list " + at.string());
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) != 0) {
        if (errno == ENOENT) continue;
        return ErrnoStatus(errno, "lstat " + it->path().string());
      }
      out.push_back({it->path().lexically_relative(dir).string(), static_cast<uint64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     S_ISDIR(st.st_mode)});
      if (S_ISDIR(st.st_mode)) pending.push_back(it->path());
    }
    if (ec) return ErrnoStatus(ec.value(), "list " + at.string());
  }
  std::sort(out.begin(), out.end(),
            [](const ListedEntry& a, const ListedEntry& b) { return a.path < b.path; });
  return out;
}

Status WaitSettled(const fs::path& dir, std::chrono::milliseconds settle,
                   DriveClock::time_point deadline) {
  KC_ASSIGN_OR_RETURN(TreeListing before, ListTree(dir));
  while (true) {
    if (DriveClock::now() + settle > deadline) {
      return DeadlineExceededError("the staging directory " + dir.string() +
                                   " was still changing when --timeout ran out");
    }
    std::this_thread::sleep_for(settle);
    KC_ASSIGN_OR_RETURN(TreeListing after, ListTree(dir));
    if (IsSettled(before, after)) return OkStatus();
    before = std::move(after);
  }
}

}  // namespace kc::initwarm

// The staging side of `initwarm drive` (drive.h): detach the view from the
// staging directory once the server is warm, then wait until nothing in the
// staging tree changes any more.
#pragma once

#include <chrono>
#include <filesystem>

#include "base/status.h"
#include "initwarm/warmup/drive_rules.h"

namespace kc::initwarm {

struct DetachedView {
  std::filesystem::path staging;   // where the view pointed: the staging directory
  std::filesystem::path detached;  // where it points now
};

// Points the symlink `view` at `<dirname of view>/detached` (created empty
// when missing), atomically (symlink to a temp name, rename over), so what
// the still-running server writes through the view from now on lands
// outside the staging directory. FailedPrecondition when `view` is not a
// symlink, or already points at the detached directory.
StatusOr<DetachedView> DetachView(const std::filesystem::path& view);

// Every entry below `dir` (symlinks not followed) with its size and
// modification time, sorted by path; an entry that vanishes while listed is
// left out.
StatusOr<TreeListing> ListTree(const std::filesystem::path& dir);

// Lists `dir` every `settle` until two looks in a row are the same
// (IsSettled). DeadlineExceeded when `deadline` passes first.
Status WaitSettled(const std::filesystem::path& dir, std::chrono::milliseconds settle,
                   DriveClock::time_point deadline);

}  // namespace kc::initwarm

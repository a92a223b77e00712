// CopyCache: the Copy consume mode's copy of a published cache into the
// pod's own (emptyDir) directory.
//
// Copies the files and symlinks `m` lists (plus manifest.json and READY)
// from `src` to a new directory `dst`: the directories first, then the
// files, largest first, on `threads` copiers (0: DefaultHashThreads(), as
// hashing), so that per-file latency (a network volume's round trips, a cold
// disk) overlaps; `cp -a` copies on one thread.
// The source is volume content, hostile until proven otherwise: every file
// is opened with SafeDir::OpenFile (a regular file with one name, no symlink
// followed, never a FIFO or device, never blocking) and exactly its listed
// size is copied (a file shorter or longer than listed is DataLoss naming
// it); links are recreated from the manifest (their targets checked to stay
// inside the cache), never read through. A refusal of what is on the volume
// is InvalidArgument or DataLoss naming the file.
#pragma once

#include <filesystem>

#include "base/status.h"
#include "core/manifest.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

Status CopyCache(const SafeDir& src, const std::filesystem::path& dst, const core::Manifest& m,
                 int threads = 0);
// `src` a trusted path.
Status CopyCache(const std::filesystem::path& src, const std::filesystem::path& dst,
                 const core::Manifest& m, int threads = 0);

}  // namespace kc::initwarm

// Walk: list a cache directory tree without following symlinks.
//
// Returns every regular file (relative path, size) and every symlink
// (relative path, target) under `root`, sorted by path. Refuses, with
// InvalidArgument naming the path: a symlink whose target leaves the cache
// (core::CheckSymlinkTarget), a special file (FIFO, socket, device), and a
// name that fails core::CheckRelativePath. `skip_top` names top-level
// entries to leave out (manifest.json, READY and their temp files).
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/manifest.h"

namespace kc::initwarm {

struct WalkedFile {
  std::string path;
  std::uint64_t size = 0;
};

struct WalkResult {
  std::vector<WalkedFile> files;
  std::vector<core::ManifestLink> links;
  std::vector<std::string> dirs;  // relative, parents before children
};

// Top-level names a cache may hold that are not content: manifest.json,
// READY and the temp names seal writes them under.
bool IsReservedTopLevelName(std::string_view name);

StatusOr<WalkResult> WalkCache(const std::filesystem::path& root);

}  // namespace kc::initwarm

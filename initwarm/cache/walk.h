// Walk: list a cache directory tree without following symlinks.
//
// Returns every regular file (relative path, size) and every symlink
// (relative path, target) under `root`, sorted by path. Each directory is
// opened beneath its parent with initwarm/fs/safe_file.h (no symlink followed,
// none left). Refuses, with InvalidArgument naming the path: a symlink whose
// target leaves the cache (core::CheckSymlinkTarget), a special file (FIFO,
// socket, device), a regular file with more than one hard link (it may share
// its bytes with a file outside the cache), and a name that fails
// core::CheckRelativePath (not UTF-8, among others). The top-level reserved
// names (manifest.json, READY and their temp files) are left out.
// Bounded: more than `max_entries` files, symlinks and directories in all is
// refused (InvalidArgument naming the bound) as soon as a directory listing
// passes it, so a tree of millions of entries costs no more than the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/manifest.h"
#include "initwarm/fs/safe_file.h"

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

// A published cache holds at most core::kMaxManifestEntries files and
// links; its directories are fewer than its files.
inline constexpr std::size_t kMaxWalkEntries = 2 * core::kMaxManifestEntries;

StatusOr<WalkResult> WalkCache(const SafeDir& root, std::size_t max_entries = kMaxWalkEntries);
// `root` is a trusted path (SafeDir::OpenTrusted).
StatusOr<WalkResult> WalkCache(const std::filesystem::path& root,
                               std::size_t max_entries = kMaxWalkEntries);

}  // namespace kc::initwarm

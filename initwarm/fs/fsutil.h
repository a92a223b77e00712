// fsutil: the small POSIX file operations the cache data path is built
// from, with errors as Status (the message names the path and the errno
// text; ENOSPC/EDQUOT become ResourceExhausted, ENOENT NotFound, EEXIST
// AlreadyExists, EACCES/EPERM/EROFS PermissionDenied).
//
// Durability: WriteFileDurable writes "<path>.tmp.<pid>", fsyncs it, renames
// it over <path> and fsyncs the directory, so a crash leaves the old content
// or the new one, never a torn file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::initwarm {

Status ErrnoStatus(int err, std::string_view what);

StatusOr<std::string> ReadFileToString(const std::filesystem::path& path,
                                       std::uint64_t max_bytes = 64ull << 20);
Status WriteFileDurable(const std::filesystem::path& path, std::string_view content);
// Writes without the rename dance (new files in a private directory); fsyncs.
Status WriteNewFile(const std::filesystem::path& path, std::string_view content);

Status FsyncPath(const std::filesystem::path& path);  // file or directory
Status MkdirAll(const std::filesystem::path& path);
// rename(2); the error names both paths.
Status Rename(const std::filesystem::path& from, const std::filesystem::path& to);
Status RemoveTree(const std::filesystem::path& path);
// Points `link` at absolute(`target`) atomically (symlink to a temp name,
// rename over).
// Refuses when `link` is a real, non-empty directory.
Status ReplaceSymlink(const std::filesystem::path& target, const std::filesystem::path& link);

bool Exists(const std::filesystem::path& path);           // lstat succeeds
bool IsRealDirectory(const std::filesystem::path& path);  // a directory, not a symlink
// mtime in unix seconds, or -1.
std::int64_t MtimeSeconds(const std::filesystem::path& path);

std::string Hostname();
// /proc/sys/kernel/random/boot_id, or "" when unreadable.
std::string BootId();
bool PidAlive(std::int64_t pid);
std::int64_t NowSeconds();
std::int64_t NowMillis();
// 16 random hex digits.
std::string RandomHex();

}  // namespace kc::initwarm

// SafeFile: the one way initwarm opens a file on the cache volume.
//
// Everything on the volume may have been written by someone hostile (any
// pod or Job that mounts it; docs/security.md), so a reader never follows a
// symlink, never opens a file that is not what it expects, and never reads
// more than it bounds:
//   - a SafeDir is an open directory, the anchor: a trusted path (the
//     --root the pod spec gives, followed as the kernel resolves it), or a
//     directory opened beneath another SafeDir;
//   - every path below an anchor is relative (core::CheckRelativePath) and
//     resolved without following any symlink in any component and without
//     leaving the anchor: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
//     where the kernel has it, else a walk that opens one component at a
//     time with O_NOFOLLOW;
//   - the last component is looked at first (O_PATH, which opens nothing)
//     and opened for reading only when it is a regular file (with one name,
//     when asked: a hard link may share a file with something outside the
//     cache); the read open is O_NONBLOCK | O_NOCTTY and its fstat must
//     name the same inode, so a FIFO, socket or device swapped in between
//     is refused, never waited on;
//   - ReadAll refuses a file larger than its bound before reading a byte.
// A refusal is InvalidArgument naming the path and what it is ("is a
// symlink", "is a FIFO", "has 2 hard links"); a missing entry is NotFound.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::initwarm {

enum class EntryKind {
  kRegular,
  kDirectory,
  kSymlink,
  kFifo,
  kSocket,
  kCharDevice,
  kBlockDevice,
  kUnknown
};
EntryKind KindOfMode(mode_t mode);
// "regular file", "directory", "symlink", "FIFO", "socket", "character
// device", "block device", "unknown file type".
std::string_view EntryKindName(EntryKind k);

// How paths are resolved below an anchor. kAuto: openat2 where the kernel
// has it (ENOSYS, or EPERM from a seccomp filter, fall back to the walk);
// kWalk: always the component walk (tests compare the two).
enum class Resolve { kAuto, kWalk };

struct EntryInfo {
  EntryKind kind = EntryKind::kUnknown;
  std::uint64_t size = 0;
  std::uint64_t links = 1;  // st_nlink
  std::int64_t mtime = 0;
};

// An owned descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.Release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int Release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

class SafeDir {
 public:
  // Opens a trusted directory path (symlinks in it are followed: it is the
  // mount path the pod spec names, not volume content).
  static StatusOr<SafeDir> OpenTrusted(const std::filesystem::path& path,
                                       Resolve resolve = Resolve::kAuto);

  // `dir` opened beneath the trusted `anchor` (no symlink followed from
  // the anchor down) when it lies under it lexically; otherwise `dir` is
  // itself trusted. An empty anchor: `dir` is trusted.
  static StatusOr<SafeDir> OpenUnder(const std::filesystem::path& anchor,
                                     const std::filesystem::path& dir,
                                     Resolve resolve = Resolve::kAuto);

  // The directory `rel` beneath this one, no symlink followed.
  StatusOr<SafeDir> Dir(std::string_view rel) const;
  // The regular file `rel` beneath this one, open for reading. With
  // `single_link`, a file with more than one hard link is refused.
  StatusOr<UniqueFd> OpenFile(std::string_view rel, bool single_link = false) const;
  // Reads the regular file `rel` whole; refuses one larger than `max_bytes`
  // (by its size before reading, and by what it reads).
  StatusOr<std::string> ReadFile(std::string_view rel, std::uint64_t max_bytes,
                                 bool single_link = false) const;
  // What `rel` is, without following it (its parents are not followed
  // either). NotFound when absent.
  StatusOr<EntryInfo> Stat(std::string_view rel) const;
  // A symlink's target (bounded to 4096 bytes).
  StatusOr<std::string> ReadLink(std::string_view rel) const;
  // Removes the entry `rel` (a directory with everything under it) without
  // following any symlink: a link is removed, never what it points at.
  Status Remove(std::string_view rel) const;

  int fd() const { return fd_.get(); }
  // The path it was opened as, for messages (".../v1/<fp>/triton").
  const std::filesystem::path& path() const { return path_; }
  Resolve resolve() const { return resolve_; }

 private:
  SafeDir(UniqueFd fd, std::filesystem::path path, Resolve r)
      : fd_(std::move(fd)), path_(std::move(path)), resolve_(r) {}
  // The descriptor of the directory holding `rel`'s last component (named
  // in *last): this one's own, or one opened beneath it into *holder.
  StatusOr<int> ParentFd(std::string_view rel, std::string* last, UniqueFd* holder) const;
  StatusOr<UniqueFd> OpenBeneath(std::string_view rel, int flags) const;
  std::string Name(std::string_view rel) const;

  UniqueFd fd_;
  std::filesystem::path path_;
  Resolve resolve_ = Resolve::kAuto;
};

// Reads a whole open regular file, at most `max_bytes` (more is refused,
// naming `what`).
StatusOr<std::string> ReadAllFd(int fd, std::uint64_t max_bytes, std::string_view what);

// One path, no anchor: `path`'s parent is trusted and its last component is
// opened as SafeDir::ReadFile would (for lock files and other single files on
// the volume whose directory was checked by its caller).
StatusOr<std::string> ReadFileNoFollow(const std::filesystem::path& path, std::uint64_t max_bytes);

// Whether this kernel answers openat2 (tests say which path they ran).
bool HaveOpenat2();

}  // namespace kc::initwarm

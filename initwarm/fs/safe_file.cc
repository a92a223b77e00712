#include "initwarm/fs/safe_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/layout.h"
#include "initwarm/fs/fsutil.h"

#ifndef SYS_openat2
#define SYS_openat2 437  // the same number on every architecture
#endif

namespace {
// linux/openat2.h, spelled out: libc headers may not have it (the ABI is
// fixed: extensible struct, size passed with the call).
struct OpenHow {
  std::uint64_t flags;
  std::uint64_t mode;
  std::uint64_t resolve;
};
constexpr std::uint64_t kResolveNoMagiclinks = 0x02;
constexpr std::uint64_t kResolveNoSymlinks = 0x04;
constexpr std::uint64_t kResolveBeneath = 0x08;
}  // namespace

namespace kc::initwarm {

namespace fs = std::filesystem;

EntryKind KindOfMode(mode_t mode) {
  if (S_ISREG(mode)) return EntryKind::kRegular;
  if (S_ISDIR(mode)) return EntryKind::kDirectory;
  if (S_ISLNK(mode)) return EntryKind::kSymlink;
  if (S_ISFIFO(mode)) return EntryKind::kFifo;
  if (S_ISSOCK(mode)) return EntryKind::kSocket;
  if (S_ISCHR(mode)) return EntryKind::kCharDevice;
  if (S_ISBLK(mode)) return EntryKind::kBlockDevice;
  return EntryKind::kUnknown;
}

std::string_view EntryKindName(EntryKind k) {
  switch (k) {
    case EntryKind::kRegular:
      return "regular file";
    case EntryKind::kDirectory:
      return "directory";
    case EntryKind::kSymlink:
      return "symlink";
    case EntryKind::kFifo:
      return "FIFO";
    case EntryKind::kSocket:
      return "socket";
    case EntryKind::kCharDevice:
      return "character device";
    case EntryKind::kBlockDevice:
      return "block device";
    case EntryKind::kUnknown:
      break;
  }
  return "unknown file type";
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.Release();
  }
  return *this;
}

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kReadFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

// -1: not known yet, 0: no openat2 here, 1: openat2 works.
std::atomic<int> g_openat2{-1};

int Openat2(int dirfd, const char* path, int flags) {
  OpenHow how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.resolve = kResolveBeneath | kResolveNoSymlinks | kResolveNoMagiclinks;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));
}

Status Refuse(const std::string& name, std::string_view why) {
  return InvalidArgumentError(name + " " + std::string(why) +
                              "; a cache file is read only as a regular file, never through a "
                              "symlink, a special file or a hard link shared with another file");
}

std::string Describe(EntryKind k) {
  std::string n(EntryKindName(k));
  return (n[0] == 'u' ? "is an " : "is a ") + n;
}

// Why `name` (one component in `dirfd`) could not be opened as `want`.
Status Diagnose(int dirfd, const std::string& comp, const std::string& shown, int err,
                EntryKind want) {
  struct stat st {};
  if (::fstatat(dirfd, comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    EntryKind k = KindOfMode(st.st_mode);
    if (k != want) {
      return Refuse(shown, Describe(k) + ", not a " + std::string(EntryKindName(want)));
    }
  }
  return ErrnoStatus(err, "open " + shown);
}

std::vector<std::string> Components(std::string_view rel) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    out.emplace_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

bool HaveOpenat2() {
  if (g_openat2.load() < 0) {
    int fd = Openat2(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    // ENOSYS: an older kernel; EPERM: a seccomp filter that does not know it.
    const bool missing = fd < 0 && (errno == ENOSYS || errno == EPERM);
    if (fd >= 0) ::close(fd);
    g_openat2 = missing ? 0 : 1;
  }
  return g_openat2.load() == 1;
}

StatusOr<SafeDir> SafeDir::OpenTrusted(const fs::path& path, Resolve resolve) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open directory " + path.string());
  return SafeDir(UniqueFd(fd), path, resolve);
}

StatusOr<SafeDir> SafeDir::OpenUnder(const fs::path& anchor, const fs::path& dir, Resolve resolve) {
  if (!anchor.empty()) {
    const fs::path rel = dir.lexically_normal().lexically_relative(anchor.lexically_normal());
    if (!rel.empty() && rel != "." && core::CheckRelativePath(rel.string()).ok()) {
      KC_ASSIGN_OR_RETURN(SafeDir a, OpenTrusted(anchor, resolve));
      return a.Dir(rel.string());
    }
  }
  return OpenTrusted(dir, resolve);
}

std::string SafeDir::Name(std::string_view rel) const { return (path_ / rel).string(); }

StatusOr<UniqueFd> SafeDir::OpenBeneath(std::string_view rel, int flags) const {
  KC_RETURN_IF_ERROR(core::CheckRelativePath(rel));
  const std::string r(rel);
  if (resolve_ == Resolve::kAuto && HaveOpenat2()) {
    int fd = Openat2(fd_.get(), r.c_str(), flags);
    if (fd >= 0) return UniqueFd(fd);
    // ELOOP/EXDEV/ENOTDIR: a symlink or a non-directory on the way; the
    // walk names which. ENOSYS/EPERM: a filter refused the call.
    if (errno == ENOENT) return ErrnoStatus(errno, "open " + Name(rel));
    if (errno == ENOSYS || errno == EPERM) g_openat2 = 0;
  }
  // The checked walk: one component at a time, none followed.
  const std::vector<std::string> comps = Components(rel);
  UniqueFd cur;
  std::string shown = path_.string();
  for (size_t i = 0; i < comps.size(); ++i) {
    const bool last = i + 1 == comps.size();
    const int at = i == 0 ? fd_.get() : cur.get();
    const int f = last ? (flags | O_NOFOLLOW | O_CLOEXEC) : kDirFlags;
    shown += "/" + comps[i];
    int fd = ::openat(at, comps[i].c_str(), f);
    if (fd < 0) {
      const int err = errno;
      if (err == ENOENT) return ErrnoStatus(err, "open " + shown);
      return Diagnose(
          at, comps[i], shown, err,
          last && (flags & O_DIRECTORY) == 0 ? EntryKind::kRegular : EntryKind::kDirectory);
    }
    cur = UniqueFd(fd);
  }
  return cur;
}

StatusOr<SafeDir> SafeDir::Dir(std::string_view rel) const {
  KC_ASSIGN_OR_RETURN(UniqueFd fd, OpenBeneath(rel, kDirFlags));
  return SafeDir(std::move(fd), path_ / rel, resolve_);
}

StatusOr<int> SafeDir::ParentFd(std::string_view rel, std::string* last, UniqueFd* holder) const {
  KC_RETURN_IF_ERROR(core::CheckRelativePath(rel));
  const size_t slash = rel.rfind('/');
  *last = std::string(slash == std::string_view::npos ? rel : rel.substr(slash + 1));
  if (slash == std::string_view::npos) return fd_.get();
  auto opened = OpenBeneath(rel.substr(0, slash), kDirFlags);
  if (!opened.ok()) {
    // A missing directory on the way: name the entry asked for.
    if (IsNotFound(opened.status())) return ErrnoStatus(ENOENT, "open " + Name(rel));
    return opened.status();
  }
  *holder = std::move(opened).value();
  return holder->get();
}

StatusOr<EntryInfo> SafeDir::Stat(std::string_view rel) const {
  std::string last;
  UniqueFd holder;
  KC_ASSIGN_OR_RETURN(const int parent, ParentFd(rel, &last, &holder));
  struct stat st {};
  if (::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "lstat " + Name(rel));
  }
  return EntryInfo{KindOfMode(st.st_mode), static_cast<std::uint64_t>(st.st_size),
                   static_cast<std::uint64_t>(st.st_nlink),
                   static_cast<std::int64_t>(st.st_mtim.tv_sec)};
}

StatusOr<UniqueFd> SafeDir::OpenFile(std::string_view rel, bool single_link) const {
  std::string last;
  UniqueFd holder;
  KC_ASSIGN_OR_RETURN(const int parent, ParentFd(rel, &last, &holder));
  // Look before opening: a FIFO or a device is never opened at all.
  struct stat before {};
  if (::fstatat(parent, last.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "lstat " + Name(rel));
  }
  auto check = [&](const struct stat& st) -> Status {
    EntryKind k = KindOfMode(st.st_mode);
    if (k != EntryKind::kRegular) return Refuse(Name(rel), Describe(k));
    if (single_link && st.st_nlink > 1) {
      return Refuse(Name(rel), "has " + std::to_string(st.st_nlink) +
                                   " hard links (a cache file has exactly one name)");
    }
    return OkStatus();
  };
  KC_RETURN_IF_ERROR(check(before));
  int fd = ::openat(parent, last.c_str(), kReadFlags);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return Refuse(Name(rel), "is a symlink (swapped in while opening)");
    return ErrnoStatus(err, "open " + Name(rel));
  }
  UniqueFd out(fd);
  struct stat after {};
  if (::fstat(fd, &after) != 0) return ErrnoStatus(errno, "fstat " + Name(rel));
  KC_RETURN_IF_ERROR(check(after));
  if (after.st_ino != before.st_ino || after.st_dev != before.st_dev) {
    return Refuse(Name(rel), "was replaced while it was opened");
  }
  return out;
}

StatusOr<std::string> ReadAllFd(int fd, std::uint64_t max_bytes, std::string_view what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat " + std::string(what));
  auto too_large = [&] {
    return FailedPreconditionError(std::string(what) + " is larger than " +
                                   std::to_string(max_bytes) + " bytes, the most read of it");
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large();
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read " + std::string(what));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return too_large();
  }
  return out;
}

StatusOr<std::string> SafeDir::ReadFile(std::string_view rel, std::uint64_t max_bytes,
                                        bool single_link) const {
  KC_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(rel, single_link));
  return ReadAllFd(fd.get(), max_bytes, Name(rel));
}

StatusOr<std::string> SafeDir::ReadLink(std::string_view rel) const {
  std::string last;
  UniqueFd holder;
  KC_ASSIGN_OR_RETURN(const int parent, ParentFd(rel, &last, &holder));
  std::string target(4097, '\0');
  ssize_t n = ::readlinkat(parent, last.c_str(), target.data(), target.size());
  if (n < 0) return ErrnoStatus(errno, "readlink " + Name(rel));
  if (static_cast<size_t>(n) >= target.size()) {
    return InvalidArgumentError("symlink " + Name(rel) + " has a target longer than 4096 bytes");
  }
  target.resize(static_cast<size_t>(n));
  return target;
}

namespace {

// Empties the directory `fd` (owned by the caller) without following links.
Status EmptyDir(int fd, const std::string& shown) {
  int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return ErrnoStatus(errno, "dup " + shown);
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    ::close(dup);
    return ErrnoStatus(errno, "read directory " + shown);
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  for (const auto& n : names) {
    struct stat st {};
    if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return ErrnoStatus(errno, "lstat " + shown + "/" + n);
    }
    if (S_ISDIR(st.st_mode)) {
      int sub = ::openat(fd, n.c_str(), kDirFlags);
      if (sub < 0) return ErrnoStatus(errno, "open " + shown + "/" + n);
      UniqueFd owned(sub);
      KC_RETURN_IF_ERROR(EmptyDir(sub, shown + "/" + n));
      if (::unlinkat(fd, n.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return ErrnoStatus(errno, "rmdir " + shown + "/" + n);
      }
    } else if (::unlinkat(fd, n.c_str(), 0) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "unlink " + shown + "/" + n);
    }
  }
  return OkStatus();
}

}  // namespace

Status SafeDir::Remove(std::string_view rel) const {
  std::string last;
  UniqueFd holder;
  KC_ASSIGN_OR_RETURN(const int parent, ParentFd(rel, &last, &holder));
  struct stat st {};
  if (::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return OkStatus();
    return ErrnoStatus(errno, "lstat " + Name(rel));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent, last.c_str(), 0) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "unlink " + Name(rel));
    }
    return OkStatus();
  }
  int sub = ::openat(parent, last.c_str(), kDirFlags);
  if (sub < 0) return ErrnoStatus(errno, "open " + Name(rel));
  UniqueFd owned(sub);
  KC_RETURN_IF_ERROR(EmptyDir(sub, Name(rel)));
  if (::unlinkat(parent, last.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "rmdir " + Name(rel));
  }
  return OkStatus();
}

StatusOr<std::string> ReadFileNoFollow(const fs::path& path, std::uint64_t max_bytes) {
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  KC_ASSIGN_OR_RETURN(SafeDir dir, SafeDir::OpenTrusted(parent));
  return dir.ReadFile(path.filename().string(), max_bytes);
}

}  // namespace kc::initwarm

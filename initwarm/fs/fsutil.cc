#include "initwarm/fs/fsutil.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <system_error>
#include <vector>

#include "core/security_context.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

Status ErrnoStatus(int err, std::string_view what) {
  std::string msg = std::string(what) + ": " + std::strerror(err);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return ResourceExhaustedError(msg + " (the volume is full; free space or grow the claim)");
    case ENOENT:
      return NotFoundError(msg);
    case EEXIST:
    case ENOTEMPTY:
      return AlreadyExistsError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return PermissionDeniedError(msg);
    default:
      return InternalError(msg);
  }
}

StatusOr<std::string> ReadFileToString(const fs::path& path, std::uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open " + path.string());
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return ErrnoStatus(e, "read " + path.string());
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return FailedPreconditionError(path.string() + " is larger than " +
                                     std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

namespace {

Status WriteAll(int fd, std::string_view content, const fs::path& path) {
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write " + path.string());
    }
    off += static_cast<size_t>(n);
  }
  return OkStatus();
}

Status WriteAndSync(const fs::path& path, std::string_view content, int flags) {
  int fd = ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "create " + path.string());
  Status s = WriteAll(fd, content, path);
  if (s.ok() && ::fsync(fd) != 0) s = ErrnoStatus(errno, "fsync " + path.string());
  if (::close(fd) != 0 && s.ok()) s = ErrnoStatus(errno, "close " + path.string());
  return s;
}

}  // namespace

Status WriteNewFile(const fs::path& path, std::string_view content) {
  return WriteAndSync(path, content, O_CREAT | O_TRUNC);
}

Status WriteFileDurable(const fs::path& path, std::string_view content) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  Status s = WriteAndSync(tmp, content, O_CREAT | O_TRUNC);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(e, "rename " + tmp.string() + " -> " + path.string());
  }
  return FsyncPath(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

Status FsyncPath(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open " + path.string() + " for fsync");
  Status s;
  // EINVAL: the filesystem does not support fsync on this object (some
  // network filesystems on directories); nothing more can be done.
  if (::fsync(fd) != 0 && errno != EINVAL) s = ErrnoStatus(errno, "fsync " + path.string());
  ::close(fd);
  return s;
}

Status MkdirAll(const fs::path& path) {
  if (path.empty()) return OkStatus();  // the parent of a bare relative name: "."
  std::error_code ec;
  // The components that do not exist yet, outermost first: each is created
  // core::kCacheDirMode (setgid, group-writable; docs/permissions.md).
  std::vector<fs::path> missing;
  for (fs::path p = path; !p.empty(); p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, ec))) break;
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0775) != 0) {
      if (errno == EEXIST) continue;  // a concurrent writer made it
      return ErrnoStatus(errno, "mkdir -p " + path.string());
    }
    // mkdir drops the setgid bit and applies the umask; chmod sets both. A
    // caller outside the directory's group gets it without setgid (no error).
    if (::chmod(it->c_str(), core::kCacheDirMode) != 0) {
      return ErrnoStatus(errno, "chmod " + it->string());
    }
  }
  if (!fs::is_directory(path, ec)) {
    return FailedPreconditionError(path.string() + " exists and is not a directory");
  }
  return OkStatus();
}

Status Rename(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(errno, "rename " + from.string() + " -> " + to.string());
  }
  return OkStatus();
}

Status RemoveTree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return ErrnoStatus(ec.value(), "remove " + path.string());
  return OkStatus();
}

Status ReplaceSymlink(const fs::path& target, const fs::path& link) {
  struct stat st {};
  if (::lstat(link.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::error_code ec;
    if (!fs::is_empty(link, ec) || ec) {
      return FailedPreconditionError(
          "the view " + link.string() +
          " is a non-empty directory; refusing to replace it (something wrote there "
          "before initwarm ran: remove it, or use an emptyDir for "
          "its parent)");
    }
    if (::rmdir(link.c_str()) != 0) return ErrnoStatus(errno, "rmdir " + link.string());
  }
  fs::path tmp = link;
  tmp += ".tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  const fs::path abs = fs::absolute(target).lexically_normal();
  if (::symlink(abs.c_str(), tmp.c_str()) != 0) {
    return ErrnoStatus(errno, "symlink " + tmp.string() + " -> " + target.string());
  }
  if (::rename(tmp.c_str(), link.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(e, "rename " + tmp.string() + " -> " + link.string());
  }
  return OkStatus();
}

bool Exists(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool IsRealDirectory(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::int64_t MtimeSeconds(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return -1;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec);
}

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string BootId() {
  auto s = ReadFileToString("/proc/sys/kernel/random/boot_id", 4096);
  if (!s.ok()) return "";
  std::string v = *s;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

bool PidAlive(std::int64_t pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno == EPERM;
}

std::int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string RandomHex() {
  std::random_device rd;
  std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[v & 0xf];
    v >>= 4;
  }
  return out;
}

}  // namespace kc::initwarm

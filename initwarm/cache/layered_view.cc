#include "initwarm/cache/layered_view.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "core/layout.h"
#include "core/security_context.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status Refuse(const fs::path& p, std::string_view what) {
  return FailedPreconditionError(p.string() + " in the published cache " + std::string(what) +
                                 ": refusing to build a view that follows it (re-warm the "
                                 "cache; a sealed cache holds only directories, regular files "
                                 "and the symlinks its manifest lists)");
}

// lstat-checks that `p` is a real directory (`dir`) or a regular file,
// not a symlink to one.
Status CheckNoFollow(const fs::path& p, bool dir) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return ErrnoStatus(errno, "lstat " + p.string());
  const char* want = dir ? "a directory" : "a regular file";
  if (S_ISLNK(st.st_mode)) return Refuse(p, std::string("is a symlink where ") + want + " belongs");
  if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return Refuse(p, std::string("is not ") + want);
  }
  return OkStatus();
}

// Copies the listed file `f` of the published cache to the new file `dst`,
// group-writable like a Copy-mode copy (the app rewrites it in place). The
// file is opened through the safe reader (no symlink followed, a regular
// file with one name) and must have its listed size: no more than that is
// ever read.
Status CopyListed(const SafeDir& published, const core::ManifestFile& f, const fs::path& dst) {
  const fs::path src = published.path() / f.path;
  KC_RETURN_IF_ERROR(CheckNoFollow(src, /*dir=*/false));  // names what it is instead
  auto in = published.OpenFile(f.path, /*single_link=*/true);
  if (!in.ok())
    return Refuse(src, "cannot be read as a listed file (" + in.status().message() + ")");
  struct stat st {};
  if (::fstat(in->get(), &st) != 0) return ErrnoStatus(errno, "fstat " + src.string());
  if (static_cast<std::uint64_t>(st.st_size) != f.size) {
    return Refuse(src, "has " + std::to_string(st.st_size) + " bytes, its manifest lists " +
                           std::to_string(f.size));
  }
  Fd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                core::kCopyFileMode));
  if (out.get() < 0) return ErrnoStatus(errno, "create " + dst.string());
  char buf[1 << 16];
  std::uint64_t left = f.size;
  for (;;) {
    // One byte past the listed size is asked for, so a file that grew is seen.
    const size_t want = static_cast<size_t>(std::min<std::uint64_t>(sizeof(buf), left + 1));
    ssize_t n = ::read(in->get(), buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "read " + src.string());
    if (n == 0) break;
    if (static_cast<std::uint64_t>(n) > left) return Refuse(src, "grew past its listed size");
    left -= static_cast<std::uint64_t>(n);
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(out.get(), buf + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return ErrnoStatus(errno, "write " + dst.string());
      off += w;
    }
  }
  if (left != 0) return Refuse(src, "shrank below its listed size");
  // open() applies the umask; the app containers (the cache group) must be
  // able to rewrite the copy (docs/permissions.md).
  if (::fchmod(out.get(), core::kCopyFileMode) != 0) {
    return ErrnoStatus(errno, "chmod " + dst.string());
  }
  return OkStatus();
}

}  // namespace

bool CopiedInPlace(std::string_view rel) { return rel.starts_with("nv/"); }

Status BuildLayeredTree(const fs::path& published, const core::Manifest& m, const fs::path& dst) {
  const fs::path src = fs::absolute(published).lexically_normal();
  KC_RETURN_IF_ERROR(CheckNoFollow(src, /*dir=*/true));
  // v1/<fp> itself opened beneath v1/ without following a symlink: the
  // files copied in place are read through it.
  KC_ASSIGN_OR_RETURN(SafeDir published_dir, SafeDir::OpenUnder(src.parent_path(), src));
  if (Exists(dst)) return AlreadyExistsError(dst.string() + " already exists");
  KC_RETURN_IF_ERROR(MkdirAll(dst));
  for (auto dir : core::kFrameworkDirs) KC_RETURN_IF_ERROR(MkdirAll(dst / dir));
  std::set<std::string> checked;  // published directories already lstat-checked
  auto check_parents = [&](const std::string& rel) -> Status {
    fs::path sub;
    const fs::path parent = fs::path(rel).parent_path();
    for (const auto& part : parent) {
      sub /= part;
      if (!checked.insert(sub.string()).second) continue;
      KC_RETURN_IF_ERROR(CheckNoFollow(src / sub, /*dir=*/true));
    }
    return OkStatus();
  };
  for (const auto& f : m.files) {
    KC_RETURN_IF_ERROR(core::CheckRelativePath(f.path));
    KC_RETURN_IF_ERROR(check_parents(f.path));
    const fs::path from = src / f.path;
    const fs::path to = dst / f.path;
    KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
    if (CopiedInPlace(f.path)) {
      KC_RETURN_IF_ERROR(CopyListed(published_dir, f, to));
      continue;
    }
    KC_RETURN_IF_ERROR(CheckNoFollow(from, /*dir=*/false));
    std::error_code ec;
    fs::create_symlink(from, to, ec);
    if (ec) return ErrnoStatus(ec.value(), "symlink " + to.string());
  }
  for (const auto& l : m.links) {
    KC_RETURN_IF_ERROR(core::CheckSymlinkTarget(l.path, l.target));
    const fs::path to = dst / l.path;
    KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
    std::error_code ec;
    fs::create_symlink(l.target, to, ec);
    if (ec) return ErrnoStatus(ec.value(), "symlink " + to.string());
  }
  for (auto name : {core::kManifestFileName, core::kReadyFileName}) {
    KC_RETURN_IF_ERROR(CheckNoFollow(src / name, /*dir=*/false));
    std::error_code ec;
    fs::create_symlink(src / name, dst / name, ec);
    if (ec) return ErrnoStatus(ec.value(), "symlink " + (dst / name).string());
  }
  return OkStatus();
}

StatusOr<fs::path> BuildLayeredView(const fs::path& published, const core::Manifest& m,
                                    const fs::path& local_dir, const std::string& fingerprint) {
  KC_RETURN_IF_ERROR(MkdirAll(local_dir));
  std::error_code ec;
  for (fs::directory_iterator it(local_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().starts_with(kLayeredViewPrefix)) {
      KC_RETURN_IF_ERROR(RemoveTree(it->path()));
    }
  }
  if (ec) return ErrnoStatus(ec.value(), "list " + local_dir.string());
  fs::path tree = local_dir / (std::string(kLayeredViewPrefix) + fingerprint + "-" + RandomHex());
  Status s = BuildLayeredTree(published, m, tree);
  if (!s.ok()) {
    (void)RemoveTree(tree);
    return Status(s.code(), "cannot build the layered view: " + s.message());
  }
  return tree;
}

std::string_view NewEntryKindName(NewEntryKind k) {
  switch (k) {
    case NewEntryKind::kNew:
      return "New";
    case NewEntryKind::kChanged:
      return "Changed";
  }
  return "Unknown";
}

std::vector<NewEntry> NewEntriesAfterGate(const std::vector<TreeFile>& files,
                                          const core::Manifest& m) {
  std::map<std::string_view, const core::ManifestFile*> listed;
  for (const auto& f : m.files) listed.emplace(f.path, &f);
  std::vector<NewEntry> out;
  for (const auto& f : files) {
    auto it = listed.find(f.path);
    if (it == listed.end()) {
      out.push_back({f.path, NewEntryKind::kNew, f.size});
      continue;
    }
    if (CopiedInPlace(f.path) && f.size == it->second->size && f.sha256 == it->second->sha256) {
      continue;  // the copy, as published
    }
    out.push_back({f.path, NewEntryKind::kChanged, f.size});
  }
  std::sort(out.begin(), out.end(),
            [](const NewEntry& a, const NewEntry& b) { return a.path < b.path; });
  return out;
}

StatusOr<std::vector<TreeFile>> ScanLayeredTree(const fs::path& tree) {
  std::vector<TreeFile> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(tree, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status(ec);
    if (ec) break;
    if (!fs::is_regular_file(st)) continue;  // directories, symlinks (never followed)
    TreeFile f;
    f.path = it->path().lexically_relative(tree).generic_string();
    if (f.path == core::kManifestFileName || f.path == core::kReadyFileName) continue;
    if (CopiedInPlace(f.path)) {
      KC_ASSIGN_OR_RETURN(f.sha256, HashFile(it->path(), &f.size));
    } else {
      f.size = it->file_size(ec);
      if (ec) break;
    }
    out.push_back(std::move(f));
  }
  if (ec) return ErrnoStatus(ec.value(), "scan " + tree.string());
  return out;
}

StatusOr<std::vector<NewEntry>> ListNewEntries(const fs::path& tree, const core::Manifest& m) {
  KC_ASSIGN_OR_RETURN(std::vector<TreeFile> files, ScanLayeredTree(tree));
  return NewEntriesAfterGate(files, m);
}

}  // namespace kc::initwarm

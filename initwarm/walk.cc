#include "initwarm/walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/layout.h"
#include "initwarm/fsutil.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

bool IsReservedTopLevelName(std::string_view name) {
  if (name == core::kManifestFileName || name == core::kReadyFileName) return true;
  return name.starts_with(std::string(core::kManifestFileName) + ".tmp.") ||
         name.starts_with(std::string(core::kReadyFileName) + ".tmp.");
}

namespace {

Status WalkDir(const fs::path& root, const std::string& rel, WalkResult* out) {
  fs::path dir = rel.empty() ? root : root / rel;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus(errno, "open directory " + dir.string());
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  int e = errno;
  ::closedir(d);
  if (e != 0) return ErrnoStatus(e, "read directory " + dir.string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (rel.empty() && IsReservedTopLevelName(name)) continue;
    std::string child = rel.empty() ? name : rel + "/" + name;
    KC_RETURN_IF_ERROR(core::CheckRelativePath(child));
    fs::path full = root / child;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) return ErrnoStatus(errno, "lstat " + full.string());
    if (S_ISREG(st.st_mode)) {
      out->files.push_back({child, static_cast<std::uint64_t>(st.st_size)});
    } else if (S_ISDIR(st.st_mode)) {
      out->dirs.push_back(child);
      KC_RETURN_IF_ERROR(WalkDir(root, child, out));
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
      ssize_t n = ::readlink(full.c_str(), target.data(), target.size());
      if (n < 0) return ErrnoStatus(errno, "readlink " + full.string());
      target.resize(static_cast<size_t>(n));
      KC_RETURN_IF_ERROR(core::CheckSymlinkTarget(child, target));
      out->links.push_back({child, target});
    } else {
      return InvalidArgumentError("\"" + child +
                                  "\" is a special file (FIFO, socket or device); a cache "
                                  "holds only regular files, directories and inside symlinks");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<WalkResult> WalkCache(const fs::path& root) {
  WalkResult out;
  KC_RETURN_IF_ERROR(WalkDir(root, "", &out));
  std::sort(out.files.begin(), out.files.end(),
            [](const WalkedFile& a, const WalkedFile& b) { return a.path < b.path; });
  return out;
}

}  // namespace kc::initwarm

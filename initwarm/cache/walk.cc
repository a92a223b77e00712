#include "initwarm/cache/walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/layout.h"
#include "initwarm/fs/fsutil.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

bool IsReservedTopLevelName(std::string_view name) {
  if (name == core::kManifestFileName || name == core::kReadyFileName) return true;
  return name.starts_with(std::string(core::kManifestFileName) + ".tmp.") ||
         name.starts_with(std::string(core::kReadyFileName) + ".tmp.");
}

namespace {

Status TooMany(std::size_t max_entries) {
  return InvalidArgumentError("the tree holds more than " + std::to_string(max_entries) +
                              " files, symlinks and directories; a cache holds at most " +
                              std::to_string(core::kMaxManifestEntries) + " files and links");
}

Status WalkDir(const SafeDir& dir, const std::string& rel, std::size_t max_entries,
               WalkResult* out) {
  int dup = ::fcntl(dir.fd(), F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return ErrnoStatus(errno, "dup " + dir.path().string());
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    ::close(dup);
    return ErrnoStatus(errno, "open directory " + dir.path().string());
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    if (out->files.size() + out->links.size() + out->dirs.size() + names.size() >= max_entries) {
      ::closedir(d);
      return TooMany(max_entries);
    }
    names.emplace_back(n);
  }
  int e = errno;
  ::closedir(d);
  if (e != 0) return ErrnoStatus(e, "read directory " + dir.path().string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (rel.empty() && IsReservedTopLevelName(name)) continue;
    std::string child = rel.empty() ? name : rel + "/" + name;
    KC_RETURN_IF_ERROR(core::CheckRelativePath(child));
    KC_ASSIGN_OR_RETURN(EntryInfo st, dir.Stat(name));
    switch (st.kind) {
      case EntryKind::kRegular:
        if (st.links > 1) {
          return InvalidArgumentError("\"" + child + "\" has " + std::to_string(st.links) +
                                      " hard links; a cache file has exactly one name (a hard "
                                      "link may share its bytes with a file outside the cache)");
        }
        out->files.push_back({child, st.size});
        break;
      case EntryKind::kDirectory: {
        out->dirs.push_back(child);
        KC_ASSIGN_OR_RETURN(SafeDir sub, dir.Dir(name));
        KC_RETURN_IF_ERROR(WalkDir(sub, child, max_entries, out));
        break;
      }
      case EntryKind::kSymlink: {
        KC_ASSIGN_OR_RETURN(std::string target, dir.ReadLink(name));
        KC_RETURN_IF_ERROR(core::CheckSymlinkTarget(child, target));
        out->links.push_back({child, target});
        break;
      }
      default:
        return InvalidArgumentError("\"" + child + "\" is a special file (" +
                                    std::string(EntryKindName(st.kind)) +
                                    "); a cache holds only regular files, directories and "
                                    "inside symlinks");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<WalkResult> WalkCache(const SafeDir& root, std::size_t max_entries) {
  WalkResult out;
  KC_RETURN_IF_ERROR(WalkDir(root, "", max_entries, &out));
  std::sort(out.files.begin(), out.files.end(),
            [](const WalkedFile& a, const WalkedFile& b) { return a.path < b.path; });
  return out;
}

StatusOr<WalkResult> WalkCache(const fs::path& root, std::size_t max_entries) {
  KC_ASSIGN_OR_RETURN(SafeDir dir, SafeDir::OpenTrusted(root));
  return WalkCache(dir, max_entries);
}

}  // namespace kc::initwarm

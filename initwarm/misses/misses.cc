#include "initwarm/misses/misses.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "core/layout.h"
#include "initwarm/cache/verify.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

StatusOr<ViewKind> ViewKindOf(const fs::path& tree) {
  const std::string name = tree.filename().string();
  if (name.starts_with(kLayeredViewPrefix)) return ViewKind::kLayered;
  if (name.starts_with("copy-")) return ViewKind::kCopy;
  if (name == "cold") return ViewKind::kCold;
  return InvalidArgumentError(tree.string() +
                              " is not a tree `initwarm wait` builds (layered-*, copy-* or cold)");
}

std::vector<NewEntry> NewEntriesInCopy(const std::vector<TreeFile>& files,
                                       const core::Manifest& m) {
  std::map<std::string_view, const core::ManifestFile*> listed;
  for (const auto& f : m.files) listed.emplace(f.path, &f);
  std::vector<NewEntry> out;
  for (const TreeFile& f : files) {
    auto it = listed.find(f.path);
    if (it == listed.end()) {
      out.push_back({f.path, NewEntryKind::kNew, f.size});
    } else if (it->second->size != f.size ||
               (!f.sha256.empty() && it->second->sha256 != f.sha256)) {
      out.push_back({f.path, NewEntryKind::kChanged, f.size});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const NewEntry& a, const NewEntry& b) { return a.path < b.path; });
  return out;
}

namespace {

// The manifest the tree was built from: a copy's own, or (layered) the
// published one its manifest.json links to.
StatusOr<core::Manifest> TreeManifest(const fs::path& tree, ViewKind kind) {
  fs::path file = tree / core::kManifestFileName;
  if (kind == ViewKind::kLayered) {
    std::error_code ec;
    file = fs::read_symlink(file, ec);
    if (ec)
      return ErrnoStatus(ec.value(), "read the link " + (tree / core::kManifestFileName).string());
  }
  KC_ASSIGN_OR_RETURN(std::string text, ReadFileNoFollow(file, kMaxManifestBytes));
  return core::ParseManifest(text);
}

}  // namespace

StatusOr<ViewScan> ScanView(const fs::path& view) {
  std::error_code ec;
  ViewScan scan;
  scan.tree = fs::read_symlink(view, ec);
  if (ec) {
    return FailedPreconditionError(view.string() +
                                   " is not a gate's view (a symlink): " + ec.message());
  }
  KC_ASSIGN_OR_RETURN(scan.kind, ViewKindOf(scan.tree));
  core::Manifest m;
  if (scan.kind != ViewKind::kCold) {
    KC_ASSIGN_OR_RETURN(m, TreeManifest(scan.tree, scan.kind));
  }
  KC_ASSIGN_OR_RETURN(std::vector<TreeFile> files, ScanLayeredTree(scan.tree));
  scan.entries =
      scan.kind == ViewKind::kLayered ? NewEntriesAfterGate(files, m) : NewEntriesInCopy(files, m);
  return scan;
}

std::vector<core::RuntimeMiss> MissesOf(const ViewScan& scan) {
  std::vector<core::WrittenFile> written;
  written.reserve(scan.entries.size());
  for (const NewEntry& e : scan.entries) {
    core::WrittenFile w{e.path, e.size, ""};
    if (core::WantsContent(e.path)) {
      // A file the pod itself wrote: read bounded, never through a link; one
      // that went away or grew past the bound is counted without details.
      auto text = ReadFileNoFollow(scan.tree / e.path, core::kMaxMissContentBytes);
      if (text.ok()) w.content = std::move(*text);
    }
    written.push_back(std::move(w));
  }
  return core::ClassifyMisses(written);
}

StatusOr<std::vector<core::RuntimeMiss>> ViewMisses(const fs::path& view) {
  KC_ASSIGN_OR_RETURN(ViewScan scan, ScanView(view));
  return MissesOf(scan);
}

}  // namespace kc::initwarm

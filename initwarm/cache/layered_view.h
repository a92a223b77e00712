// layered_view: the pod-local view a Shared (and SharedReadWrite) gate
// builds over a published, already validated cache.
//
// The view is a REAL directory tree in the pod's local (emptyDir) directory,
// `<local>/layered-<fp>-<rand>/`, mirroring the published directories. Every
// published file is a symlink to the published file (an absolute target
// inside the published directory), so published entries are read in place;
// the files frameworks update in place (the whole `nv/` subtree: the CUDA
// driver's ComputeCache rewrites its `index`) are copied, group-writable
// like a Copy-mode copy. Whatever a framework creates after the gate (a new
// Triton hash directory, a tmp-and-rename file, an in-place index update)
// then lands in pod-local storage, and the published directory is never
// written. Symlinks the manifest lists are recreated with their (relative,
// in-cache) targets; manifest.json and READY are symlinks too.
//
// The builder never follows a symlink inside the published directory: every
// directory on a listed file's path is checked with lstat to be a real
// directory, every listed file to be a regular file (the copies are opened
// O_NOFOLLOW and checked again with fstat); anything else is refused with
// FailedPrecondition naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/manifest.h"

namespace kc::initwarm {

// Prefix of the layered trees' names in the local directory.
inline constexpr std::string_view kLayeredViewPrefix = "layered-";

// Whether the published file `rel` (relative to the fingerprint directory)
// is one frameworks update in place, and so is copied into the view rather
// than linked: everything under nv/. Pure.
bool CopiedInPlace(std::string_view rel);

// Builds the layered tree of `published` (whose manifest is `m`) in `dst`,
// which must not exist yet.
Status BuildLayeredTree(const std::filesystem::path& published, const core::Manifest& m,
                        const std::filesystem::path& dst);

// Removes the stale layered trees in `local_dir` (an earlier run of the
// gate in this pod), then builds a new one, `<local_dir>/layered-<fp>-<rand>`,
// and returns its path. A failed build leaves nothing behind. The caller
// points the view at it (ReplaceSymlink).
StatusOr<std::filesystem::path> BuildLayeredView(const std::filesystem::path& published,
                                                 const core::Manifest& m,
                                                 const std::filesystem::path& local_dir,
                                                 const std::string& fingerprint);

// A regular file found in a layered tree (not a symlink). `sha256` is set
// only for the copied-in-place files (CopiedInPlace), "" otherwise.
struct TreeFile {
  std::string path;  // relative to the tree
  std::uint64_t size = 0;
  std::string sha256;
  friend bool operator==(const TreeFile&, const TreeFile&) = default;
};

enum class NewEntryKind {
  kNew,      // not in the manifest: a framework created it after the gate
  kChanged,  // in the manifest, but its bytes differ (an in-place update,
             // or a linked entry replaced by a rename)
};
std::string_view NewEntryKindName(NewEntryKind k);

struct NewEntry {
  std::string path;  // relative to the tree
  NewEntryKind kind = NewEntryKind::kNew;
  std::uint64_t size = 0;
  friend bool operator==(const NewEntry&, const NewEntry&) = default;
};

// The entries written into a layered tree after the gate, from the tree's
// regular files and the manifest it was built from. A file not in the
// manifest is kNew. A copied-in-place file in the manifest is kChanged when
// its size or sha256 differs, and not reported when equal. Any other
// regular file in the manifest is kChanged (the tree held a symlink there,
// so a framework replaced it). Sorted by path. Pure.
std::vector<NewEntry> NewEntriesAfterGate(const std::vector<TreeFile>& files,
                                          const core::Manifest& m);

// The regular files of the layered tree `tree` (symlinks skipped, never
// followed), hashing the copied-in-place ones.
StatusOr<std::vector<TreeFile>> ScanLayeredTree(const std::filesystem::path& tree);

// ScanLayeredTree, then NewEntriesAfterGate.
StatusOr<std::vector<NewEntry>> ListNewEntries(const std::filesystem::path& tree,
                                               const core::Manifest& m);

}  // namespace kc::initwarm

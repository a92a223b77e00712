// misses: the runtime misses of a gated pod's view, i.e. what its serving
// processes compiled into the view after `initwarm wait` built it.
//
// The view is the symlink the gate points at its tree in the pod's local
// directory; the tree tells the mode:
//   layered-<fp>-<rand>   Shared: entries the manifest lists are symlinks
//                         into the published cache; a regular file is new
//                         or changed (NewEntriesAfterGate)
//   copy-<fp>-<rand>      Copy: a file not in the copied manifest, or whose
//                         size (for nv/, its sha256) differs, was written
//                         after the gate
//   cold                  a cold start: every file was compiled in the pod
// Each written file's bytes are read (bounded, never through a symlink)
// only where core::WantsContent asks for them, then core::ClassifyMisses
// groups the files into one miss per compiled thing.
#pragma once

#include <filesystem>
#include <vector>

#include "base/status.h"
#include "core/manifest.h"
#include "core/runtime_miss.h"
#include "initwarm/cache/layered_view.h"

namespace kc::initwarm {

enum class ViewKind { kLayered, kCopy, kCold };

// The kind of the tree a view points at, from its directory name;
// InvalidArgument for a name the gate never gives.
StatusOr<ViewKind> ViewKindOf(const std::filesystem::path& tree);

// The files of a Copy tree written after the gate: not in `m`, or in it
// with another size or (copied-in-place files) another sha256. Pure.
std::vector<NewEntry> NewEntriesInCopy(const std::vector<TreeFile>& files, const core::Manifest& m);

// What a view's tree holds that was written after the gate.
struct ViewScan {
  std::filesystem::path tree;  // the directory the view links to
  ViewKind kind = ViewKind::kCold;
  std::vector<NewEntry> entries;
};

// Scans the view `view` (a symlink to a gate's tree).
StatusOr<ViewScan> ScanView(const std::filesystem::path& view);

// The misses of a scan: its entries classified, reading (bounded, never
// through a link) the files core::WantsContent names.
std::vector<core::RuntimeMiss> MissesOf(const ViewScan& scan);

// ScanView, then MissesOf.
StatusOr<std::vector<core::RuntimeMiss>> ViewMisses(const std::filesystem::path& view);

}  // namespace kc::initwarm

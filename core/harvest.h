// Harvest: what the fleet learns from the kernels its serving pods compiled
// after their gates (spec.harvest).
//
//   Report (the default)  runtime misses are counted and shown; nothing is
//                         copied or merged
//   Merge                 each gated pod's miss watcher also copies the files
//                         it compiled into the volume's inbox
//                         (v1/.inbox/<fp>/<pod uid>/, core/layout.h) and lists
//                         them, with their sha256, in its miss report; at
//                         most once per `interval` the operator runs a
//                         harvest Job that merges the listed files of the
//                         pods it accepted into a new generation of the
//                         fingerprint's cache (initwarm harvest)
//
// This file holds the contract's values: the mode, the caps, the files a
// report lists, the accept list the operator hands the harvest Job, and
// PlanMerge, the pure decision of what a merge adds. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::core {

enum class HarvestMode { kReport, kMerge };
inline constexpr std::array<HarvestMode, 2> kHarvestModes = {HarvestMode::kReport,
                                                             HarvestMode::kMerge};
inline constexpr HarvestMode kDefaultHarvestMode = HarvestMode::kReport;
// "Report", "Merge".
std::string_view HarvestModeName(HarvestMode m);
StatusOr<HarvestMode> ParseHarvestMode(std::string_view name);

// Defaults and bounds of spec.harvest.
inline constexpr std::string_view kDefaultHarvestInterval = "1h";
inline constexpr std::int64_t kMinHarvestIntervalSeconds = 10;
inline constexpr std::int64_t kDefaultHarvestMaxFilesPerPod = 256;
inline constexpr std::string_view kDefaultHarvestMaxBytesPerPod = "256Mi";
inline constexpr std::int64_t kDefaultHarvestMaxFilesPerFingerprint = 1024;
inline constexpr std::string_view kDefaultHarvestMaxBytesPerFingerprint = "1Gi";
// Hard ceilings, whatever the spec says (they bound a report and the
// harvest Job's argument).
inline constexpr std::int64_t kMaxHarvestFilesPerPod = 1024;
inline constexpr std::int64_t kMaxHarvestFilesPerFingerprint = 2048;

// The caps in force (spec.harvest parsed).
struct HarvestCaps {
  std::int64_t max_files_per_pod = kDefaultHarvestMaxFilesPerPod;
  std::int64_t max_bytes_per_pod = 256LL << 20;
  std::int64_t max_files_per_fingerprint = kDefaultHarvestMaxFilesPerFingerprint;
  std::int64_t max_bytes_per_fingerprint = 1LL << 30;
  friend bool operator==(const HarvestCaps&, const HarvestCaps&) = default;
};

// A file a watcher copied into the inbox: its path relative to the view
// (and to the cache), its size and sha256.
struct HarvestFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sha256;
  friend bool operator==(const HarvestFile&, const HarvestFile&) = default;
};

// Whether a file written into a view may be harvested: a safe relative path
// (CheckRelativePath) of at least two components that is not under nv/ (the
// CUDA ComputeCache rewrites its index in place: its entries are never
// merged) and not at the top of the cache (manifest.json, READY). The error
// names the path and the rule.
Status CheckHarvestPath(std::string_view rel);

// One pod's files in the harvest Job's accept list.
struct HarvestPod {
  std::string uid;  // the pod's uid: its inbox directory
  std::vector<HarvestFile> files;
  friend bool operator==(const HarvestPod&, const HarvestPod&) = default;
};

// The accept list: [{"uid": "...", "files": [{"path","size","sha256"}]}].
std::string HarvestAcceptToJson(const std::vector<HarvestPod>& pods);
// Strict: every uid core::IsSafeUid, every path CheckHarvestPath, sha256 64
// lower-case hex, at most kMaxHarvestFilesPerFingerprint files in all.
// InvalidArgument naming the field.
StatusOr<std::vector<HarvestPod>> ParseHarvestAccept(std::string_view json);

// A file as the harvest Job found it in the inbox: `problem` is "" when it
// is a regular file of the listed size and sha256 that passed the checks
// (path, arch), else why not.
struct InboxFile {
  std::string pod_uid;
  HarvestFile file;
  std::string problem;
};

// What a merge adds to a cache whose manifest lists `base` (path -> sha256).
struct MergePlan {
  std::vector<InboxFile> add;           // sorted by path, one per path
  std::vector<std::string> conflicts;   // paths: the same key with other bytes
  std::vector<std::string> rejected;    // "<path> (pod <uid>): <why>"
  std::vector<std::string> duplicates;  // paths already in the cache with these bytes
};

// The decision, a pure function of the base cache and the inbox:
//   - files are merged by entry, the directory holding them (a Triton kernel's
//     hash directory, an Inductor entry's directory): when any file of a
//     pod's entry is rejected (its problem, or past the caps), the whole
//     entry of that pod is kept out;
//   - a path already in the base with the same sha256 is a duplicate (not
//     added again); with another sha256 it is a conflict;
//   - two pods offering one path with different bytes: a conflict, neither
//     is added; with the same bytes: added once;
//   - an entry with a conflicting file is kept out whole;
//   - `caps.max_files_per_fingerprint` / `max_bytes_per_fingerprint` bound
//     what is added, whole entries in path order.
MergePlan PlanMerge(const std::map<std::string, std::string>& base,
                    const std::vector<InboxFile>& inbox, const HarvestCaps& caps);

// The entry a path belongs to: its parent directory ("triton/ab12" for
// "triton/ab12/k.cubin").
std::string HarvestEntryOf(std::string_view rel);

}  // namespace kc::core

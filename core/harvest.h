// Harvest: what the fleet learns from the kernels its serving pods compiled
// after their gates (spec.harvest).
//
//   Report (the default)  runtime misses are counted and shown; nothing is
//                         copied or merged
//   Merge                 each gated pod's miss watcher also copies the files
//                         it compiled into the volume's inbox
//                         (v1/.inbox/<fp>/<pod uid>/, core/layout.h), writes
//                         their list (path, size, sha256) there last, as
//                         kHarvestListFile, and names that list in its miss
//                         report by its file count, bytes and sha256; at
//                         most once per `interval` the operator runs a
//                         harvest Job that merges the listed files of the
//                         pods it accepted into a new generation of the
//                         fingerprint's cache (initwarm harvest), reading
//                         each pod's list only if its sha256 is the one the
//                         pod reported
//
// This file holds the contract's values: the mode, the caps, a pod's list
// and its summary in the report, the accept list the operator hands the
// harvest Job (small whatever the pods compiled: one summary per pod), and
// PlanMerge, the pure decision of what a merge adds. Pure.
#pragma once

#include <array>
#include <chrono>
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

// Defaults and bounds of spec.harvest. The interval's default is the
// CRD's "1h"; every reader takes it from here.
inline constexpr std::chrono::seconds kDefaultHarvestInterval{3600};
inline constexpr std::chrono::seconds kMinHarvestInterval{10};
// (One max-autotune process meeting one new sequence length wrote 256
// files on an H100: the defaults leave room for several shapes.)
inline constexpr std::int64_t kDefaultHarvestMaxFilesPerPod = 2048;
inline constexpr std::string_view kDefaultHarvestMaxBytesPerPod = "512Mi";
inline constexpr std::int64_t kDefaultHarvestMaxFilesPerFingerprint = 8192;
inline constexpr std::string_view kDefaultHarvestMaxBytesPerFingerprint = "2Gi";
// Hard ceilings, whatever the spec says (they bound a list file and a merge).
inline constexpr std::int64_t kMaxHarvestFilesPerPod = 16384;
inline constexpr std::int64_t kMaxHarvestFilesPerFingerprint = 65536;
// Pods in one accept list at most (it travels in an environment variable,
// which Linux bounds at 128 KiB).
inline constexpr std::size_t kMaxHarvestPods = 256;
// The list a watcher writes into its pod's inbox directory (one path
// component, so no harvested path can be it).
inline constexpr std::string_view kHarvestListFile = ".list.json";
inline constexpr std::uint64_t kMaxHarvestListBytes = 8ull << 20;

// The caps in force (spec.harvest parsed).
struct HarvestCaps {
  std::int64_t max_files_per_pod = kDefaultHarvestMaxFilesPerPod;
  std::int64_t max_bytes_per_pod = 512LL << 20;
  std::int64_t max_files_per_fingerprint = kDefaultHarvestMaxFilesPerFingerprint;
  std::int64_t max_bytes_per_fingerprint = 2LL << 30;
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

// A pod's list: [{"path","size","sha256"}] sorted by path, compact
// (the bytes its sha256 is taken over). Parse is strict: every path
// CheckHarvestPath, sizes integers >= 0, sha256 64 lower-case hex, no path
// twice, at most kMaxHarvestFilesPerPod files. InvalidArgument naming the
// field.
std::string HarvestListToJson(std::vector<HarvestFile> files);
StatusOr<std::vector<HarvestFile>> ParseHarvestList(std::string_view json);

// What a report says of a pod's list, and the accept list repeats: its
// file count, bytes and the sha256 of HarvestListToJson.
struct HarvestListRef {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::string sha256;
  friend bool operator==(const HarvestListRef&, const HarvestListRef&) = default;
};
HarvestListRef RefOf(const std::vector<HarvestFile>& files);

// One pod in the harvest Job's accept list.
struct HarvestPod {
  std::string uid;  // the pod's uid: its inbox directory
  HarvestListRef list;
  friend bool operator==(const HarvestPod&, const HarvestPod&) = default;
};

// The accept list: [{"uid", "files", "bytes", "sha256"}]. Strict: every uid
// core::IsSafeUid, sha256 64 lower-case hex, at most kMaxHarvestPods pods,
// no uid twice. InvalidArgument naming the field.
std::string HarvestAcceptToJson(const std::vector<HarvestPod>& pods);
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

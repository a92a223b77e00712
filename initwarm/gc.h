// GC: what to remove from a cache volume.
//
// ScanVolume lists v1/: published fingerprint directories, staging
// directories (with whether a live writer holds their fingerprint's lock
// for their owner), quarantine directories, and lock files. PlanGc (pure)
// decides, entry by entry:
//   published <fp>     removed only when `remove_unkept` and <fp> is not kept
//   staging <fp>-<uid> removed when older than staging_max_age, not locked by
//                      a live writer, and <fp> is not kept
//   quarantine         removed when older than quarantine_max_age
//   lock file          removed when older than staging_max_age and not live
// A kept fingerprint's directories are never removed. ApplyGc removes:
// a published directory is first renamed into .quarantine (atomically
// invisible to readers), then deleted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/layout.h"

namespace kc::initwarm {

struct GcEntry {
  enum class Kind { kPublished, kStaging, kQuarantine, kLock };
  Kind kind;
  std::filesystem::path path;
  std::string fingerprint;  // may be empty for unparsable names
  std::int64_t mtime = 0;
  bool live_writer = false;  // staging/lock: a live writer holds the lock
};

struct GcPolicy {
  std::set<std::string> keep;
  bool remove_unkept = false;
  std::int64_t staging_max_age_s = 24 * 3600;
  std::int64_t quarantine_max_age_s = 0;
  std::int64_t now = 0;
};

struct GcDecision {
  GcEntry entry;
  bool remove = false;
  std::string why;
};

StatusOr<std::vector<GcEntry>> ScanVolume(const core::Layout& layout,
                                          std::int64_t lock_stale_after_s);
std::vector<GcDecision> PlanGc(const std::vector<GcEntry>& entries, const GcPolicy& policy);
// Removes what the plan says; returns the first error (continuing past it).
Status ApplyGc(const core::Layout& layout, const std::vector<GcDecision>& plan);

}  // namespace kc::initwarm

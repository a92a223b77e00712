// GC: what to remove from a cache volume.
//
// GC removes only what it was asked to remove. A volume may be shared (two
// KernelCaches on one existingClaim), so nothing is removed because it is
// merely absent from a list.
//
// ScanVolume lists v1/: published fingerprint directories (with READY's
// digest), staging directories (with whether a live writer holds their
// fingerprint's lock for their owner), quarantine directories, and lock
// files. PlanGc (pure) decides, entry by entry:
//   published <fp>     removed only when `remove` names <fp> with a manifest
//                      digest equal to READY's: provably the cache the
//                      operator recorded, not one sealed since (another
//                      KernelCache's, or a re-warm after the GC Job was made)
//   staging <fp>-<uid> removed when older than staging_max_age and not locked
//                      by a live writer
//   quarantine         removed when older than quarantine_max_age
//   lock file          removed when older than staging_max_age and not live
//   staging or lock of an owner in `dead_owners` (the operator's
//                      --break-lock-of: a warmup Job that failed, or that
//                      it cancelled and is gone): removed at once
//   inbox <fp>/<uid>   what a pod's miss watcher copied for a harvest:
//                      removed with its fingerprint (scoped), or when older
//                      than staging_max_age (never merged: its pod is long
//                      gone or its harvest kept the files out)
// With `scoped` (the operator's GC Job: `--remove` given) only entries of
// the fingerprints in `remove` are considered; without it (an admin's run)
// published caches are never removed and only leftovers are. A kept
// fingerprint's entries are never removed.
// Everything on the volume is read and removed as hostile content
// (initwarm/fs/safe_file.h): READY is read without following a symlink, never
// from a FIFO, at most 4 KiB; a tree is removed without following any link
// in it; a v1/.staging, .quarantine, .locks or .inbox that is not a real directory
// makes ScanVolume refuse (InvalidArgument naming it).
// ApplyGc removes a published directory under the fingerprint lock (so no
// seal publishes meanwhile; a live writer's lock makes it skip that one and
// report Unavailable), re-checks READY's digest, renames it into
// .quarantine (atomically invisible to readers), then deletes it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/layout.h"

namespace kc::initwarm {

struct GcEntry {
  enum class Kind { kPublished, kStaging, kQuarantine, kLock, kInbox };
  Kind kind;
  std::filesystem::path path;
  std::string fingerprint;  // may be empty for unparsable names
  std::int64_t mtime = 0;
  bool live_writer = false;    // staging/lock: a live writer holds the lock
  std::string ready_digest{};  // published: READY's content ("" when absent)
  std::string owner{};         // staging: its owner suffix; lock: the record's owner
};

struct GcPolicy {
  std::set<std::string> keep;
  // fingerprint -> the manifest digest the operator recorded for it ("" =
  // none: its published directory is not provably ours and is kept).
  std::map<std::string, std::string> remove;
  bool scoped = false;  // consider only the fingerprints in `remove`
  // Owners (warmup Job uids) the operator knows are gone: their staging
  // and locks go at any age.
  std::set<std::string> dead_owners;
  std::int64_t staging_max_age_s = 24 * 3600;
  std::int64_t quarantine_max_age_s = 0;
  std::int64_t now = 0;
};

struct GcDecision {
  GcEntry entry;
  bool remove = false;
  std::string why;
};

// `dead_owners`: a lock of one of them is not live (initwarm/cache/lock.h JudgeLock).
StatusOr<std::vector<GcEntry>> ScanVolume(const core::Layout& layout,
                                          std::int64_t lock_stale_after_s,
                                          const std::vector<std::string>& dead_owners = {});
std::vector<GcDecision> PlanGc(const std::vector<GcEntry>& entries, const GcPolicy& policy);
// "<fp>" or "<fp>:<64-hex manifest digest>" (a --remove value).
// InvalidArgument naming the value otherwise.
Status ParseRemoveSpec(std::string_view value, std::map<std::string, std::string>* out);

// The fingerprints and owners `initwarm gc` is given, as given: --remove
// (<fingerprint>[:<digest>], repeatable; scoped: the flag was given at all),
// --keep, --break-lock-of.
struct GcNames {
  std::vector<std::string> remove;
  std::vector<std::string> keep;
  std::vector<std::string> break_lock_of;
  bool scoped = false;
};

// `base` (its ages and time) with the names decoded into it: InvalidArgument
// naming the flag for a --keep that is not a fingerprint id, a --remove
// ParseRemoveSpec refuses or that names a kept fingerprint, an unsafe
// --break-lock-of owner. Pure.
StatusOr<GcPolicy> GcPolicyOf(const GcNames& names, GcPolicy base);
// Removes what the plan says; returns the first error (continuing past it).
Status ApplyGc(const core::Layout& layout, const std::vector<GcDecision>& plan,
               std::int64_t lock_stale_after_s = 2 * 3600,
               const std::vector<std::string>& dead_owners = {});

}  // namespace kc::initwarm

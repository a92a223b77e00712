// The seal's phases (seal.h has the protocol), in the order Seal runs them;
// exposed for their tests (seal_phases_test.cc) and seal.cc, which composes
// them. Each writes what it learns into the SealResult it is given.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/layout.h"
#include "initwarm/cache/seal.h"
#include "initwarm/cache/walk.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

// Where one seal reads and writes.
struct SealPaths {
  core::Layout layout;
  std::filesystem::path staging;
  std::filesystem::path published;
  std::filesystem::path lock;
};

// Phase 1: the fingerprint (into r->fingerprint, as SealFingerprint), the
// paths (r->directory: the published one), and the staging directory there:
// NotFound naming `initwarm prepare` when it is not a real directory.
StatusOr<SealPaths> PlanSeal(const SealOptions& o, SealResult* r);

// Phase 2: the fingerprint lock (*locked set once held), and the refusal of
// a READY cache unless o.replace (AlreadyExists).
Status LockSeal(const SealOptions& o, const SealPaths& p, const std::string& fp,
                std::filesystem::path* locked);

// Phase 3: the walk. The staging tree was written by the warmup and sits on
// the shared volume: read as hostile (initwarm/fs/safe_file.h). An empty tree
// is FailedPrecondition unless o.allow_empty.
StatusOr<WalkResult> WalkStaging(const SealOptions& o, const SafeDir& staged,
                                 const std::filesystem::path& staging);

// Phase 4: hash and fsync every file, then fsync the directories. The
// files' sha256 in walk order.
StatusOr<std::vector<std::string>> HashStaging(const SealOptions& o, const SafeDir& staged,
                                               const std::filesystem::path& staging,
                                               const WalkResult& walk);

// Phase 5: manifest.json, written durably into staging; its digest, file
// count and bytes go to `r`.
Status WriteSealManifest(const SealOptions& o, const SafeDir& staged,
                         const std::filesystem::path& staging, const WalkResult& walk,
                         const std::vector<std::string>& sums, SealResult* r);

// Phase 6: an existing v1/<fp> moved aside into the quarantine ("-replaced"
// when READY, "-incomplete" when not). Returns where the READY cache this
// seal replaces went ("" when none; r->outcome "Replaced" and
// r->replaced_to when one). A READY cache without o.replace is
// AlreadyExists (published by someone else while this seal ran).
StatusOr<std::filesystem::path> MoveAside(const SealOptions& o, const SealPaths& p, SealResult* r);

// Phase 7: staging renamed to v1/<fp>, then READY (r.manifest_digest)
// written durably. On failure nothing is READY: the directory goes back to
// staging.
Status PublishStaging(const SealPaths& p, const SealResult& r);

// Phases 6 and 7 when a READY cache is replaced and the filesystem can
// exchange two names atomically (renameat2 RENAME_EXCHANGE: ext4, XFS,
// btrfs, tmpfs): staging is renamed to the previous generation's
// quarantine name, READY is written into it, and the two directories are
// exchanged, so v1/<fp> is READY at every instant, old or new (a Shared
// view's links into it never dangle). False, with staging as it was, when
// the filesystem cannot exchange (NFS): Publish then moves aside and
// renames.
StatusOr<bool> ReplaceByExchange(const SealPaths& p, SealResult* r);

// Phases 6 and 7. A publish that fails after the move aside (a full volume:
// READY cannot be written) puts the previous READY cache back: a failed
// replacement must not cost the good cache it was replacing. (A crash here
// still leaves it in the quarantine: READY shows nothing then, never a half
// cache.)
Status Publish(const SealOptions& o, const SealPaths& p, SealResult* r);

}  // namespace kc::initwarm

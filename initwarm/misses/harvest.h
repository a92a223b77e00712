// Harvest: merge what gated pods compiled after their gates (the files
// their miss watchers copied into v1/.inbox/<fp>/<pod uid>/) into a new
// generation of the fingerprint's cache. `initwarm harvest` runs it in the
// operator's harvest Job (core/harvest.h has the contract).
//
// Steps, under the fingerprint's single-writer lock (owner: the Job's uid):
//   1. read the published cache: READY must hold the sha256 of its
//      manifest.json and, when `base_digest` is given, be that digest (a
//      cache re-warmed since the operator planned the Job is not merged
//      into: FailedPrecondition);
//   2. read every accepted inbox file as hostile content (SafeDir: no
//      symlink followed, a regular file with one name, never a FIFO): its
//      size must be the listed one and within the pod's caps, its sha256 the
//      listed one; a Triton metadata file's target must be the cache's GPU
//      arch, a cubin a well-formed CUDA ELF image; what fails gets its
//      reason (core::InboxFile::problem);
//   3. core::PlanMerge decides what is added (union; conflicts kept out);
//      nothing to add is outcome Unchanged and publishes nothing;
//   4. build the next generation in staging (.staging/<fp>-<owner>): a copy
//      of the published files, each checked against the base manifest's
//      sha256, plus the added files, each hashed again as it is copied;
//   5. seal it with replace (initwarm/cache/seal.h): the new manifest, the
//      previous generation moved into the quarantine, the new one renamed
//      in, READY last; a full volume or a crash leaves the previous
//      generation READY (seal's guarantees);
//   6. remove the inbox directories of the pods it read.
// Running pods keep working: Copy views are their own copies, and a Shared
// view's links name paths that the new generation holds with the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/harvest.h"
#include "core/harvest_report.h"

namespace kc::initwarm {

struct HarvestOptions {
  std::filesystem::path root;
  std::string fingerprint;
  std::string owner;        // the harvest Job's uid: the lock owner and staging name
  std::string base_digest;  // "" = whatever generation is READY
  std::vector<core::HarvestPod> accept;
  core::HarvestCaps caps;
  int threads = 0;
  std::int64_t lock_stale_after_s = 2 * 3600;
};

// The merge's report (outcome Merged or Unchanged); an error when nothing
// could be merged (the reason's code: FailedPrecondition for a changed or
// missing cache, Conflict for a held lock, ResourceExhausted for a full
// volume, DataLoss for a file that changed while read).
StatusOr<core::HarvestReport> Harvest(const HarvestOptions& opts);

}  // namespace kc::initwarm

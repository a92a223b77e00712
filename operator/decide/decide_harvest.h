// Decide's harvest (spec.harvest.mode Merge): reading the harvest Jobs'
// results into the status, and starting the next one. Pure.
//
// Per fingerprint:
//   - a finished harvest Job whose result is not recorded yet (its uid is
//     not status.harvest.jobUid) is recorded: Merged into the generation
//     the status names moves manifestDigest, bytes and files to the new
//     generation and bumps harvest.generation (Event HarvestMerged, and
//     HarvestKeptOut for conflicts and rejected files); Unchanged or Failed
//     keep the cache (Event HarvestFailed for a failure: the previous
//     generation still serves). A recorded Job is deleted the pass after,
//     so a lost status write never loses a merge.
//   - a Ready fingerprint with no harvest or warmup Job running, storage
//     usable, and inbox files listed by pods gated on its current digest
//     gets a harvest Job once spec.harvest.interval has passed since the
//     last one finished (a timer otherwise), unless a Job of the same name
//     (same generation, same lists) was recorded already (AcceptList).
// Report mode starts nothing, but still records a Job left from Merge.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "operator/decide/decide_gc.h"
#include "operator/decide/decide_step.h"

namespace kc::op::decide {

struct HarvestVerdict {
  Entries entries;
  Effects effects;
};

HarvestVerdict DecideHarvest(Entries entries, const core::KernelCache& kc,
                             const std::vector<JobView>& jobs, const std::vector<PodView>& pods,
                             const std::map<std::string, ObservedMisses>& observed,
                             const Settings& settings, bool storage_usable, Time now);

// The accept list for one harvest: whole pods in uid order, each list
// within the per-pod caps, all within the per-fingerprint caps and
// core::kMaxHarvestPods. Pure.
std::vector<core::HarvestPod> AcceptList(const std::vector<core::HarvestPod>& pods,
                                         const core::HarvestCaps& caps);

}  // namespace kc::op::decide

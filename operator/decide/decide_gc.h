// Decide's retirement and garbage collection: which fingerprints no node
// carries any more (Stale when their nodes now carry another fingerprint,
// Absent when they went away), which of them to collect (past
// spec.retention.staleAfter / absentAfter, or Absent ones making room under
// maxBytes), the GC Job that removes their caches and what its outcome
// means, and which warmup Jobs are no longer needed.
// Pure.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "operator/decide/decide_step.h"

namespace kc::op::decide {

using Entries = std::map<std::string, core::FingerprintStatus>;  // by id

struct Retirement {
  Entries entries;                         // `entries` with the unused ones moved on
  std::vector<std::string> collectable;    // ids whose caches GC may remove now
  std::map<std::string, std::string> why;  // id -> "stale for more than 24h"
  Effects effects;                         // Events, stopped warmups, timers
};

// `in_use`: ids some selected node carries; `node_fp`: node -> its
// fingerprint now. Unused entries get nodes = 0 and move to Stale or Absent;
// a warmup of one still running is stopped.
Retirement Retire(Entries entries, const std::set<std::string>& in_use,
                  const std::map<std::string, std::string>& node_fp,
                  const std::vector<JobView>& jobs, const core::KernelCache& kc,
                  const Retention& retention, Time now);

struct GcVerdict {
  Entries entries;                       // collected ones removed; ones in use again reset
  std::vector<std::string> collectable;  // still to collect
  Effects effects;                       // GC Job create/deletes, Events, timers
};

// Reads the GC Jobs: a Complete one removes its ids from the status (or, for
// an id in use again, forgets its cache and re-warms it), a failed one is
// retried after kGcRetry; with none running and storage usable, creates the
// GC Job for `collectable`.
GcVerdict CollectGarbage(Entries entries, std::vector<std::string> collectable,
                         const std::map<std::string, std::string>& why,
                         const std::vector<JobView>& jobs, const core::KernelCache& kc,
                         const Settings& settings, bool storage_usable, Time now);

// Warmup Jobs no longer needed: of fingerprints no longer in status, and
// finished ones of older generations once a newer cache is recorded.
std::vector<Action> CleanupJobs(const std::vector<JobView>& jobs, const Entries& entries,
                                const std::string& kc_name);

}  // namespace kc::op::decide

// MissLedger: what gated pods reported through the miss channel
// (core/miss_channel.h), kept in memory per cache (namespace, KernelCache,
// fingerprint, manifest digest) and per pod.
//
// A report is the pod's full current set, so Record() is idempotent: an
// entry (framework + key) a pod already reported is not counted again. It
// answers what the report added: entries new to the pod (the metric
// kernelcache_runtime_misses_total counts these: one compile in one pod)
// and, at most once per `event_interval` per cache, the Warning Event due
// with every (entry, pod) added since the last one.
// Bounded over the whole ledger, whatever keys reports arrive under: at
// most max_caches caches, max_total_entries entries and max_total_pods pods
// in all, and max_entries entries and max_pods pods per cache (beyond them
// new ones are counted in `dropped` and not kept). A pod (by uid) is in one
// cache at a time: reporting under another key (a relabelled pod) moves it,
// taking along what only it had reported. A cache whose digest is no longer
// current is dropped by Forget*().
// An operator restart starts empty; watchers resend their sets, so the
// ledger refills within one report interval per pod.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/api_types.h"
#include "core/harvest.h"
#include "core/runtime_miss.h"
#include "operator/decide/types.h"

namespace kc::op {

// Where a report came from, as the operator established it (never from the
// report's body): the pod and the cache its gate handed it.
struct MissSource {
  std::string ns;
  std::string kernelcache;
  std::string fingerprint;
  std::string manifest_digest;
  std::string pod;
  std::string pod_uid;
};

struct MissEventDue {
  std::vector<std::string> details;  // distinct, in the order first seen
  std::vector<std::string> pods;     // distinct, in the order first seen
};

struct MissRecord {
  std::size_t accepted = 0;  // entries of the report the ledger holds
  // Entries this pod had not reported before, by framework.
  std::map<core::MissFramework, int> new_for_pod;
  std::size_t new_for_cache = 0;  // of which no pod had reported before
  std::size_t dropped = 0;        // over the caps, not kept
  bool harvest_changed = false;   // the pod's inbox list differs from its last report
  std::optional<MissEventDue> event;
};

class MissLedger {
 public:
  struct Limits {
    std::size_t max_entries = 4096;
    std::size_t max_pods = 4096;
    std::size_t max_caches = 1024;
    std::size_t max_total_entries = 65536;
    std::size_t max_total_pods = 16384;
    std::chrono::seconds event_interval{60};
  };
  MissLedger() : MissLedger(Limits{}) {}
  explicit MissLedger(Limits limits) : limits_(limits) {}

  // `harvest`: the list of files the pod's watcher copied into the inbox
  // (its report's "harvest"); the pod's last one replaces the one before.
  MissRecord Record(const MissSource& src, const std::vector<core::RuntimeMiss>& misses, Time now,
                    const std::optional<core::HarvestListRef>& harvest = std::nullopt);

  // The inbox lists pods of one cache reported, by pod uid (sorted), for a
  // harvest Job; empty when none.
  std::vector<core::HarvestPod> Harvestable(const std::string& ns, const std::string& kernelcache,
                                            const std::string& fingerprint,
                                            const std::string& manifest_digest) const;

  // The status of one cache; nullopt when no pod reported a miss for it.
  std::optional<core::RuntimeMissStatus> Summary(const std::string& ns,
                                                 const std::string& kernelcache,
                                                 const std::string& fingerprint,
                                                 const std::string& manifest_digest) const;

  // Drops every cache of a KernelCache (deleted), or of one fingerprint
  // whose digest is no longer `keep_digest`.
  void ForgetKernelCache(const std::string& ns, const std::string& kernelcache);
  void ForgetOtherDigests(const std::string& ns, const std::string& kernelcache,
                          const std::string& fingerprint, const std::string& keep_digest);

 private:
  using CacheKey = std::tuple<std::string, std::string, std::string, std::string>;
  using EntryKey = std::pair<core::MissFramework, std::string>;
  struct Entry {
    std::string detail;
    std::set<std::string> pods;  // uids
  };
  struct Cache {
    std::map<EntryKey, Entry> entries;
    std::map<std::string, std::set<EntryKey>> pods;       // uid -> what it reported
    std::map<std::string, core::HarvestListRef> harvest;  // uid -> its inbox list
    std::optional<Time> last_event;
    MissEventDue pending;
  };

  // With mu_ held: `uid` leaves the cache it is in; a cache left empty goes.
  void RemovePod(const std::string& uid);
  // With mu_ held: drops the caches `drop` picks, and their pods.
  template <class Pred>
  void EraseCaches(Pred drop);

  Limits limits_;
  mutable std::mutex mu_;
  std::map<CacheKey, Cache> caches_;
  std::map<std::string, CacheKey> pod_home_;  // uid -> the one cache it is in
  std::size_t total_entries_ = 0;
  std::size_t total_pods_ = 0;
};

}  // namespace kc::op

#include "operator/decide/decide_gc.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "base/strings.h"
#include "operator/decide/decide_fingerprint.h"
#include "operator/decide/names.h"
#include "operator/decide/warmup_job.h"

namespace kc::op::decide {
namespace {

namespace st = core::fp_state;
using core::FingerprintStatus;

Time Seconds(Time t) { return std::chrono::time_point_cast<seconds>(t); }

// Over spec.retention.maxBytes: Absent caches (which no node needs now)
// make room, the longest absent first, until the rest fits. Stale ones
// keep their own, shorter, grace; caches in use are never collected.
void CollectAbsentForBudget(Retirement& r, std::vector<const FingerprintStatus*> absent,
                            const core::KernelCache& kc, int64_t max_bytes) {
  int64_t bytes = 0;
  for (const auto& [id, f] : r.entries) {
    const bool collected =
        std::find(r.collectable.begin(), r.collectable.end(), id) != r.collectable.end();
    if (!f.manifest_digest.empty() && !collected) bytes += f.bytes;
  }
  std::sort(absent.begin(), absent.end(), [](const auto* a, const auto* b) {
    return std::tie(a->absent_since, a->id) < std::tie(b->absent_since, b->id);
  });
  for (const FingerprintStatus* f : absent) {
    if (bytes <= max_bytes) break;
    if (f->manifest_digest.empty() || f->bytes <= 0) continue;
    r.collectable.push_back(f->id);
    r.why[f->id] = "absent, its " + api::FormatBytes(f->bytes) +
                   " needed under spec.retention.maxBytes " + kc.spec.retention.max_bytes;
    bytes -= f->bytes;
  }
}

std::vector<std::string> GcIds(const JobView& j) {
  std::vector<std::string> ids;
  auto it = j.annotations.find(kAnnotationGcIds);
  if (it == j.annotations.end()) return ids;
  size_t start = 0;
  const std::string& s = it->second;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) ids.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return ids;
}

}  // namespace

Retirement Retire(Entries entries, const std::set<std::string>& in_use,
                  const std::map<std::string, std::string>& node_fp,
                  const std::vector<JobView>& jobs, const core::KernelCache& kc,
                  const Retention& retention, Time now) {
  Retirement r;
  r.entries = std::move(entries);
  const auto& spec = kc.spec.retention;
  std::vector<const FingerprintStatus*> absent;  // may be collected early for maxBytes
  for (auto& [id, f] : r.entries) {
    if (in_use.count(id) > 0) continue;
    f.nodes = 0;
    // Nodes it was last seen on that now carry another fingerprint: its
    // nodes changed (Stale). None: its nodes went away (Absent).
    std::vector<std::string> moved;
    for (const auto& n : f.last_nodes) {
      auto it = node_fp.find(n);
      if (it != node_fp.end() && it->second != id) moved.push_back(n + " (now " + it->second + ")");
    }
    if (f.state != st::kStale && !moved.empty()) {
      SetState(f, st::kStale, now);
      f.stale_since = Seconds(now);
      f.absent_since.reset();
      r.effects.Event("Normal", "FingerprintStale",
                      "no matching node carries fingerprint " + Describe(f) +
                          " any more; its node(s) " + ListSome(moved) +
                          " changed fingerprint; its cache is removed after " + spec.stale_after);
    } else if (f.state != st::kStale && f.state != st::kAbsent) {
      SetState(f, st::kAbsent, now);
      f.absent_since = Seconds(now);
      r.effects.Event(
          "Normal", "FingerprintAbsent",
          "no matching node carries fingerprint " + Describe(f) +
              " any more and none of its nodes" +
              (f.last_nodes.empty() ? "" : " (" + ListSome(f.last_nodes) + ")") +
              " carries another fingerprint (a pool scaled to zero?); its cache is kept "
              "for spec.retention.absentAfter " +
              spec.absent_after +
              (retention.max_bytes ? " or until spec.retention.maxBytes needs the space" : ""));
    }
    // A warmup that can no longer be placed is stopped (and remembered:
    // the lock its prepare took outlives it).
    for (const auto& j : jobs) {
      if (WarmupOf(j, kc.metadata.name, id) && !j.complete && !j.failed_condition) {
        r.effects.CancelWarmup(j, f);
      }
    }
    const bool stale = f.state == st::kStale;
    const Time collect_at = stale ? f.stale_since.value_or(now) + retention.stale_after
                                  : f.absent_since.value_or(now) + retention.absent_after;
    if (now >= collect_at) {
      r.collectable.push_back(id);
      r.why[id] = stale ? "stale for more than " + spec.stale_after
                        : "absent for more than " + spec.absent_after;
    } else {
      r.effects.WakeAt(collect_at, now);
      if (!stale) absent.push_back(&f);
    }
  }
  if (retention.max_bytes) CollectAbsentForBudget(r, std::move(absent), kc, *retention.max_bytes);
  return r;
}

GcVerdict CollectGarbage(Entries entries, std::vector<std::string> collectable,
                         const std::map<std::string, std::string>& why,
                         const std::vector<JobView>& jobs, const core::KernelCache& kc,
                         const Settings& settings, bool storage_usable, Time now) {
  GcVerdict v;
  v.entries = std::move(entries);
  v.collectable = std::move(collectable);
  const std::string& kc_name = kc.metadata.name;
  bool gc_running = false;
  for (const auto& j : jobs) {
    if (!Ours(j, kc_name) || Component(j) != "gc" || j.deleting) continue;
    if (j.complete) {
      std::vector<std::string> removed;
      for (const auto& id : GcIds(j)) {
        auto e = v.entries.find(id);
        if (e == v.entries.end()) continue;
        if (e->second.state == st::kStale || e->second.state == st::kAbsent) {
          removed.push_back(id);
          v.entries.erase(e);
          continue;
        }
        // In use again, but its directory is gone: warm it anew. Its
        // finished warmup Jobs go (so a new one is made under the name); a
        // running one is left to seal into the empty place.
        FingerprintStatus& f = e->second;
        f.bytes = f.files = 0;
        f.manifest_digest.clear();
        f.ready_at.reset();
        SetState(f, st::kPending, now);
        for (const auto& w : jobs) {
          if (WarmupOf(w, kc_name, id) && (w.complete || w.failed_condition)) {
            v.effects.DeleteJob(w);
          }
        }
      }
      if (!removed.empty()) {
        v.effects.Event("Normal", "CacheCollected",
                        "removed the cache(s) of unused fingerprint(s) " + StrJoin(removed, ", ") +
                            " (GC Job " + j.name + ")");
      }
      for (const auto& id : removed) {
        v.collectable.erase(std::remove(v.collectable.begin(), v.collectable.end(), id),
                            v.collectable.end());
      }
      v.effects.DeleteJob(j);
    } else if (j.failed_condition) {
      const Time retry = j.finished.value_or(now) + kGcRetry;
      if (now >= retry) {
        v.effects.Event("Warning", "GcFailed",
                        "GC Job " + j.name + " failed (" + j.failure_reason + "); retrying");
        v.effects.DeleteJob(j);
      } else {
        v.effects.WakeAt(retry, now);
      }
      gc_running = true;
    } else {
      gc_running = true;
    }
  }
  if (gc_running || v.collectable.empty() || !storage_usable) return v;
  std::sort(v.collectable.begin(), v.collectable.end());
  // Exactly what to remove, each with the digest recorded for it: GC
  // never removes a cache it was not given (a shared claim holds other
  // KernelCaches' caches) nor one sealed after this Job was made.
  std::map<std::string, std::string> remove;
  std::set<std::string> dead;  // their failed or cancelled warmups' locks go too
  for (const auto& id : v.collectable) {
    auto e = v.entries.find(id);
    remove[id] = e == v.entries.end() ? "" : e->second.manifest_digest;
    if (e == v.entries.end()) continue;
    for (auto& uid : DeadOwners(e->second, jobs, kc_name)) dead.insert(std::move(uid));
  }
  Action a;
  a.kind = Action::Kind::kCreateJob;
  a.name = GcJobName(kc_name, v.collectable);
  if (FindJob(jobs, a.name) != nullptr) return v;  // finished and being handled above
  a.object = BuildGcJob(kc, remove, settings, {dead.begin(), dead.end()});
  std::vector<std::string> what;
  for (const auto& id : v.collectable) {
    auto w = why.find(id);
    what.push_back(id + " (" + (w == why.end() ? "" : w->second) + ")");
  }
  v.effects.Event(
      "Normal", "GcStarted",
      "GC Job " + a.name + " removes the cache(s) of fingerprint(s) " + StrJoin(what, ", "));
  v.effects.actions.push_back(std::move(a));
  return v;
}

std::vector<Action> CleanupJobs(const std::vector<JobView>& jobs, const Entries& entries,
                                const std::string& kc_name) {
  Effects out;
  for (const auto& j : jobs) {
    if (!Ours(j, kc_name) || Component(j) != "warmup" || j.deleting) continue;
    const std::string id = JobFingerprint(j);
    auto e = entries.find(id);
    if (e == entries.end()) {
      out.DeleteJob(j);
      continue;
    }
    const FingerprintStatus& f = e->second;
    const bool finished = j.complete || j.failed_condition;
    if (finished && j.name != WarmupJobName(kc_name, id, f.warm_generation) && j.uid != f.job_uid) {
      out.DeleteJob(j);
    }
  }
  return std::move(out.actions);
}

}  // namespace kc::op::decide

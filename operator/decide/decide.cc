// Decide as a pipeline: each step (operator/decide/decide_*.h) is a function from
// what it reads to a verdict; this file threads the verdicts from step to
// step (spec -> storage -> node groups -> per fingerprint -> retirement ->
// GC -> job cleanup -> harvest -> summary) and assembles the Plan. The conditions each
// step decides are recorded here, over those last written.
#include "operator/decide/decide.h"

#include <algorithm>
#include <set>

#include "base/utf8.h"
#include "operator/decide/decide_fingerprint.h"
#include "operator/decide/decide_gc.h"
#include "operator/decide/decide_harvest.h"
#include "operator/decide/decide_misses.h"
#include "operator/decide/decide_nodes.h"
#include "operator/decide/decide_spec.h"
#include "operator/decide/decide_step.h"
#include "operator/decide/decide_storage.h"
#include "operator/decide/decide_summary.h"
#include "operator/decide/server_identity.h"

namespace kc::op {
namespace {

using api::Condition;
using core::FingerprintStatus;
using namespace decide;  // NOLINT(google-build-using-namespace): the steps
namespace cond = core::condition;

constexpr size_t kMaxConditionMessage = 32768;  // the CRD's maxLength of a condition message

// Conditions in a fixed order; ones not decided this pass keep their last
// value, and foreign types are kept after them.
constexpr std::string_view kOrder[] = {cond::kReady,          cond::kWarming,
                                       cond::kDegraded,       cond::kInvalidSpec,
                                       cond::kStorageReady,   cond::kNodesMissingLabels,
                                       cond::kImageNotPinned, cond::kWarmupUnschedulable,
                                       cond::kWarmupFits};

// The conditions decided this pass, over those last written.
class Conditions {
 public:
  Conditions(const std::vector<Condition>& prev, int64_t generation, Time now)
      : prev_(prev), generation_(generation), now_(now) {}

  const Condition* Prev(std::string_view type) const { return api::FindCondition(prev_, type); }

  // lastTransitionTime moves only when status changes.
  void Set(std::string_view type, const ConditionVerdict& v) {
    Condition c;
    c.type = std::string(type);
    c.status = v.value ? "True" : "False";
    c.reason = v.reason;
    c.message = TruncateUtf8(v.message, kMaxConditionMessage);
    c.observed_generation = generation_;
    const Condition* prev = Prev(type);
    c.last_transition_time = prev != nullptr && prev->status == c.status
                                 ? prev->last_transition_time
                                 : std::chrono::time_point_cast<seconds>(now_);
    decided_[c.type] = std::move(c);
  }

  const Condition* Decided(std::string_view type) const {
    auto it = decided_.find(std::string(type));
    return it == decided_.end() ? nullptr : &it->second;
  }

  std::vector<Condition> Ordered() const {
    std::vector<Condition> out;
    for (auto type : kOrder) {
      if (const Condition* c = Decided(type)) {
        out.push_back(*c);
      } else if (const Condition* p = Prev(type)) {
        out.push_back(*p);
      }
    }
    for (const auto& c : prev_) {
      if (std::find(std::begin(kOrder), std::end(kOrder), c.type) == std::end(kOrder)) {
        out.push_back(c);
      }
    }
    return out;
  }

 private:
  const std::vector<Condition>& prev_;
  const int64_t generation_;
  const Time now_;
  std::map<std::string, Condition> decided_;
};

Action FinalizerAction(Action::Kind kind) {
  Action a;
  a.kind = kind;
  a.name = std::string(core::kFinalizer);
  return a;
}

bool HasFinalizer(const core::KernelCache& kc) {
  const auto& fin = kc.metadata.finalizers;
  return std::find(fin.begin(), fin.end(), core::kFinalizer) != fin.end();
}

// Actions in order, a second delete of the same Job dropped, then Events.
std::vector<Action> Assemble(Effects effects) {
  std::vector<Action> out;
  std::set<std::string> deleted;
  for (auto& a : effects.actions) {
    const bool del = a.kind == Action::Kind::kDeleteJob || a.kind == Action::Kind::kCancelJob;
    if (del && !deleted.insert(a.name).second) continue;
    out.push_back(std::move(a));
  }
  for (auto& e : effects.events) out.push_back(std::move(e));
  return out;
}

// ---- deletion -------------------------------------------------------------

// The KernelCache is being deleted: its Jobs and the claim the operator
// created go, then the finalizer. Status unchanged: the object is going away.
Plan DecideDeletion(const Observed& obs) {
  const core::KernelCache& kc = obs.kc;
  Plan plan;
  plan.status = kc.status;
  if (!HasFinalizer(kc)) return plan;
  Effects e;
  int jobs = 0;
  for (const auto& j : obs.jobs) {
    if (!Ours(j, kc.metadata.name)) continue;
    e.DeleteJob(j);
    ++jobs;
  }
  std::string claim_note;
  if (!kc.spec.storage.existing_claim.empty()) {
    claim_note = "; kept existing claim " + kc.spec.storage.existing_claim;
  } else if (obs.pvc && obs.pvc->owned_by_us) {
    if (!obs.pvc->deleting) {
      Action a;
      a.kind = Action::Kind::kDeletePvc;
      a.name = obs.pvc->name;
      a.uid = obs.pvc->uid;
      e.actions.push_back(std::move(a));
    }
    claim_note = "; deleted claim " + obs.pvc->name;
  } else if (obs.pvc) {
    claim_note = "; kept claim " + obs.pvc->name + " (not created by the operator)";
  }
  e.actions.push_back(FinalizerAction(Action::Kind::kRemoveFinalizer));
  e.Event("Normal", "Cleanup", "deleted " + std::to_string(jobs) + " Job(s)" + claim_note);
  plan.actions = Assemble(std::move(e));
  return plan;
}

std::string Phase(const core::KernelCacheStatus& status, bool invalid, bool running) {
  if (invalid) return "Invalid";
  const Condition* ready = api::FindCondition(status.conditions, cond::kReady);
  const Condition* degraded = api::FindCondition(status.conditions, cond::kDegraded);
  if (degraded != nullptr && degraded->status == "True") return "Degraded";
  if (ready != nullptr && ready->status == "True") return "Ready";
  if (running) return "Warming";
  return "Pending";
}

// The status's counts, conditions and phase, the actions, the requeue.
Plan Finish(core::KernelCacheStatus status, const Summary& summary, const Conditions& conds,
            Effects effects, bool invalid, bool running,
            std::map<std::string, WarmupOutcome> recorded, Time now) {
  Plan plan;
  status.total_fingerprints = summary.total;
  status.ready_fingerprints = summary.ready;
  status.ready = ReadyText(summary);
  status.total_bytes = summary.bytes;
  status.size = api::FormatBytes(summary.bytes);
  status.conditions = conds.Ordered();
  status.phase = Phase(status, invalid, running);
  plan.status = std::move(status);
  if (effects.wake) {
    auto d = std::chrono::ceil<seconds>(*effects.wake - now);
    plan.requeue_after = std::max(d, seconds(1));
  }
  plan.actions = Assemble(std::move(effects));
  plan.recorded = std::move(recorded);
  return plan;
}

}  // namespace

Plan Decide(const Observed& obs, Time now) {
  const core::KernelCache& kc = obs.kc;
  if (kc.metadata.deletion_timestamp) return DecideDeletion(obs);

  core::KernelCacheStatus status = kc.status;
  status.observed_generation = kc.metadata.generation;
  status.claim_name = core::ClaimName(kc);
  Conditions conds(kc.status.conditions, kc.metadata.generation, now);
  Effects effects;
  if (!HasFinalizer(kc)) effects.actions.push_back(FinalizerAction(Action::Kind::kAddFinalizer));

  std::vector<std::string> spec_errors = obs.parse_errors;
  if (auto who = ServerIdentityProblem(kc.spec, kc.metadata.namespace_, obs.settings)) {
    spec_errors.push_back(*who);
  }
  SpecVerdict spec = CheckSpec(kc.spec, spec_errors, conds.Prev(cond::kInvalidSpec),
                               conds.Prev(cond::kImageNotPinned));
  conds.Set(cond::kInvalidSpec, spec.invalid_spec);
  if (spec.ready) conds.Set(cond::kReady, *spec.ready);
  if (spec.image_not_pinned) conds.Set(cond::kImageNotPinned, *spec.image_not_pinned);
  effects.Append(std::move(spec.effects));
  if (!spec.retention) {
    const Summary summary = Summarize(kc, status.fingerprints, nullptr, nullptr, nullptr);
    return Finish(std::move(status), summary, conds, std::move(effects), /*invalid=*/true,
                  /*running=*/false, {}, now);
  }
  const Retention& retention = *spec.retention;

  StorageVerdict storage =
      DecideStorage(kc, obs.pvc, obs.settings, conds.Prev(cond::kStorageReady), now);
  conds.Set(cond::kStorageReady, storage.ready);
  effects.Append(std::move(storage.effects));

  NodeGroups nodes = GroupNodes(kc.spec, obs.nodes, conds.Prev(cond::kNodesMissingLabels),
                                conds.Prev(cond::kWarmupFits));
  conds.Set(cond::kNodesMissingLabels, nodes.missing_labels);
  conds.Set(cond::kWarmupFits, nodes.warmup_fits);
  effects.Append(std::move(nodes.effects));

  // Each fingerprint some node carries: refreshed, its Job's outcome
  // recorded, its next Job chosen.
  Entries entries;
  for (const auto& f : kc.status.fingerprints) entries[f.id] = f;
  const FingerprintInputs in{kc,           obs.jobs,       obs.pods,        obs.gate_reports,
                             obs.settings, storage.usable, retention.purge, now};
  Findings findings;
  findings.storage_usable = storage.usable;
  findings.storage_message = conds.Decided(cond::kStorageReady)->message;
  findings.nodes = &nodes;
  findings.max_bytes = retention.max_bytes;
  std::map<std::string, WarmupOutcome> recorded;
  std::set<std::string> in_use;
  for (const auto& [id, g] : nodes.groups) {
    in_use.insert(id);
    auto it = entries.find(id);
    FingerprintUpdate seen = SeenOnNodes(it == entries.end() ? nullptr : &it->second, id, g, now);
    FingerprintStep step = StepFingerprint(std::move(seen.status), g, in);
    FoldNewFingerprint(seen.effects, step.effects, g.nodes);
    effects.Append(std::move(seen.effects));
    effects.Append(std::move(step.effects));
    for (auto& r : step.running) findings.running.push_back(std::move(r));
    if (step.unschedulable) findings.unschedulable.emplace_back(id, std::move(*step.unschedulable));
    if (step.outcome) recorded[id] = *step.outcome;
    entries[id] = std::move(step.status);
  }

  // The rest: retired, collected, their Jobs cleaned up.
  Retirement retired =
      Retire(std::move(entries), in_use, nodes.node_fp, obs.jobs, kc, retention, now);
  effects.Append(std::move(retired.effects));
  GcVerdict gc = CollectGarbage(std::move(retired.entries), std::move(retired.collectable),
                                retired.why, obs.jobs, kc, obs.settings, storage.usable, now);
  effects.Append(std::move(gc.effects));
  for (auto& a : CleanupJobs(obs.jobs, gc.entries, kc.metadata.name)) {
    effects.actions.push_back(std::move(a));
  }

  HarvestVerdict harvest = DecideHarvest(std::move(gc.entries), kc, obs.jobs, obs.pods,
                                         obs.runtime_misses, obs.settings, storage.usable, now);
  effects.Append(std::move(harvest.effects));

  std::map<std::string, const core::FingerprintStatus*> stored;
  for (const auto& f : kc.status.fingerprints) stored[f.id] = &f;
  for (auto& [id, f] : harvest.entries) {
    auto b = stored.find(id);
    auto o = obs.runtime_misses.find(id);
    f.runtime_misses = RuntimeMissesAfter(b == stored.end() ? nullptr : b->second, f,
                                          o == obs.runtime_misses.end() ? nullptr : &o->second);
  }
  status.fingerprints.clear();
  for (auto& [id, f] : harvest.entries) status.fingerprints.push_back(std::move(f));  // by id
  Summary summary = Summarize(kc, status.fingerprints, &findings, conds.Prev(cond::kDegraded),
                              conds.Prev(cond::kWarmupUnschedulable));
  if (summary.ready_condition) conds.Set(cond::kReady, *summary.ready_condition);
  if (summary.unschedulable) conds.Set(cond::kWarmupUnschedulable, *summary.unschedulable);
  if (summary.warming) conds.Set(cond::kWarming, *summary.warming);
  if (summary.degraded) conds.Set(cond::kDegraded, *summary.degraded);
  effects.Append(std::move(summary.effects));
  return Finish(std::move(status), summary, conds, std::move(effects), /*invalid=*/false,
                !findings.running.empty(), std::move(recorded), now);
}

}  // namespace kc::op

#include "operator/decide.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include "base/duration.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "core/fingerprint.h"
#include "core/spec_validation.h"
#include "operator/names.h"
#include "operator/termination_message.h"
#include "operator/unschedulable.h"
#include "operator/warmup_job.h"

namespace kc::op {
namespace {

using core::Condition;
using core::FingerprintStatus;
using std::chrono::seconds;
namespace cond = core::condition;
namespace st = core::fp_state;

constexpr seconds kSealGrace{60};  // wait this long for a succeeded Job's pod to appear
constexpr seconds kGcRetry{300};   // a failed GC Job is retried after this
constexpr size_t kMaxListed = 5;   // nodes/fingerprints named in one message
constexpr size_t kMaxConditionMessage = 32768;  // the CRD's maxLength of a condition message

// "a, b, c and 4 more"
std::string ListSome(const std::vector<std::string>& v) {
  if (v.size() <= kMaxListed) return StrJoin(v, ", ");
  std::vector<std::string> head(v.begin(), v.begin() + kMaxListed);
  return StrJoin(head, ", ") + " and " + std::to_string(v.size() - kMaxListed) + " more";
}

std::string Human(seconds s) {
  const int64_t n = s.count();
  if (n % 3600 == 0 && n >= 3600) return std::to_string(n / 3600) + "h";
  if (n % 60 == 0 && n >= 60) return std::to_string(n / 60) + "m";
  return std::to_string(n) + "s";
}

std::string Describe(const FingerprintStatus& f) {
  return f.id + " (" + f.gpu_product + ", sm " + f.compute_capability + ", driver " + f.driver +
         ", CUDA " + f.cuda_driver + ", " + f.arch + ")";
}

struct Group {
  core::NodeFacts facts;
  int32_t nodes = 0;
  std::vector<std::map<std::string, std::string>> label_sets;  // eligible nodes', distinct
  std::vector<std::string> eligible;
  std::vector<std::string> ineligible;  // "gpu-07 (cordoned)"
  std::vector<std::string> names;       // every node carrying it
};

// Why a node may not run a warmup now; "" when it may.
std::string Ineligible(const NodeView& n) {
  if (n.unschedulable) return "cordoned";
  if (!n.ready) return "NotReady";
  auto it = n.labels.find(std::string(core::labels::kDriverUpgradeState));
  if (it != n.labels.end() && !it->second.empty() && it->second != "upgrade-done") {
    return "GPU driver upgrade: " + it->second;
  }
  if (n.gpu_allocatable <= 0) return "no allocatable nvidia.com/gpu";
  return "";
}

class Decider {
 public:
  Decider(const Observed& obs, Time now)
      : obs_(obs), kc_(obs.kc), now_(now), gen_(obs.kc.metadata.generation) {}

  Plan Run() {
    plan_.status = kc_.status;
    if (kc_.metadata.deletion_timestamp) return Delete();
    const auto& fin = kc_.metadata.finalizers;
    if (std::find(fin.begin(), fin.end(), core::kFinalizer) == fin.end()) {
      Action a;
      a.kind = Action::Kind::kAddFinalizer;
      a.name = std::string(core::kFinalizer);
      plan_.actions.push_back(std::move(a));
    }
    auto& status = plan_.status;
    status.observed_generation = gen_;
    status.claim_name = core::ClaimName(kc_);

    if (!CheckSpec()) {
      invalid_ = true;
      Summarize();
      return Finish();
    }
    Storage();
    GroupNodes();
    Fingerprints();
    CollectGarbage();
    CleanupJobs();
    Summarize();
    return Finish();
  }

 private:
  // ---- helpers ----------------------------------------------------------

  const Condition* Prev(std::string_view type) const {
    return core::FindCondition(kc_.status.conditions, type);
  }

  // Records a condition; lastTransitionTime moves only when status changes.
  void SetCondition(std::string_view type, bool value, const std::string& reason,
                    const std::string& message) {
    Condition c;
    c.type = std::string(type);
    c.status = value ? "True" : "False";
    c.reason = reason;
    c.message = TruncateUtf8(message, kMaxConditionMessage);
    c.observed_generation = gen_;
    const Condition* prev = Prev(type);
    c.last_transition_time = prev != nullptr && prev->status == c.status
                                 ? prev->last_transition_time
                                 : std::chrono::time_point_cast<seconds>(now_);
    conditions_[c.type] = std::move(c);
  }

  // True when the previous status did not already say (type, value, reason).
  bool Changed(std::string_view type, bool value, const std::string& reason) const {
    const Condition* p = Prev(type);
    return p == nullptr || p->status != (value ? "True" : "False") || p->reason != reason;
  }

  void Event(const std::string& type, const std::string& reason, const std::string& message) {
    Action a;
    a.kind = Action::Kind::kEmitEvent;
    a.event_type = type;
    a.event_reason = reason;
    // events.k8s.io caps a note at 1 KiB; keep every message under it.
    a.event_message = TruncateUtf8(message, 1000);
    events_.push_back(std::move(a));
  }

  void WakeAt(Time t) {
    if (t <= now_) t = now_ + seconds(1);
    if (!wake_ || t < *wake_) wake_ = t;
  }

  void DeleteJob(const JobView& j) {
    if (j.deleting || deleted_.count(j.name) > 0) return;
    deleted_.insert(j.name);
    Action a;
    a.kind = Action::Kind::kDeleteJob;
    a.name = j.name;
    a.uid = j.uid;
    plan_.actions.push_back(std::move(a));
  }

  void SetState(FingerprintStatus& f, std::string_view state) {
    if (f.state == state) return;
    f.state = std::string(state);
    f.last_transition_time = std::chrono::time_point_cast<seconds>(now_);
  }

  seconds Backoff(int32_t failures) const {
    const auto& s = obs_.settings;
    seconds d = s.retry_base;
    for (int32_t i = 1; i < failures && d < s.retry_cap; ++i) d *= 2;
    return std::min(d, s.retry_cap);
  }

  Time RetryAt(const FingerprintStatus& f) const {
    return f.last_failure_time.value_or(now_) + Backoff(std::max(f.failures, 1));
  }

  const JobView* FindJob(const std::string& name) const {
    for (const auto& j : obs_.jobs) {
      if (j.name == name) return &j;
    }
    return nullptr;
  }

  bool Ours(const JobView& j) const {
    auto it = j.labels.find(kLabelName);
    return it != j.labels.end() && it->second == kc_.metadata.name;
  }

  std::string Component(const JobView& j) const {
    auto it = j.labels.find(kLabelComponent);
    return it == j.labels.end() ? "warmup" : it->second;
  }

  std::string JobFingerprint(const JobView& j) const {
    auto it = j.labels.find(kLabelFingerprint);
    return it == j.labels.end() ? "" : it->second;
  }

  // ---- deletion -----------------------------------------------------------

  Plan Delete() {
    const auto& fin = kc_.metadata.finalizers;
    if (std::find(fin.begin(), fin.end(), core::kFinalizer) == fin.end()) return plan_;
    int jobs = 0;
    for (const auto& j : obs_.jobs) {
      if (!Ours(j)) continue;
      DeleteJob(j);
      ++jobs;
    }
    std::string claim_note;
    if (!kc_.spec.storage.existing_claim.empty()) {
      claim_note = "; kept existing claim " + kc_.spec.storage.existing_claim;
    } else if (obs_.pvc && obs_.pvc->owned_by_us) {
      if (!obs_.pvc->deleting) {
        Action a;
        a.kind = Action::Kind::kDeletePvc;
        a.name = obs_.pvc->name;
        a.uid = obs_.pvc->uid;
        plan_.actions.push_back(std::move(a));
      }
      claim_note = "; deleted claim " + obs_.pvc->name;
    } else if (obs_.pvc) {
      claim_note = "; kept claim " + obs_.pvc->name + " (not created by the operator)";
    }
    Action rm;
    rm.kind = Action::Kind::kRemoveFinalizer;
    rm.name = std::string(core::kFinalizer);
    plan_.actions.push_back(std::move(rm));
    Event("Normal", "Cleanup", "deleted " + std::to_string(jobs) + " Job(s)" + claim_note);
    for (auto& e : events_) plan_.actions.push_back(std::move(e));
    return plan_;  // status unchanged: the object is going away
  }

  // ---- spec -------------------------------------------------------------

  bool CheckSpec() {
    std::vector<std::string> errors = obs_.parse_errors;
    const core::SpecReport report = core::ValidateSpec(kc_.spec);
    errors.insert(errors.end(), report.errors.begin(), report.errors.end());
    if (!errors.empty()) {
      const std::string msg = StrJoin(errors, "; ");
      const Condition* p = Prev(cond::kInvalidSpec);
      if (p == nullptr || p->status != "True" || p->message != msg) {
        Event("Warning", "InvalidSpec", msg);
      }
      SetCondition(cond::kInvalidSpec, true, "InvalidSpec", msg);
      SetCondition(cond::kReady, false, "InvalidSpec",
                   "the spec is invalid; nothing is warmed until it is fixed: " + msg);
      return false;
    }
    SetCondition(cond::kInvalidSpec, false, "SpecValid", "the spec is valid");
    // ValidateSpec accepted these; no .value() that could throw regardless.
    if (auto d = ParseDuration(kc_.spec.retention.stale_after); d.ok()) stale_after_ = *d;
    if (auto d = ParseDuration(kc_.spec.retention.absent_after); d.ok()) absent_after_ = *d;
    if (!kc_.spec.retention.purge_schedule.empty()) {
      if (auto d = ParseDuration(kc_.spec.retention.purge_schedule); d.ok()) purge_ = *d;
    }
    if (!kc_.spec.retention.max_bytes.empty()) {
      if (auto b = core::ParseQuantityBytes(kc_.spec.retention.max_bytes); b.ok()) max_bytes_ = *b;
    }
    std::vector<std::string> image_warnings;
    for (const auto& w : report.warnings) {
      if (w.rfind("spec.image", 0) == 0) image_warnings.push_back(w);
    }
    if (!image_warnings.empty()) {
      if (Changed(cond::kImageNotPinned, true, "TagNotDigest")) {
        Event("Warning", "ImageNotPinned", image_warnings[0]);
      }
      SetCondition(cond::kImageNotPinned, true, "TagNotDigest", image_warnings[0]);
    } else {
      SetCondition(cond::kImageNotPinned, false, "DigestPinned", "the image is pinned by digest");
    }
    return true;
  }

  // ---- storage ----------------------------------------------------------

  void Storage() {
    const std::string claim = core::ClaimName(kc_);
    const bool existing = !kc_.spec.storage.existing_claim.empty();
    auto set = [&](bool ok, const std::string& reason, const std::string& msg, bool warn) {
      if (warn && Changed(cond::kStorageReady, ok, reason)) Event("Warning", reason, msg);
      SetCondition(cond::kStorageReady, ok, reason, msg);
    };
    const auto& pvc = obs_.pvc;
    if (!pvc) {
      if (existing) {
        set(false, "ClaimNotFound",
            "claim " + claim + " (spec.storage.existingClaim) not found in namespace " +
                kc_.metadata.namespace_ +
                "; create a ReadWriteMany claim of that name or use spec.storage.size",
            true);
        storage_usable_ = false;
        return;
      }
      Action a;
      a.kind = Action::Kind::kCreatePvc;
      a.name = claim;
      a.object = BuildPvc(kc_);
      plan_.actions.push_back(std::move(a));
      Event("Normal", "ClaimCreated",
            "created ReadWriteMany claim " + claim + " of " + kc_.spec.storage.size);
      set(false, "Binding", "created claim " + claim + "; waiting for it to bind", false);
      WakeAt(now_ + obs_.settings.pvc_binding_grace);
      storage_usable_ = true;
      return;
    }
    if (pvc->deleting) {
      set(false, "ClaimTerminating", "claim " + claim + " is being deleted", true);
      storage_usable_ = false;
      return;
    }
    const bool rwx = std::find(pvc->access_modes.begin(), pvc->access_modes.end(),
                               "ReadWriteMany") != pvc->access_modes.end();
    if (!rwx) {
      set(false, "NotReadWriteMany",
          "claim " + claim + " has access modes [" + StrJoin(pvc->access_modes, ", ") +
              "]; warmup Jobs and model pods on many nodes share it, so it must be "
              "ReadWriteMany (use a class such as NFS, CephFS, EFS, Filestore)",
          true);
      storage_usable_ = false;
      return;
    }
    storage_usable_ = true;
    if (pvc->phase == "Bound") {
      set(true, "Bound", "claim " + claim + " is bound", false);
    } else if (pvc->phase == "Pending" || pvc->phase.empty()) {
      const Time deadline = pvc->created + obs_.settings.pvc_binding_grace;
      if (now_ < deadline) {
        set(false, "Binding", "waiting for claim " + claim + " to bind", false);
        WakeAt(deadline);
      } else {
        set(false, "WaitingForBinding",
            "claim " + claim + " is still Pending after " + Human(obs_.settings.pvc_binding_grace) +
                "; check its storage class and provisioner (kubectl describe pvc " + claim +
                "). A WaitForFirstConsumer class binds when the first warmup pod is scheduled",
            true);
      }
    } else {
      set(false, "Claim" + pvc->phase, "claim " + claim + " is " + pvc->phase, true);
      storage_usable_ = false;
    }
  }

  // ---- nodes -> fingerprints ----------------------------------------------

  void GroupNodes() {
    const core::RuntimeFacts runtime = core::RuntimeFactsFor(kc_.spec);
    std::vector<std::string> missing;  // "gpu-07 (missing label ...)"
    const Condition* prev_missing = Prev(cond::kNodesMissingLabels);
    for (const auto& n : obs_.nodes) {
      bool match = true;
      for (const auto& [k, v] : kc_.spec.node_selector) {
        auto it = n.labels.find(k);
        if (it == n.labels.end() || it->second != v) match = false;
      }
      if (!match) continue;
      auto facts = core::NodeFactsFromLabels(n.labels);
      if (!facts.ok()) {
        missing.push_back(n.name + " (" + facts.status().message() + ")");
        // One Event per node the condition names (the first kMaxListed; the
        // rest are counted there), once: not when the last status named it.
        if (missing.size() <= kMaxListed &&
            (prev_missing == nullptr || prev_missing->status != "True" ||
             prev_missing->message.find(n.name + " (") == std::string::npos)) {
          Event("Warning", "NodeMissingLabels",
                "node " + n.name + " is not warmed: " + facts.status().message() +
                    "; is GPU Feature Discovery running on it?");
        }
        continue;
      }
      const std::string id = core::ComputeFingerprint(*facts, runtime).id;
      Group& g = groups_[id];
      g.facts = *facts;
      ++g.nodes;
      g.names.push_back(n.name);
      node_fp_[n.name] = id;
      const std::string why = Ineligible(n);
      if (why.empty()) {
        g.eligible.push_back(n.name);
        auto labels = core::FingerprintLabels(n.labels);
        if (std::find(g.label_sets.begin(), g.label_sets.end(), labels) == g.label_sets.end()) {
          g.label_sets.push_back(std::move(labels));
        }
      } else {
        g.ineligible.push_back(n.name + " (" + why + ")");
      }
    }
    if (missing.empty()) {
      SetCondition(cond::kNodesMissingLabels, false, "AllLabelled",
                   "every matching node carries the GPU Feature Discovery labels");
    } else {
      SetCondition(
          cond::kNodesMissingLabels, true, "MissingGpuLabels",
          std::to_string(missing.size()) +
              " node(s) lack GPU Feature Discovery labels and get no cache: " + ListSome(missing));
    }
  }

  // ---- per fingerprint ----------------------------------------------------

  void Fingerprints() {
    fingerprints_computed_ = true;
    for (const auto& f : kc_.status.fingerprints) entries_[f.id] = f;
    for (const auto& [id, g] : groups_) {
      auto [it, inserted] = entries_.try_emplace(id);
      FingerprintStatus& f = it->second;
      if (inserted) {
        f.id = id;
        f.state = std::string(st::kPending);
        f.last_transition_time = std::chrono::time_point_cast<seconds>(now_);
      }
      f.gpu_product = g.facts.gpu_product;
      f.compute_capability = g.facts.compute_capability;
      f.driver = g.facts.driver_version;
      f.cuda_driver = g.facts.cuda_driver_version;
      f.arch = g.facts.arch;
      f.nodes = g.nodes;
      if (inserted) {
        Event("Normal", "NewFingerprint",
              "fingerprint " + Describe(f) + " on " + std::to_string(g.nodes) + " node(s)");
      }
      if (f.state == st::kStale || f.state == st::kAbsent) {
        f.stale_since.reset();
        f.absent_since.reset();
        SetState(f, !f.manifest_digest.empty() ? st::kReady : st::kPending);
        Event("Normal", "FingerprintInUse",
              "fingerprint " + f.id + " is carried by a node again; state " + f.state);
      }
      // Remembered for when no node carries it: Stale or Absent.
      std::vector<std::string> names = g.names;
      std::sort(names.begin(), names.end());
      if (names.size() > core::kMaxLastNodes) names.resize(core::kMaxLastNodes);
      f.last_nodes = std::move(names);
      InUse(f, g);
    }
    std::vector<const FingerprintStatus*> absent;  // may be collected early for maxBytes
    for (auto& [id, f] : entries_) {
      if (groups_.count(id) > 0) continue;
      f.nodes = 0;
      // Nodes it was last seen on that now carry another fingerprint: its
      // nodes changed (Stale). None: its nodes went away (Absent).
      std::vector<std::string> moved;
      for (const auto& n : f.last_nodes) {
        auto it = node_fp_.find(n);
        if (it != node_fp_.end() && it->second != id)
          moved.push_back(n + " (now " + it->second + ")");
      }
      if (f.state != st::kStale && !moved.empty()) {
        SetState(f, st::kStale);
        f.stale_since = std::chrono::time_point_cast<seconds>(now_);
        f.absent_since.reset();
        Event("Normal", "FingerprintStale",
              "no matching node carries fingerprint " + Describe(f) + " any more; its node(s) " +
                  ListSome(moved) + " changed fingerprint; its cache is removed after " +
                  kc_.spec.retention.stale_after);
      } else if (f.state != st::kStale && f.state != st::kAbsent) {
        SetState(f, st::kAbsent);
        f.absent_since = std::chrono::time_point_cast<seconds>(now_);
        Event("Normal", "FingerprintAbsent",
              "no matching node carries fingerprint " + Describe(f) +
                  " any more and none of its nodes" +
                  (f.last_nodes.empty() ? "" : " (" + ListSome(f.last_nodes) + ")") +
                  " carries another fingerprint (a pool scaled to zero?); its cache is kept "
                  "for spec.retention.absentAfter " +
                  kc_.spec.retention.absent_after +
                  (max_bytes_ ? " or until spec.retention.maxBytes needs the space" : ""));
      }
      // A warmup that can no longer be placed is stopped.
      for (const auto& j : obs_.jobs) {
        if (Ours(j) && Component(j) == "warmup" && JobFingerprint(j) == id && !j.complete &&
            !j.failed_condition) {
          DeleteJob(j);
        }
      }
      const bool stale = f.state == st::kStale;
      const Time collect_at = stale ? f.stale_since.value_or(now_) + stale_after_
                                    : f.absent_since.value_or(now_) + absent_after_;
      if (now_ >= collect_at) {
        collectable_.push_back(id);
        why_collected_[id] = stale ? "stale for more than " + kc_.spec.retention.stale_after
                                   : "absent for more than " + kc_.spec.retention.absent_after;
      } else {
        WakeAt(collect_at);
        if (!stale) absent.push_back(&f);
      }
    }
    CollectAbsentForBudget(std::move(absent));
  }

  // Over spec.retention.maxBytes: Absent caches (which no node needs now)
  // make room, the longest absent first, until the rest fits. Stale ones
  // keep their own, shorter, grace; caches in use are never collected.
  void CollectAbsentForBudget(std::vector<const FingerprintStatus*> absent) {
    if (!max_bytes_) return;
    int64_t bytes = 0;
    for (const auto& [id, f] : entries_) {
      const bool collected =
          std::find(collectable_.begin(), collectable_.end(), id) != collectable_.end();
      if (!f.manifest_digest.empty() && !collected) bytes += f.bytes;
    }
    std::sort(absent.begin(), absent.end(), [](const auto* a, const auto* b) {
      return std::tie(a->absent_since, a->id) < std::tie(b->absent_since, b->id);
    });
    for (const FingerprintStatus* f : absent) {
      if (bytes <= *max_bytes_) break;
      if (f->manifest_digest.empty() || f->bytes <= 0) continue;
      collectable_.push_back(f->id);
      why_collected_[f->id] = "absent, its " + core::FormatBytes(f->bytes) +
                              " needed under spec.retention.maxBytes " +
                              kc_.spec.retention.max_bytes;
      bytes -= f->bytes;
    }
  }

  const PodView* SealPod(const JobView& j, bool* any_pod) const {
    const PodView* best = nullptr;
    *any_pod = false;
    for (const auto& p : obs_.pods) {
      if (p.job_name != j.name) continue;
      *any_pod = true;
      if (!p.seal_message) continue;
      if (best == nullptr || (p.phase == "Succeeded" && best->phase != "Succeeded") ||
          (p.phase == best->phase && p.created > best->created)) {
        best = &p;
      }
    }
    return best;
  }

  std::string PodFailure(const JobView& j) const {
    const PodView* latest = nullptr;
    for (const auto& p : obs_.pods) {
      if (p.job_name != j.name || p.failure_summary.empty()) continue;
      if (latest == nullptr || p.created > latest->created) latest = &p;
    }
    if (latest == nullptr) return "";
    return latest->failure_summary +
           (latest->node_name.empty() ? "" : " on node " + latest->node_name);
  }

  void RecordFailure(FingerprintStatus& f, const JobView& j, const std::string& reason,
                     const std::string& event_reason) {
    if (f.failures < std::numeric_limits<int32_t>::max()) ++f.failures;
    f.last_failure = TruncateUtf8(reason, 1027);
    f.last_failure_time = std::chrono::time_point_cast<seconds>(j.finished.value_or(now_));
    f.job_uid = j.uid;
    f.job = j.name;
    const bool kept = f.state == st::kReady;
    if (!kept) SetState(f, st::kFailed);
    Event(
        "Warning", event_reason,
        "warmup Job " + j.name + " for fingerprint " + f.id + " failed (" +
            std::to_string(f.failures) + " in a row): " + f.last_failure + "; retry in " +
            Human(Backoff(f.failures)) +
            (kept ? "; the Ready cache sealed at " + core::FormatTime(*f.ready_at) + " stays in use"
                  : ""));
  }

  void RecordSuccess(FingerprintStatus& f, const JobView& j, const SealResult& r,
                     const PodView& pod) {
    f.bytes = r.bytes;
    f.files = r.files;
    f.manifest_digest = r.manifest_digest;
    f.ready_at = std::chrono::time_point_cast<seconds>(j.finished.value_or(now_));
    f.failures = 0;
    f.last_failure.clear();
    f.last_failure_time.reset();
    f.job_uid = j.uid;
    f.job = j.name;
    const bool was_ready = f.state == st::kReady;
    SetState(f, st::kReady);
    f.last_transition_time = f.ready_at;  // a re-warm is a transition to a new cache
    Event("Normal", was_ready ? "CacheRewarmed" : "CacheReady",
          "fingerprint " + f.id + " ready: " + core::FormatBytes(r.bytes) + " in " +
              std::to_string(r.files) + " files, sealed by Job " + j.name +
              (pod.node_name.empty() ? "" : " on node " + pod.node_name));
  }

  // Owners (Job uids) of this fingerprint's earlier warmups that can no
  // longer write: the Job whose outcome the status records (recorded only
  // once it finished) and every Job of it seen Complete or Failed (a Job's
  // terminal condition comes after its pods have terminated). The next
  // warmup's prepare may break their lock at once (item: a failed warmup
  // never reaches seal, which releases it). A running Job is never listed.
  std::vector<std::string> DeadOwners(const FingerprintStatus& f) const {
    std::set<std::string> dead;
    if (!f.job_uid.empty()) dead.insert(f.job_uid);
    for (const auto& j : obs_.jobs) {
      if (Ours(j) && Component(j) == "warmup" && JobFingerprint(j) == f.id && !j.uid.empty() &&
          (j.complete || j.failed_condition)) {
        dead.insert(j.uid);
      }
    }
    for (const auto& j : obs_.jobs) {
      if (!j.complete && !j.failed_condition) dead.erase(j.uid);  // never a live one
    }
    return {dead.begin(), dead.end()};
  }

  void CreateWarmup(FingerprintStatus& f, const Group& g, const std::string& name) {
    Action a;
    a.kind = Action::Kind::kCreateJob;
    a.name = name;
    a.object = BuildWarmupJob(kc_, f.id, g.facts, f.warm_generation, g.label_sets, obs_.settings,
                              DeadOwners(f));
    plan_.actions.push_back(std::move(a));
    f.job = name;
    if (f.state != st::kReady && f.state != st::kDegraded) SetState(f, st::kWarming);
    running_.push_back(name);
    Event("Normal", "WarmupStarted",
          "Job " + name + " warms fingerprint " + Describe(f) + " on one of " +
              std::to_string(g.eligible.size()) + " eligible node(s): " + ListSome(g.eligible));
  }

  // A gated pod's report that it quarantined the cache the status records
  // for `f` (matched by manifest digest, so a report about an older cache
  // does nothing): forget the cache, mark it Degraded and bump the warm
  // generation, so InUse creates a new warmup Job.
  void GateReports(FingerprintStatus& f) {
    if (f.manifest_digest.empty()) return;
    for (const auto& g : obs_.gate_reports) {
      for (const auto& q : g.report.quarantined) {
        const std::string& digest = q.expected_digest.empty() ? q.found_digest : q.expected_digest;
        if (q.fingerprint != f.id || digest != f.manifest_digest) continue;
        if (g.finished && f.ready_at && *g.finished < *f.ready_at) continue;
        const std::string what = "pod " + g.pod + (g.node.empty() ? "" : " on node " + g.node) +
                                 " found the cache of fingerprint " + f.id + " bad (" + q.level +
                                 (q.file.empty() ? "" : ": " + q.file) + ": " + q.reason + ")" +
                                 (q.moved_to.empty() ? "" : " and quarantined it");
        f.manifest_digest.clear();
        f.bytes = f.files = 0;
        f.ready_at.reset();
        f.last_failure = "CacheQuarantined: " + what;
        if (f.last_failure.size() > 1024) f.last_failure = f.last_failure.substr(0, 1024) + "...";
        SetState(f, st::kDegraded);
        // A warmup of it already running (a purge re-warm) re-seals it; a
        // second live writer would only meet the lock.
        const bool warming = std::any_of(obs_.jobs.begin(), obs_.jobs.end(), [&](const JobView& j) {
          return Ours(j) && Component(j) == "warmup" && JobFingerprint(j) == f.id && !j.complete &&
                 !j.failed_condition && !j.deleting;
        });
        if (!warming) ++f.warm_generation;
        Event("Warning", "CacheQuarantined", what + "; re-warming it");
        return;
      }
    }
  }

  void InUse(FingerprintStatus& f, const Group& g) {
    GateReports(f);
    std::string want = WarmupJobName(kc_.metadata.name, f.id, f.warm_generation);
    const JobView* job = FindJob(want);
    if (job != nullptr && !Ours(*job)) job = nullptr;
    if (job != nullptr && job->deleting) {
      if (f.state != st::kReady) running_.push_back(want + " (deleting)");
      return;
    }
    const bool finished = job != nullptr && (job->complete || job->failed_condition);
    if (finished && f.job_uid != job->uid) {
      if (job->complete) {
        bool any_pod = false;
        const PodView* pod = SealPod(*job, &any_pod);
        if (pod == nullptr && !any_pod && now_ < job->finished.value_or(now_) + kSealGrace) {
          WakeAt(job->finished.value_or(now_) + kSealGrace);  // pod not in the cache yet
          return;
        }
        if (pod == nullptr) {
          RecordFailure(f, *job,
                        "NoSealResult: Job " + job->name +
                            " succeeded but no seal termination message was found",
                        "BadTerminationMessage");
        } else {
          auto r = CheckSealResult(*pod->seal_message, f.id);
          if (r.ok()) {
            RecordSuccess(f, *job, *r, *pod);
          } else {
            const std::string m = r.status().message();
            RecordFailure(f, *job, m, m.substr(0, m.find(':')));
          }
        }
      } else {
        std::string reason = job->failure_reason.empty() ? "Failed" : job->failure_reason;
        const std::string pod_failure = PodFailure(*job);
        const std::string detail = !pod_failure.empty() ? pod_failure : job->failure_message;
        RecordFailure(f, *job, detail.empty() ? reason : reason + ": " + detail, "WarmupFailed");
      }
    }
    if (job != nullptr && !finished) {
      if (f.state != st::kReady && f.state != st::kDegraded) SetState(f, st::kWarming);
      f.job = want;
      running_.push_back(want);
      Unschedulable(f, *job);
      return;
    }
    const bool can_create = storage_usable_ && !g.label_sets.empty();
    if (job != nullptr && f.failures > 0 && f.job_uid == job->uid) {
      // The Job failed (or sealed something wrong): remove it after the
      // backoff; the next pass creates it again under the same name.
      const Time retry = RetryAt(f);
      if (now_ < retry) {
        WakeAt(retry);
      } else if (can_create) {
        DeleteJob(*job);
      }
      return;
    }
    if (job == nullptr && f.state == st::kWarming) SetState(f, st::kPending);  // Job vanished
    bool purge_due = false;
    if (f.state == st::kReady && purge_ && f.ready_at) {
      const Time due = *f.ready_at + *purge_;
      if (now_ >= due) {
        purge_due = true;
      } else {
        WakeAt(due);
      }
    }
    if (purge_due && (job == nullptr || f.job_uid == job->uid)) {
      if (!can_create) return;
      ++f.warm_generation;
      want = WarmupJobName(kc_.metadata.name, f.id, f.warm_generation);
      Event("Normal", "PurgeRewarm",
            "cache of fingerprint " + f.id + " sealed at " + core::FormatTime(*f.ready_at) +
                " is older than spec.retention.purgeSchedule " + kc_.spec.retention.purge_schedule +
                "; re-warming from scratch (it serves until "
                "the new one is sealed)");
      if (FindJob(want) == nullptr) CreateWarmup(f, g, want);
      return;
    }
    if (job != nullptr || f.state == st::kReady) return;
    if (f.state == st::kFailed && f.last_failure_time && now_ < RetryAt(f)) {
      WakeAt(RetryAt(f));
      return;
    }
    if (can_create) CreateWarmup(f, g, want);
  }

  // A running warmup whose pod the scheduler cannot place (a full GPU pool,
  // e.g. every GPU held by model pods waiting in their gate for this cache).
  void Unschedulable(const FingerprintStatus& f, const JobView& job) {
    std::optional<Time> wake;
    auto u = FindUnschedulableWarmup(job.name, obs_.pods, now_, obs_.settings.unschedulable_grace,
                                     &wake);
    if (wake) WakeAt(*wake);
    if (!u) return;
    const PodView* pod = nullptr;
    for (const auto& p : obs_.pods) {
      if (p.name == u->pod) pod = &p;
    }
    const std::string since = pod != nullptr && pod->unschedulable_since
                                  ? core::FormatTime(*pod->unschedulable_since)
                                  : "";
    unschedulable_.push_back({f.id, "fingerprint " + Describe(f) + ": warmup pod " + u->pod +
                                        " of Job " + job.name + " unschedulable since " + since +
                                        (u->message.empty() ? "" : ": " + u->message)});
  }

  void ReportUnschedulable() {
    const Condition* prev = Prev(cond::kWarmupUnschedulable);
    if (unschedulable_.empty()) {
      if (prev != nullptr) {
        SetCondition(cond::kWarmupUnschedulable, false, "Scheduled",
                     "every warmup pod is scheduled");
      }
      return;
    }
    std::vector<std::string> what;
    for (const auto& [id, msg] : unschedulable_) {
      what.push_back(msg);
      const bool said = prev != nullptr && prev->status == "True" &&
                        prev->message.find("fingerprint " + id + " (") != std::string::npos;
      if (!said) {
        Event("Warning", "WarmupUnschedulable",
              msg +
                  "; model pods waiting in their gate may hold every GPU of the pool: give "
                  "warmup pods a PriorityClass that may preempt them (the chart's "
                  "kernelcache-warmup, --warmup-priority-class) or free a GPU; onTimeout "
                  "StartCold pods start cold meanwhile");
      }
    }
    SetCondition(cond::kWarmupUnschedulable, true, "Unschedulable",
                 std::to_string(what.size()) +
                     " warmup(s) cannot be scheduled: " + StrJoin(what, "; ") +
                     ". onTimeout StartCold pods start cold; Fail pods keep waiting");
  }

  // ---- GC -------------------------------------------------------------------

  void CollectGarbage() {
    bool gc_running = false;
    for (const auto& j : obs_.jobs) {
      if (!Ours(j) || Component(j) != "gc" || j.deleting) continue;
      std::vector<std::string> ids;
      auto it = j.annotations.find(kAnnotationGcIds);
      if (it != j.annotations.end()) {
        size_t start = 0;
        const std::string& s = it->second;
        while (start <= s.size()) {
          size_t comma = s.find(',', start);
          if (comma == std::string::npos) comma = s.size();
          if (comma > start) ids.push_back(s.substr(start, comma - start));
          start = comma + 1;
        }
      }
      if (j.complete) {
        std::vector<std::string> removed;
        for (const auto& id : ids) {
          auto e = entries_.find(id);
          if (e == entries_.end()) continue;
          if (e->second.state == st::kStale || e->second.state == st::kAbsent) {
            removed.push_back(id);
            entries_.erase(e);
            continue;
          }
          // In use again, but its directory is gone: warm it anew.
          FingerprintStatus& f = e->second;
          f.bytes = f.files = 0;
          f.manifest_digest.clear();
          f.ready_at.reset();
          SetState(f, st::kPending);
          for (const auto& w : obs_.jobs) {
            if (Ours(w) && Component(w) == "warmup" && JobFingerprint(w) == id) DeleteJob(w);
          }
        }
        if (!removed.empty()) {
          Event("Normal", "CacheCollected",
                "removed the cache(s) of unused fingerprint(s) " + StrJoin(removed, ", ") +
                    " (GC Job " + j.name + ")");
        }
        for (const auto& id : removed) {
          collectable_.erase(std::remove(collectable_.begin(), collectable_.end(), id),
                             collectable_.end());
        }
        DeleteJob(j);
      } else if (j.failed_condition) {
        const Time retry = j.finished.value_or(now_) + kGcRetry;
        if (now_ >= retry) {
          Event("Warning", "GcFailed",
                "GC Job " + j.name + " failed (" + j.failure_reason + "); retrying");
          DeleteJob(j);
        } else {
          WakeAt(retry);
        }
        gc_running = true;
      } else {
        gc_running = true;
      }
    }
    if (gc_running || collectable_.empty() || !storage_usable_) return;
    std::sort(collectable_.begin(), collectable_.end());
    // Exactly what to remove, each with the digest recorded for it: GC
    // never removes a cache it was not given (a shared claim holds other
    // KernelCaches' caches) nor one sealed after this Job was made.
    std::map<std::string, std::string> remove;
    for (const auto& id : collectable_) {
      auto e = entries_.find(id);
      remove[id] = e == entries_.end() ? "" : e->second.manifest_digest;
    }
    Action a;
    a.kind = Action::Kind::kCreateJob;
    a.name = GcJobName(kc_.metadata.name, collectable_);
    if (FindJob(a.name) != nullptr) return;  // finished and being handled above
    a.object = BuildGcJob(kc_, remove, obs_.settings);
    std::vector<std::string> what;
    for (const auto& id : collectable_) what.push_back(id + " (" + why_collected_[id] + ")");
    Event("Normal", "GcStarted",
          "GC Job " + a.name + " removes the cache(s) of fingerprint(s) " + StrJoin(what, ", "));
    plan_.actions.push_back(std::move(a));
  }

  // Warmup Jobs no longer needed: of fingerprints no longer in status, and
  // older generations once a newer cache is recorded.
  void CleanupJobs() {
    for (const auto& j : obs_.jobs) {
      if (!Ours(j) || Component(j) != "warmup" || j.deleting) continue;
      const std::string id = JobFingerprint(j);
      auto e = entries_.find(id);
      if (e == entries_.end()) {
        DeleteJob(j);
        continue;
      }
      const FingerprintStatus& f = e->second;
      const bool finished = j.complete || j.failed_condition;
      if (finished && j.name != WarmupJobName(kc_.metadata.name, id, f.warm_generation) &&
          j.uid != f.job_uid) {
        DeleteJob(j);
      }
    }
  }

  // ---- summary ------------------------------------------------------------

  void Summarize() {
    auto& status = plan_.status;
    if (fingerprints_computed_) {
      status.fingerprints.clear();
      for (auto& [id, f] : entries_) status.fingerprints.push_back(f);  // sorted by id
    }
    int32_t total = 0, ready = 0;
    int64_t bytes = 0;
    std::vector<std::string> waiting, failed, quarantined;
    for (const auto& f : status.fingerprints) {
      if (!f.manifest_digest.empty()) bytes += f.bytes;
      if (f.nodes == 0) continue;
      ++total;
      if (f.state == st::kReady) {
        ++ready;
        continue;
      }
      std::string why = f.id + " " + f.state;
      if (f.state == st::kDegraded) {
        why += " (re-warming with Job " + f.job + ")";
        quarantined.push_back(f.id + ": " + f.last_failure);
      } else if (f.state == st::kFailed) {
        why += " (" + f.last_failure + ")";
        failed.push_back(f.id + ": " + f.last_failure);
      } else if (f.state == st::kWarming) {
        why += " (Job " + f.job + ")";
      } else if (auto g = groups_.find(f.id); g != groups_.end() && g->second.label_sets.empty()) {
        why += " (no eligible node: " + ListSome(g->second.ineligible) + ")";
      } else if (!storage_usable_) {
        why += " (storage not usable)";
      }
      waiting.push_back(why);
    }
    status.total_fingerprints = total;
    status.ready_fingerprints = ready;
    status.ready = std::to_string(ready) + "/" + std::to_string(total);
    status.total_bytes = bytes;
    status.size = core::FormatBytes(bytes);
    if (invalid_) return;  // Ready was set by CheckSpec; the rest keeps its last value

    if (total == 0) {
      SetCondition(cond::kReady, false, "NoNodes",
                   "no node matching spec.nodeSelector carries complete GPU labels");
    } else if (ready == total) {
      SetCondition(cond::kReady, true, "AllFingerprintsReady",
                   status.ready + " fingerprints ready");
    } else {
      SetCondition(cond::kReady, false, "FingerprintsNotReady",
                   status.ready + " fingerprints ready; waiting: " + ListSome(waiting));
    }
    ReportUnschedulable();
    if (!running_.empty()) {
      SetCondition(cond::kWarming, true, "WarmupRunning", "warmup Jobs: " + ListSome(running_));
    } else {
      SetCondition(cond::kWarming, false, "Idle", "no warmup running");
    }
    if (max_bytes_ && bytes > *max_bytes_) {
      const std::string msg = "caches total " + core::FormatBytes(bytes) +
                              ", over spec.retention.maxBytes " + kc_.spec.retention.max_bytes +
                              "; too many shapes? Reduce spec.warmup.shapes or raise the limit";
      if (Changed(cond::kDegraded, true, "ShapeExplosion")) {
        Event("Warning", "ShapeExplosion", msg);
      }
      SetCondition(cond::kDegraded, true, "ShapeExplosion", msg);
    } else if (!quarantined.empty()) {
      SetCondition(cond::kDegraded, true, "CacheQuarantined",
                   "caches found bad by model pods, being re-warmed: " + ListSome(quarantined));
    } else if (!failed.empty()) {
      SetCondition(cond::kDegraded, true, "WarmupFailed",
                   "failed warmups (retried with backoff): " + ListSome(failed));
    } else if (!storage_usable_) {
      SetCondition(cond::kDegraded, true, "StorageNotReady",
                   conditions_[std::string(cond::kStorageReady)].message);
    } else {
      SetCondition(cond::kDegraded, false, "AsExpected", "no problem found");
    }
  }

  Plan Finish() {
    auto& status = plan_.status;
    // Conditions in a fixed order; ones not decided this pass keep their
    // last value.
    static const std::string_view kOrder[] = {cond::kReady,          cond::kWarming,
                                              cond::kDegraded,       cond::kInvalidSpec,
                                              cond::kStorageReady,   cond::kNodesMissingLabels,
                                              cond::kImageNotPinned, cond::kWarmupUnschedulable};
    std::vector<Condition> out;
    for (auto type : kOrder) {
      auto it = conditions_.find(std::string(type));
      if (it != conditions_.end()) {
        out.push_back(it->second);
      } else if (const Condition* p = Prev(type)) {
        out.push_back(*p);
      }
    }
    for (const auto& c : kc_.status.conditions) {  // foreign types are kept
      if (std::find(std::begin(kOrder), std::end(kOrder), c.type) == std::end(kOrder)) {
        out.push_back(c);
      }
    }
    status.conditions = std::move(out);
    if (invalid_) {
      status.phase = "Invalid";
    } else {
      const Condition* ready = core::FindCondition(status.conditions, cond::kReady);
      const Condition* degraded = core::FindCondition(status.conditions, cond::kDegraded);
      if (degraded != nullptr && degraded->status == "True") {
        status.phase = "Degraded";
      } else if (ready != nullptr && ready->status == "True") {
        status.phase = "Ready";
      } else if (!running_.empty()) {
        status.phase = "Warming";
      } else {
        status.phase = "Pending";
      }
    }
    for (auto& e : events_) plan_.actions.push_back(std::move(e));
    if (wake_) {
      auto d = std::chrono::ceil<seconds>(*wake_ - now_);
      plan_.requeue_after = std::max(d, seconds(1));
    }
    return std::move(plan_);
  }

  const Observed& obs_;
  const core::KernelCache& kc_;
  const Time now_;
  const int64_t gen_;
  Plan plan_;
  std::vector<Action> events_;
  std::optional<Time> wake_;
  std::map<std::string, Condition> conditions_;
  std::map<std::string, Group> groups_;
  std::map<std::string, FingerprintStatus> entries_;
  std::vector<std::string> collectable_;
  std::map<std::string, std::string> why_collected_;  // id -> "stale for more than 24h"
  std::map<std::string, std::string> node_fp_;        // node name -> the fingerprint it carries
  std::vector<std::string> running_;
  std::vector<std::pair<std::string, std::string>> unschedulable_;  // (fingerprint, what)
  std::set<std::string> deleted_;
  bool storage_usable_ = false;
  bool invalid_ = false;
  bool fingerprints_computed_ = false;
  seconds stale_after_{86400};
  seconds absent_after_{168 * 3600};
  std::optional<seconds> purge_;
  std::optional<int64_t> max_bytes_;
};

}  // namespace

Plan Decide(const Observed& observed, Time now) { return Decider(observed, now).Run(); }

const char* ActionKindName(Action::Kind kind) {
  switch (kind) {
    case Action::Kind::kAddFinalizer:
      return "AddFinalizer";
    case Action::Kind::kRemoveFinalizer:
      return "RemoveFinalizer";
    case Action::Kind::kCreatePvc:
      return "CreatePvc";
    case Action::Kind::kCreateJob:
      return "CreateJob";
    case Action::Kind::kDeleteJob:
      return "DeleteJob";
    case Action::Kind::kDeletePvc:
      return "DeletePvc";
    case Action::Kind::kEmitEvent:
      return "EmitEvent";
  }
  return "Unknown";
}

}  // namespace kc::op

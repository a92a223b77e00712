// The vocabulary of the decision library: what Decide (operator/decide/decide.h)
// and its steps read and return. Settings (operator-wide inputs, with their
// defaults), the *View structs of the cluster objects (built from informer
// JSON by operator/decide/views.h), Observed, Action, Plan, and the label and
// annotation keys on everything the operator creates.
// Pure values: no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "core/gate_report.h"
#include "operator/decide/label_set.h"
#include "operator/decide/pod_parts.h"

namespace kc::op {

// The defaults of Settings, stated once; the operator's flags (operator/config.h)
// start from the same values.
inline constexpr char kDefaultInitwarmImage[] = "ghcr.io/kernelcache/initwarm:latest";
inline constexpr char kDefaultImagePullPolicy[] = "IfNotPresent";
inline constexpr std::chrono::seconds kDefaultPvcBindingGrace{120};
inline constexpr std::chrono::seconds kDefaultWarmupRetryBase{30};
inline constexpr std::chrono::seconds kDefaultWarmupRetryCap{3600};
// A warmup pod unschedulable this long is reported (WarmupUnschedulable) and
// StartCold pods stop waiting for it.
inline constexpr std::chrono::seconds kDefaultWarmupUnschedulableGrace{120};

using Json = nlohmann::json;
using Time = std::chrono::system_clock::time_point;

// Operator-wide inputs that do not come from the KernelCache.
struct Settings {
  std::string initwarm_image = kDefaultInitwarmImage;
  std::string image_pull_policy = kDefaultImagePullPolicy;
  std::string service_account;  // warmup pods' serviceAccountName; "" = default
  // A created PVC still Pending after this long gets StorageReady=False
  // WaitingForBinding (before that: reason Binding, not an error).
  std::chrono::seconds pvc_binding_grace = kDefaultPvcBindingGrace;
  // Backoff after a failed warmup: base * 2^(failures-1), capped.
  std::chrono::seconds retry_base = kDefaultWarmupRetryBase;
  std::chrono::seconds retry_cap = kDefaultWarmupRetryCap;
  // priorityClassName of warmup pods ("" = none; the operator's flag
  // --warmup-priority-class, default the chart's kernelcache-warmup).
  std::string warmup_priority_class;
  // A warmup pod unschedulable this long is reported (condition
  // WarmupUnschedulable, Event) and resolve tells StartCold pods to go.
  std::chrono::seconds unschedulable_grace = kDefaultWarmupUnschedulableGrace;
  // Where the operator runs and as whom ("" = not known): a server-form
  // warmup may run as neither (server_identity.h).
  std::string operator_namespace;
  std::string operator_service_account;
};

// A Node matching spec.nodeSelector (the reconciler filters; Decide
// re-checks the selector anyway). Cheap to copy: the labels are shared.
struct NodeView {
  std::string name;
  LabelSet labels;
  bool unschedulable = false;   // spec.unschedulable (cordoned)
  bool ready = true;            // condition Ready == "True"
  int64_t gpu_allocatable = 0;  // status.allocatable["nvidia.com/gpu"]
  friend bool operator==(const NodeView&, const NodeView&) = default;
};

// A Job labelled kernelcache.io/name=<kc name> (warmup and GC Jobs).
struct JobView {
  std::string name;
  std::string uid;
  PodParts parts;  // of its pod template (pod_parts.h)
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  bool complete = false;          // condition Complete == "True"
  bool failed_condition = false;  // condition Failed == "True"
  std::string
      failure_reason;  // the Failed condition's reason (BackoffLimitExceeded, DeadlineExceeded)
  std::string failure_message;  // the Failed condition's message
  bool deleting = false;        // metadata.deletionTimestamp set
  // metadata.finalizers holds "foregroundDeletion": a delete with
  // propagation Foreground, so the Job is gone only once its pods are.
  bool foreground_deletion = false;
  Time created{};
  std::optional<Time> finished;  // status.completionTime or the Failed condition's time
  friend bool operator==(const JobView&, const JobView&) = default;
};

// A Pod of a warmup Job: the Job is its controller owner reference (kind
// Job, batch/v1), never a label anyone creating a pod can set, and the pod
// runs the Job's template (the Job controller also adopts a stranger's pod
// whose labels match its selector). A result is a Job's only when both hold
// (OfJob).
struct PodView {
  std::string name;
  std::string job_name;  // the owner reference's name
  std::string job_uid;   // the owner reference's uid
  PodParts parts;        // what it runs (pod_parts.h); only for a Job's pod
  std::string node_name;
  std::string phase;  // Pending | Running | Succeeded | Failed
  // The result container (warmup Jobs: "seal"; harvest Jobs: "harvest"): its
  // terminated state's message and exit code.
  std::optional<std::string> seal_message;
  std::optional<int> seal_exit_code;
  // The run time of the "warmup" init container (its program's compile, its
  // start and its model load), when it terminated with exit 0: the kubelet's
  // startedAt to finishedAt, whole seconds.
  std::optional<double> warmup_seconds;
  // First container (init or main) that terminated with a non-zero exit:
  // "<container>: <reason> (exit <code>): <message>"; "" when none.
  std::string failure_summary;
  std::map<std::string, std::string> labels;
  Time created{};
  // Condition PodScheduled=False with reason Unschedulable: since when (its
  // lastTransitionTime) and the scheduler's message.
  std::optional<Time> unschedulable_since;
  std::string unschedulable_message;
  friend bool operator==(const PodView&, const PodView&) = default;
};

// Whether `p` is a pod of `j`: its controller owner reference names `j`'s
// uid (and name), and it runs `j`'s template.
inline bool OwnedByJob(const PodView& p, const JobView& j) {
  return !j.uid.empty() && p.job_uid == j.uid && p.job_name == j.name;
}
inline bool OfJob(const PodView& p, const JobView& j) {
  return OwnedByJob(p, j) && TemplateMismatch(p.parts, j.parts).empty();
}

// The PVC named core::ClaimName(kc), when it exists.
struct PvcView {
  std::string name;
  std::string uid;
  std::string phase;                      // Pending | Bound | Lost
  std::vector<std::string> access_modes;  // spec.accessModes (status.accessModes when Bound)
  bool owned_by_us = false;               // an ownerReference with the KernelCache's uid
  bool deleting = false;
  Time created{};
  friend bool operator==(const PvcView&, const PvcView&) = default;
};

// What the gate (`kernelcache-wait`) of one gated model pod reported
// (operator/controller/gate_reports.h reads it from the kubelet-written pod status).
struct GateReportView {
  std::string pod;
  std::string pod_uid;
  std::string node;
  // The gate run's container (terminated.containerID; "" when the kubelet
  // gave none): with pod_uid, which run of the gate this report is.
  std::string container_id;
  core::GateReport report;
  std::optional<Time> finished;  // the gate container's terminated.finishedAt
  friend bool operator==(const GateReportView&, const GateReportView&) = default;
};

// What the miss channel counted for one fingerprint's cache with this
// manifest digest (operator/controller/miss_ledger.h).
struct ObservedMisses {
  std::string manifest_digest;
  core::RuntimeMissStatus misses;
  // Inbox files pods gated on that digest listed for a harvest, by pod.
  std::vector<core::HarvestPod> harvest{};
  friend bool operator==(const ObservedMisses&, const ObservedMisses&) = default;
};

struct Observed {
  // The KernelCache: metadata (name, namespace, uid, generation,
  // deletionTimestamp, finalizers), spec, and the status last written.
  core::KernelCache kc;
  // Problems met turning the object's JSON into `kc`
  // (core::KernelCacheFromJson's `errors`): any makes the spec invalid.
  std::vector<std::string> parse_errors;
  std::vector<NodeView> nodes;  // nodes matching spec.nodeSelector
  std::vector<JobView> jobs;    // Jobs labelled kernelcache.io/name=<kc name>
  std::vector<PodView> pods;    // Pods of those Jobs
  std::optional<PvcView> pvc;   // the claim named core::ClaimName(kc)
  // Reports of gated model pods (label kernelcache.io/consumer=<kc name>).
  // A report that quarantined fingerprint F's cache whose digest is the
  // status's manifestDigest of F marks F Degraded and re-warms it (a new
  // Job generation); later reports of the same, now forgotten, digest do
  // nothing.
  std::vector<GateReportView> gate_reports;
  // By fingerprint id: runtime misses its gated pods reported for the
  // digest the status names (decide_misses.h).
  std::map<std::string, ObservedMisses> runtime_misses;
  Settings settings;
};

struct Action {
  enum class Kind {
    kAddFinalizer,
    kRemoveFinalizer,
    kCreatePvc,
    kCreateJob,
    kDeleteJob,
    // A running Job stopped by the operator: deleted in the foreground, so
    // the Job stays (deleting) until its pods are gone; its uid is recorded
    // in the fingerprint's cancelledJobUids.
    kCancelJob,
    kDeletePvc,
    kEmitEvent,
  };
  Kind kind = Kind::kEmitEvent;
  std::string name;          // object name (finalizer name for the finalizer kinds)
  std::string uid;           // deletes: precondition uid ("" = none)
  Json object;               // creates: the full object
  std::string event_type;    // "Normal" | "Warning"
  std::string event_reason;  // CamelCase
  std::string event_message;
};

// What a pass recorded of a finished warmup Job: the outcome label of the
// operator's warmup metric.
enum class WarmupOutcome {
  kPublished,  // its seal result was recorded: the fingerprint is Ready
  kFailed,     // the Job failed, or its seal result was missing, bad or failed
  kMismatch,   // it sealed another fingerprint than its own
};
// "Published" | "Failed" | "Mismatch"
const char* WarmupOutcomeName(WarmupOutcome outcome);

struct Plan {
  std::vector<Action> actions;
  // The whole new status; write it once when != observed.kc.status.
  core::KernelCacheStatus status;
  // Reconcile again after this long (earliest pending timer: retry backoff,
  // stale grace, purge schedule, PVC binding grace); nullopt = only on events.
  std::optional<std::chrono::seconds> requeue_after;
  // Fingerprint id -> the outcome of the Job recorded this pass (metrics).
  std::map<std::string, WarmupOutcome> recorded;
};

// Label and annotation keys on everything the operator creates.
inline constexpr char kLabelName[] = "kernelcache.io/name";  // the KernelCache's name
inline constexpr char kLabelFingerprint[] = "kernelcache.io/fingerprint";
inline constexpr char kLabelComponent[] = "kernelcache.io/component";  // warmup | gc
inline constexpr char kAnnotationFingerprint[] = "kernelcache.io/fingerprint";
inline constexpr char kAnnotationGcIds[] = "kernelcache.io/gc-fingerprints";  // comma list
inline constexpr char kSealContainer[] = "seal";
// The harvest Job's container; its termination message is read like seal's.
inline constexpr char kHarvestContainer[] = "harvest";
inline constexpr char kWarmupContainer[] = "warmup";  // the warmup pod's spec.image init container

const char* ActionKindName(Action::Kind kind);

}  // namespace kc::op

// KernelCache API types (kernelcache.io/v1alpha1): typed structs and the
// JSON <-> struct conversion at the edge.
//
// The CRD in crds/kernelcache.kernelcache.io.yaml is the schema; these
// structs mirror it field by field (JSON names in the comments). Defaults
// here equal the CRD's defaults, so an object read from a server that has
// not applied them (or built in a test) behaves the same.
//
// Parsing is lenient and total: KernelCacheFromJson always returns a struct
// (metadata is needed even for a broken spec) and reports every type error
// it met in `errors`, each naming the field path ("spec.warmup.command[0]:
// expected a string"). The reconciler turns errors into InvalidSpec.
// Pure: no I/O.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/meta.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "api/time.h"
#include "base/status.h"
#include "core/consume.h"
#include "core/convergence.h"
#include "core/fingerprint.h"
#include "core/harvest.h"
#include "core/harvest_report.h"
#include "core/server_warmup.h"

namespace kc::core {

using Json = nlohmann::json;

inline constexpr std::string_view kGroup = "kernelcache.io";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "kernelcache.io/v1alpha1";
inline constexpr std::string_view kKind = "KernelCache";
inline constexpr std::string_view kPlural = "kernelcaches";
inline constexpr std::string_view kFinalizer = "kernelcache.io/cleanup";

// spec.warmup.convergence (core/convergence.h): convergence passes of
// either form.
struct ConvergenceSpec {
  int32_t max_passes = kDefaultMaxPasses;  // "maxPasses", 0..10; 0 runs the warmup once
  NotConvergedPolicy on_not_converged = NotConvergedPolicy::kPublish;  // "onNotConverged"
  friend bool operator==(const ConvergenceSpec&, const ConvergenceSpec&) = default;
};

struct WarmupSpec {
  // "command": the command form (a script in spec.image); exactly one of
  // command and server.
  std::vector<std::string> command;
  std::vector<std::string> args;           // "args"
  std::vector<Json> env;                   // "env": core/v1 EnvVar objects, passed through
  std::vector<Json> shapes;                // "shapes": free-form objects, handed over as JSON
  Json resources = Json::object();         // "resources": core/v1 ResourceRequirements
  int64_t active_deadline_seconds = 1800;  // "activeDeadlineSeconds", 60..86400
  int32_t backoff_limit = 2;               // "backoffLimit", 0..10
  // "podAnnotations": added to the warmup pod (e.g. sidecar.istio.io/inject:
  // "false", a mesh sidecar would keep the Job from completing). Not a
  // fingerprint input. Empty: the pod carries none (the behaviour before
  // the field existed).
  std::map<std::string, std::string> pod_annotations;
  // "convergence": after the command (or the server's request plan), run
  // it again in fresh processes until a pass compiles nothing.
  ConvergenceSpec convergence;
  // "server": the server form (the model's own pod template, driven by
  // requests; core/server_warmup.h). Then command, args, env, shapes and
  // resources stay empty and spec.image is unset.
  std::optional<ServerSpec> server;
  friend bool operator==(const WarmupSpec&, const WarmupSpec&) = default;
};

struct StorageSpec {
  std::string storage_class_name;  // "storageClassName"; "" = cluster default
  std::string size;                // "size": quantity; exactly one of size / existingClaim
  std::string existing_claim;      // "existingClaim": an RWX claim we never create or delete
  // "shareExistingClaim": this KernelCache shares existingClaim with other
  // KernelCaches on purpose; the validating webhook admits a claim used by
  // several KernelCaches only when all of them say so.
  bool share_existing_claim = false;
  friend bool operator==(const StorageSpec&, const StorageSpec&) = default;
};

// spec.consume: the enums decoded by SpecFromJson with core/consume.h's
// parse functions (a value it cannot read is an error there and leaves the
// default); the timeout as written (range-checked by CheckConsume).
struct ConsumeSpec {
  ConsumeMode mode = kDefaultConsumeMode;                     // "mode"
  int64_t wait_timeout_seconds = kDefaultWaitTimeoutSeconds;  // "waitTimeoutSeconds", 1..86400
  OnTimeout on_timeout = kDefaultOnTimeout;                   // "onTimeout"
  Level verify = kDefaultVerifyLevel;                         // "verify"
  friend bool operator==(const ConsumeSpec&, const ConsumeSpec&) = default;
};

struct RetentionSpec {
  // "staleAfter": Go duration; how long a fingerprint its nodes changed
  // away from (a driver upgrade, a new image) is kept.
  std::string stale_after = "24h";
  // "absentAfter": Go duration; how long a fingerprint whose nodes merely
  // went away (a pool scaled to zero) is kept, unless maxBytes needs the
  // space first.
  std::string absent_after = "168h";
  std::string max_bytes;       // "maxBytes": quantity; "" = no limit
  std::string purge_schedule;  // "purgeSchedule": Go duration interval; "" = never
  friend bool operator==(const RetentionSpec&, const RetentionSpec&) = default;
};

// spec.harvest: the mode and interval decoded by SpecFromJson (a value it
// cannot read is an error there and leaves the default); the caps as
// written (validated by CheckHarvest, read with HarvestCapsOf).
struct HarvestSpec {
  HarvestMode mode = kDefaultHarvestMode;  // "mode": Report | Merge
  // "interval": between merges, a Go duration (written back in
  // FormatDuration's form: "60m" reads as 1h).
  std::chrono::seconds interval = kDefaultHarvestInterval;
  int64_t max_files_per_pod = kDefaultHarvestMaxFilesPerPod;                   // "maxFilesPerPod"
  std::string max_bytes_per_pod = std::string(kDefaultHarvestMaxBytesPerPod);  // "maxBytesPerPod"
  int64_t max_files_per_fingerprint = kDefaultHarvestMaxFilesPerFingerprint;
  // "maxFilesPerFingerprint" (above), "maxBytesPerFingerprint"
  std::string max_bytes_per_fingerprint = std::string(kDefaultHarvestMaxBytesPerFingerprint);
  friend bool operator==(const HarvestSpec&, const HarvestSpec&) = default;
};

// Users and permissions (docs/permissions.md, core/security_context.h).
struct SecuritySpec {
  // "fsGroup": the cache group, which owns every cache directory; warmup
  // pods run with it as their group and fsGroup. Unset = kDefaultCacheGroup.
  std::optional<int64_t> fs_group;
  // "runAsUser": the uid of every warmup pod container (prepare, the user's
  // warmup, seal) and of GC pods. Unset = the initwarm image's 65532.
  std::optional<int64_t> run_as_user;
  friend bool operator==(const SecuritySpec&, const SecuritySpec&) = default;
};
// Bounds of both ids, in the CRD and in ValidateSpec (0, root, is refused:
// every container runs as non-root).
inline constexpr int64_t kMinSecurityId = 1;
inline constexpr int64_t kMaxSecurityId = 2147483647;

struct KernelCacheSpec {
  api::LabelSelector pod_selector;                   // "podSelector"
  std::map<std::string, std::string> node_selector;  // "nodeSelector"
  std::vector<Json> tolerations;                     // "tolerations": core/v1 Toleration
  std::string image;                                 // "image"
  std::map<std::string, std::string> runtime;        // "runtime": {"pytorch": "2.11.0"}
  WarmupSpec warmup;                                 // "warmup"
  StorageSpec storage;                               // "storage"
  ConsumeSpec consume;                               // "consume"
  RetentionSpec retention;                           // "retention"
  HarvestSpec harvest;                               // "harvest"
  SecuritySpec security_context;                     // "securityContext"
  friend bool operator==(const KernelCacheSpec&, const KernelCacheSpec&) = default;
};

namespace condition {
inline constexpr std::string_view kReady = "Ready";
inline constexpr std::string_view kWarming = "Warming";
inline constexpr std::string_view kDegraded = "Degraded";
inline constexpr std::string_view kInvalidSpec = "InvalidSpec";
inline constexpr std::string_view kStorageReady = "StorageReady";
inline constexpr std::string_view kNodesMissingLabels = "NodesMissingLabels";
inline constexpr std::string_view kImageNotPinned = "ImageNotPinned";
// A warmup pod unschedulable for longer than the operator's grace.
inline constexpr std::string_view kWarmupUnschedulable = "WarmupUnschedulable";
// Whether every fingerprint has a node with the GPUs one warmup asks for
// (the server form asks for its template's count).
inline constexpr std::string_view kWarmupFits = "WarmupFits";
}  // namespace condition

namespace fp_state {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kWarming = "Warming";
inline constexpr std::string_view kReady = "Ready";
inline constexpr std::string_view kFailed = "Failed";
// No node carries it because its nodes changed to another fingerprint.
inline constexpr std::string_view kStale = "Stale";
// No node carries it because its nodes went away (none of them carries
// another fingerprint): kept for retention.absentAfter.
inline constexpr std::string_view kAbsent = "Absent";
// A model pod's gate quarantined the Ready cache; a re-warm is under way.
inline constexpr std::string_view kDegraded = "Degraded";
// Every state, in the order of a fingerprint's life (metrics export each).
inline constexpr std::array<std::string_view, 7> kAll = {kPending, kWarming, kReady, kDegraded,
                                                         kFailed,  kStale,   kAbsent};
}  // namespace fp_state

inline constexpr size_t kMaxLastNodes = 32;     // the CRD's maxItems of lastNodes
inline constexpr size_t kMaxCancelledJobs = 4;  // the CRD's maxItems of cancelledJobUids

// One fingerprint's cache, status.fingerprints[].
// What gated pods compiled after their gate for one fingerprint's current
// cache (the miss channel, core/miss_channel.h): "runtimeMisses" in a
// fingerprint's status. Distinct entries (framework + key) across pods.
struct RuntimeMissTop {
  std::string framework;  // "framework": core::FrameworkName
  std::string detail;     // "detail": the human line (kernel name, shape, ...)
  int32_t pods = 0;       // "pods": pods that compiled it
  friend bool operator==(const RuntimeMissTop&, const RuntimeMissTop&) = default;
};
inline constexpr size_t kMaxRuntimeMissTop = 5;
struct RuntimeMissStatus {
  int64_t count = 0;                // "count": distinct entries compiled after the gate
  int32_t pods = 0;                 // "pods": pods that reported at least one
  std::vector<RuntimeMissTop> top;  // "top": most pods first, at most kMaxRuntimeMissTop
  friend bool operator==(const RuntimeMissStatus&, const RuntimeMissStatus&) = default;
};

// What the last harvests of a fingerprint did (status.fingerprints[].harvest).
struct HarvestStatus {
  int32_t generation = 0;  // "generation": merges into this cache since its warmup
  std::string job;         // "job": the last harvest Job
  std::string job_uid;     // "jobUid": the harvest Job whose result is recorded here
  // "lastResult": Merged | Unchanged | Failed
  std::optional<HarvestOutcome> last_result;
  std::optional<api::Time> last_time;  // "lastTime": when that Job finished
  std::string base_digest;             // "baseDigest": the generation it merged into
  int64_t added_files = 0;             // "addedFiles": by the last merge
  int64_t added_bytes = 0;             // "addedBytes"
  std::vector<std::string> added;      // "added": its entries (at most 5)
  int64_t conflicts = 0;               // "conflicts": paths kept out, other bytes
  int64_t rejected = 0;                // "rejected": files kept out by the checks
  std::string message;                 // "message": a failure's, or the first conflict
  friend bool operator==(const HarvestStatus&, const HarvestStatus&) = default;
};

// status.fingerprints[].convergence.
struct ConvergenceStatus {
  int32_t passes = 0;              // "passes": convergence passes run
  bool converged = false;          // "converged"
  int64_t last_pass_entries = 0;   // "lastPassEntries": what the last pass still compiled
  int64_t last_pass_autotune = 0;  // "lastPassAutotune": of them, autotune variants
  std::string message;             // "message": "converged after 2 passes" | "not converged ..."
  friend bool operator==(const ConvergenceStatus&, const ConvergenceStatus&) = default;
};

struct FingerprintStatus {
  std::string id;                  // "id": 16 hex digits
  std::string gpu_product;         // "gpuProduct"
  std::string compute_capability;  // "computeCapability"
  std::string driver;              // "driver"
  std::string cuda_driver;         // "cudaDriver"
  std::string arch;                // "arch"
  int32_t nodes = 0;               // "nodes": matching nodes now carrying it
  std::string state =
      "Pending";      // "state": Pending | Warming | Ready | Degraded | Failed | Stale | Absent
  std::string job;    // "job": current or last warmup Job
  int64_t bytes = 0;  // "bytes"
  int64_t files = 0;  // "files"
  std::string manifest_digest;            // "manifestDigest": sha256 of manifest.json
  std::optional<api::Time> ready_at;      // "readyAt"
  std::optional<api::Time> stale_since;   // "staleSince"
  std::optional<api::Time> absent_since;  // "absentSince"
  // "lastNodes": names of the matching nodes that carried it when last seen
  // (sorted, at most kMaxLastNodes); tells Stale (one of them now carries
  // another fingerprint) from Absent (they went away).
  std::vector<std::string> last_nodes;
  int32_t failures = 0;                        // "failures": consecutive failed warmups
  std::string last_failure;                    // "lastFailure": reason of the last failure
  std::optional<api::Time> last_failure_time;  // "lastFailureTime": backoff starts here
  int32_t warm_generation = 0;                 // "warmGeneration": bumped by each purge re-warm
  std::string job_uid;  // "jobUid": uid of the Job whose outcome is recorded here
  // "cancelledJobUids": uids of this fingerprint's warmup Jobs the operator
  // stopped while they ran (newest last, at most kMaxCancelledJobs); their
  // prepare-held lock stays on the volume, so the next warmup (once the Job
  // is gone, and with it its pods) and GC may break it. Cleared when a
  // warmup publishes.
  std::vector<std::string> cancelled_job_uids;
  std::optional<api::Time> last_transition_time;  // "lastTransitionTime": of `state`
  // "runtimeMisses": of the cache with manifest_digest; absent when none
  // was reported (cleared when the digest changes).
  std::optional<RuntimeMissStatus> runtime_misses;
  // "harvest": absent until a harvest Job of this fingerprint finished.
  std::optional<HarvestStatus> harvest;
  // "convergence": what the convergence passes of the warmup that sealed
  // the cache with manifest_digest found; absent when it ran none.
  std::optional<ConvergenceStatus> convergence;
  friend bool operator==(const FingerprintStatus&, const FingerprintStatus&) = default;
};

struct KernelCacheStatus {
  int64_t observed_generation = 0;  // "observedGeneration"
  std::vector<api::Condition> conditions;
  std::string phase;  // "phase": Pending | Warming | Ready | Degraded | Invalid | Terminating
  int32_t ready_fingerprints = 0;  // "readyFingerprints"
  int32_t total_fingerprints = 0;  // "totalFingerprints"
  std::string ready;               // "ready": "2/3" (printer column READY)
  int64_t total_bytes = 0;         // "totalBytes"
  std::string size;                // "size": "1.2Gi" (printer column SIZE)
  std::string claim_name;          // "claimName": the PVC in use
  std::vector<FingerprintStatus> fingerprints;
  friend bool operator==(const KernelCacheStatus&, const KernelCacheStatus&) = default;
};

struct KernelCache {
  api::ObjectMeta metadata;
  KernelCacheSpec spec;
  KernelCacheStatus status;
  // What KernelCacheFromJson could not read in the metadata or spec (the
  // same messages it appends to `errors`): such a spec holds defaults where
  // the user wrote something else, so nothing acts on it as written (the
  // webhook gates no pod on it, the reconciler marks it Invalid).
  std::vector<std::string> decode_errors;
};

// JSON -> struct. Always returns a struct; appends one message per field it
// could not read (wrong type, malformed time) to `errors` when non-null.
// Absent fields take the defaults above.
KernelCache KernelCacheFromJson(const Json& j, std::vector<std::string>* errors = nullptr);
KernelCacheSpec SpecFromJson(const Json& spec, std::vector<std::string>* errors = nullptr);
KernelCacheStatus StatusFromJson(const Json& status, std::vector<std::string>* errors = nullptr);

// struct -> JSON (the full object, or one part). Empty optional fields are
// omitted; defaults are written out.
Json KernelCacheToJson(const KernelCache& kc);
Json SpecToJson(const KernelCacheSpec& spec);
Json StatusToJson(const KernelCacheStatus& status);

// The runtime part of every fingerprint of this KernelCache: image, runtime
// versions, and the cache-affecting variables of warmup.env (literal values
// of names starting TRITON_, TORCH, PYTORCH_, VLLM_, CUDA_, NVIDIA_, XLA_,
// except the cache-view variables, which the operator sets itself). In the
// server form: the serving container's image and keyed env, the template's
// GPU count, the declared parallel layout and the digest of the server's
// command and args (an unresolved template gives an empty image).
RuntimeFacts RuntimeFactsFor(const KernelCacheSpec& spec);

// How many GPUs one warmup pod asks for: 1 in the command form, the
// template's count in the server form (0 while it cannot be read).
int64_t WarmupGpus(const KernelCacheSpec& spec);

// Whether the fingerprint keys on an environment variable of this name
// (RuntimeFactsFor): a cache-affecting prefix (TRITON_, TORCH, PYTORCH_,
// VLLM_, CUDA_, NVIDIA_, XLA_), and not one of the cache-view variables
// the webhook injects.
bool IsFingerprintEnv(std::string_view name);

// The claim the warmup Jobs and model pods mount: existingClaim, or
// "<name>-cache" for a claim the operator creates.
std::string ClaimName(const KernelCache& kc);

}  // namespace kc::core

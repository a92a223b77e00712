// Mutate: what the /mutate-pods webhook does to a pod, as a pure function.
//
// A pod in namespace `ns` whose labels match exactly one KernelCache's
// spec.podSelector (KernelCaches being deleted, or with an empty selector,
// never match) gets, unless it is in the operator's namespace or carries
// kernelcache.io/inject: "false" as a label or an annotation:
//   - volume kernelcache-cache: the KernelCache's claim (core::ClaimName),
//     mounted at /var/cache/kernelcache in the gate and every app container,
//     read-only in every mode (SharedReadWrite is deprecated and mounts it
//     read-only too, as Shared);
//   - volume kernelcache-run: an emptyDir at /var/run/kernelcache (the view
//     lives in it), mounted in the gate and every app container;
//   - init container kernelcache-wait, first: `initwarm wait` with the
//     consume settings (--mode --verify --timeout --on-timeout), the
//     KernelCache name, the pod's namespace and node (downward API: env
//     KC_NAMESPACE = metadata.namespace, KC_NODE_NAME = spec.nodeName), the
//     resolve URL, small requests/limits, core::ModelPodSecurity (the app's
//     uid/gid, locked down; the pod gains the cache group as a
//     supplemental group), and
//     under verify LoadTest the nvidia.com/gpu count of the largest app
//     container (the kubelet hands init-container devices on);
//   - with the pod annotation kernelcache.io/watch-misses, the miss watcher
//     (miss_watcher.h), a native sidecar after every other init container
//     (a bad value: not added, with an admission warning);
//   - the cache-view environment (core::CacheViewEnv) in every app
//     container;
//   - label kernelcache.io/consumer (core::kConsumerLabel) = the
//     KernelCache name, which the operator's gate reports select by;
//   - annotations kernelcache.io/injected (KernelCache name),
//     kernelcache.io/consume-mode and kernelcache.io/injector-version.
// Nothing the pod already has is overwritten: an env variable, volume,
// mount path or init container of the same name that differs from ours is
// kept (so is a kernelcache.io/consumer label of another value), and each
// such conflict is listed in the annotation
// kernelcache.io/injection-conflicts and in a Warning Event on the
// KernelCache. An item equal to ours is no conflict, so mutating a mutated
// pod changes nothing (empty patch).
// Two or more matching KernelCaches: the pod is left unchanged, with a
// Warning Event on each naming all of them.
// Total: a pod of unexpected shape is left unchanged with a reason.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/api_types.h"
#include "core/gate_args.h"
#include "operator/webhook/review.h"

namespace kc::webhook {

using Json = nlohmann::json;

inline constexpr char kGateName[] = "kernelcache-wait";
inline constexpr char kCacheVolume[] = "kernelcache-cache";
inline constexpr char kRunVolume[] = "kernelcache-run";
inline constexpr char kAnnotationInject[] = "kernelcache.io/inject";
inline constexpr char kAnnotationInjected[] = "kernelcache.io/injected";
inline constexpr char kAnnotationMode[] = "kernelcache.io/consume-mode";
inline constexpr char kAnnotationVersion[] = "kernelcache.io/injector-version";
inline constexpr char kAnnotationConflicts[] = "kernelcache.io/injection-conflicts";
// What the pod differs in from what was warmed (parity.h); absent when nothing.
inline constexpr char kAnnotationParity[] = "kernelcache.io/parity-mismatch";

// Event reasons.
inline constexpr char kReasonConflict[] = "InjectionConflict";
// The pod runs another image or cache-affecting env than the warmup
// (parity.h); the annotation kAnnotationParity says how.
inline constexpr char kReasonParity[] = "ParityMismatch";
// Event reason: spec.harvest Merge, but the pod could reach the watcher's
// inbox (HarvestRefusal); its watcher reports without harvesting.
inline constexpr char kReasonHarvestRefused[] = "HarvestRefused";
inline constexpr char kReasonAmbiguous[] = "AmbiguousPodSelector";

struct MutationResult {
  Json pod;                            // the pod after mutation (the input when unchanged)
  Json patch = Json::array();          // RFC 6902, original -> pod; empty when unchanged
  std::string kernelcache;             // the KernelCache injected; "" when none
  std::vector<std::string> conflicts;  // "container app: env TRITON_CACHE_DIR differs (kept)"
  std::vector<WarningEvent> events;    // for the caller to record
  std::vector<std::string> warnings;   // admission warnings shown to the client
  std::string skipped;                 // why nothing was injected ("" when injected)
};

MutationResult Mutate(const Json& pod, const std::string& ns,
                      const std::vector<core::KernelCache>& kernelcaches,
                      const InjectSettings& settings);

// The init container Mutate injects for `kc` into `pod`, running `initwarm
// wait` with `gate` (exposed for tests and docs).
Json BuildGateContainer(const Json& pod, const core::KernelCache& kc, const core::GateArgs& gate,
                        const InjectSettings& settings);

// "pod llama-0", or "pod llama-7d9f- (generateName)" before the API server
// names it, or "pod (unnamed)".
std::string PodDisplayName(const Json& pod);

}  // namespace kc::webhook

// The steps of Mutate (mutate.h): which KernelCache a pod is for, then each
// injection on its own. An injection adds our item where the pod has none,
// and where it has one of the same name that differs (does not cover ours:
// CoversItem) keeps the pod's and appends a conflict. Pure: JSON in, JSON
// out; every step is total on a pod ShapeProblem accepted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/api_types.h"
#include "operator/webhook/review.h"

namespace kc::webhook {

using Json = nlohmann::json;

// True when every field of `ours` is in `theirs` with the same value
// (objects: a subset of keys; arrays of objects: each of ours covered by a
// distinct element of theirs, in order; other arrays: same length, element
// by element). The API server adds to what a webhook injected before it
// reinvokes it: defaults (terminationMessagePath, fieldRef apiVersion, ...)
// and, through the ServiceAccount admission plugin run again, the token
// mount in every container, our gate included. None of these may make our
// own item look like the user's.
bool CoversItem(const Json& theirs, const Json& ours);

// --- Selection.

// The one KernelCache a pod in `ns` is for, or why none.
struct Selection {
  const core::KernelCache* kc = nullptr;  // set when exactly one selects the pod
  std::string skipped;                    // why not; "" when kc is set
  std::vector<WarningEvent> events;       // on each KernelCache of an ambiguous match
  std::vector<std::string> warnings;      // admission warnings
};
// Unless the pod is in the operator's namespace or opted out
// (kernelcache.io/inject: "false" as a label or an annotation), the
// KernelCaches (not being deleted, of `ns` or of no namespace, with a
// non-empty spec.podSelector) whose selector matches the pod's labels: one
// is selected; none or several select none (several: a Warning Event on
// each, naming all of them).
Selection SelectKernelCache(const Json& pod, const std::string& ns,
                            const std::vector<core::KernelCache>& kernelcaches,
                            const InjectSettings& settings);

// --- Injections. `conflicts` collects what was kept of the pod's.

// spec.volumes: each of `volumes` by name.
void InjectVolumes(Json& spec, const std::vector<Json>& volumes,
                   std::vector<std::string>& conflicts);
// A container's volumeMounts: each of `mounts` by mountPath.
void InjectMounts(Json& container, const std::string& container_name,
                  const std::vector<Json>& mounts, std::vector<std::string>& conflicts);
// A container's env: each of `env` (name, value) by name.
void InjectEnv(Json& container, const std::string& container_name,
               const std::vector<std::pair<std::string, std::string>>& env,
               std::vector<std::string>& conflicts);
// spec.securityContext.supplementalGroups = `groups` (none: unchanged).
void InjectSupplementalGroups(Json& spec, const std::vector<int64_t>& groups);
// spec.initContainers: `gate` first, by name.
void InjectGate(Json& spec, const Json& gate, std::vector<std::string>& conflicts);
// The opt-in miss watcher (miss_watcher.h), after every other init container.
void InjectMissWatcher(Json& spec, const Json& watcher, std::vector<std::string>& conflicts);
// metadata.labels[kernelcache.io/consumer] = `kc_name`.
void InjectConsumerLabel(Json& metadata, const std::string& kc_name,
                         std::vector<std::string>& conflicts);
// metadata.annotations: injected (`kc_name`), consume-mode (`mode`),
// injector-version (`version`), and injection-conflicts (`conflicts` joined;
// removed when none).
void InjectAnnotations(Json& metadata, const std::string& kc_name, const std::string& mode,
                       const std::string& version, const std::vector<std::string>& conflicts);
// The lists an injection created but left empty (a conflict kept
// everything), removed again: spec.volumes, spec.initContainers, and each
// container's env and volumeMounts that `before` (the pod as admitted) did
// not have.
void DropCreatedEmptyLists(const Json& before, Json& spec);

// A container's name, or "#<index>" when it has none (for messages).
std::string ContainerName(const Json& container, size_t index);

}  // namespace kc::webhook

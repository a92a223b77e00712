// The workloads server warmups name (spec.warmup.server.workloadRef): the
// pod template of a Deployment or StatefulSet of the KernelCache's
// namespace, read from the operator's informer caches.
//
// The template is copied into the in-memory KernelCache before anything
// reads it (reconcile, resolve, the webhook), never written back: the
// fingerprint, the warmup pod and the parity check all see the workload as
// it is now, and a rollout that changes its image, args or keyed env moves
// the fingerprint like any other spec change.
#pragma once

#include <string>
#include <vector>

#include "core/api_types.h"
#include "operator/controller/caches.h"

namespace kc::op {

// Fills kc->spec.warmup.server->pod_template from the named workload and
// checks it (core::CheckServerTemplate); appends one error per problem to
// `errors`, each naming spec.warmup.server.workloadRef and the fix (the
// workload missing, a template a warmup pod may not run). A KernelCache
// without a workloadRef is left as it is.
void ResolveWorkload(core::KernelCache* kc, const Caches& caches, std::vector<std::string>* errors);

// "<ns>/<name>" of each KernelCache in `kcs` (JSON) whose
// spec.warmup.server.workloadRef names `workload` of `kind`.
std::vector<std::string> KeysNamingWorkload(const std::string& kind, const kube::Json& workload,
                                            const std::vector<kube::Json>& kcs);

}  // namespace kc::op

// Decide: the reconciler's brain, a pure function of what was observed.
//
//   Plan Decide(const Observed& observed, Time now)
//
// The reconciler (operator/controller/reconciler.*) reads the KernelCache and what
// belongs to it from informer caches into an Observed, calls Decide, carries
// out plan.actions in order through kube::Client, then writes plan.status
// once (status subresource) when it differs from observed.kc.status, and
// requeues after plan.requeue_after when set.
//
// Level-triggered and idempotent: everything Decide needs to remember
// between passes (fingerprint states, failure counts, readyAt, staleSince,
// manifest digests) lives in the KernelCache's status, which it reads back
// from observed.kc.status. Re-running Decide on the same input, or on the
// input after its plan was applied, creates nothing new. Object names are
// deterministic (operator/decide/names.h), so a create that hits AlreadyExists is
// success, and a delete that hits NotFound is success.
//
// Carrying out actions (the reconciler's side of the contract):
//   kAddFinalizer / kRemoveFinalizer: patch metadata.finalizers of the
//     KernelCache (merge patch of the whole list, or JSON patch) to include /
//     exclude core::kFinalizer. `name` is the finalizer.
//   kCreatePvc / kCreateJob: Create(object) in the KernelCache's namespace;
//     AlreadyExists is success.
//   kDeleteJob: Delete(jobs, name) with propagation Background and, when
//     `uid` is set, a uid precondition; NotFound is success.
//   kCancelJob: the same with propagation Foreground (a running warmup
//     stopped: the Job is gone only once its pods are).
//   kDeletePvc: Delete(persistentvolumeclaims, name) with the uid precondition.
//   kEmitEvent: an Event on the KernelCache (involvedObject = the
//     KernelCache) with event_type ("Normal"|"Warning"), event_reason,
//     event_message.
// While the KernelCache is being deleted, plan.status equals the observed
// status (nothing to write) and the plan ends with kRemoveFinalizer.
// On a failed action the reconciler stops, logs once, and requeues with
// rate-limited backoff; it still writes plan.status only if every action
// before the status write succeeded (status describes what was done).
// operator/decide/views.h turns informer JSON into the *View structs of
// operator/decide/types.h
// (NodeViewFromJson, JobViewFromJson, PodViewFromJson, PvcViewFromJson).
// Pure: no I/O, no logging, no clock (`now` is an argument).
// The steps live in operator/decide/decide_{spec,storage,nodes,fingerprint,gc,harvest,summary}.h
// and eligibility.h; decide.cc composes them.
#pragma once

#include "operator/decide/types.h"

namespace kc::op {

Plan Decide(const Observed& observed, Time now);

}  // namespace kc::op

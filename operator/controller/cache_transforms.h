// What the operator's informers keep of each object (kube/transform.h): only
// the fields something in the operator reads, so the caches of a large fleet
// hold a fraction of the bytes the API server sends. Everything that reads
// the caches goes through the views (operator/decide/views.h), the gate reports
// (operator/controller/gate_reports.h), the controller's event handlers (labels,
// ownerReferences, namespace, name) or the KernelCache object itself:
//
//   Node          metadata (no annotations), spec.unschedulable, spec.taints,
//                 status.allocatable, status.conditions[].{type,status}
//                 (NodeViewFromJson: labels, cordon, Ready, GPUs)
//   Pod           metadata (no annotations), spec.{nodeName,
//                 shareProcessNamespace}, status.{phase, conditions,
//                 initContainerStatuses, containerStatuses}, and for a pod a
//                 Job owns what it runs (operator/decide/pod_parts.h, kept
//                 under spec) (PodViewFromJson, GateReportsFromPod)
//   Job           metadata (with annotations: the GC Job's fingerprint ids),
//                 status, and what its pod template runs (pod_parts.h, kept
//                 under spec), never the template itself (JobViewFromJson)
//   PVC           metadata, spec.{accessModes,storageClassName,volumeName,
//                 resources}, status.{phase,accessModes,capacity}
//   Deployment,   metadata, spec.template (the pod template a server warmup
//   StatefulSet   names; operator/controller/workloads.h)
//   KernelCache   everything but metadata.managedFields (the reconciler
//                 patches status against the whole object; Events and the
//                 webhooks read it too)
//   anything else everything but metadata.managedFields
// "metadata" is name, namespace, uid, resourceVersion, generation,
// creationTimestamp, deletionTimestamp, finalizers, labels, ownerReferences.
// operator/controller/cache_transforms_test.cc proves each view reads the same from the
// kept object as from the whole one; a reader of a new field adds it here.
// Pure.
#pragma once

#include "kube/resource.h"
#include "kube/transform.h"

namespace kc::op {

kube::ObjectTransform CacheTransformFor(const kube::Resource& resource);

// What an informer's store keeps once the handlers have seen an object
// (kube::InformerOptions::keep): for Nodes only metadata.{name,
// resourceVersion}, since the controller keeps each node's NodeView in its
// NodeIndex and reads nodes nowhere else (one copy of a 5,000-node fleet,
// not two); for every other resource, empty (the store keeps what
// CacheTransformFor made).
kube::ObjectTransform CacheKeepFor(const kube::Resource& resource);

}  // namespace kc::op

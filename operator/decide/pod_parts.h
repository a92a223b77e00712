// What a Job's pod runs, part by part, so a result is read only from a pod
// that runs the Job's own template. An owner reference alone is not enough:
// the Job controller adopts any orphan pod whose labels match its selector
// (job-name, controller-uid: anyone who may create pods in the namespace and
// read the Job can set them), and counts that pod's success as the Job's.
//
// A pod's parts: per container (init and main), "c/<name>" -> sha256 of its
// image, command, args, env and volume mounts; per volume a container
// mounts, "v/<name>" -> sha256 of its source and of the names of the
// containers that mount it. The ServiceAccount token mount
// (/var/run/secrets/kubernetes.io/serviceaccount), which admission adds to
// pods and never to templates, is left out. A Job's parts are those of its
// pod template. Pure.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace kc::op {

using PodParts = std::map<std::string, std::string>;

// Where the operator's informer transform keeps a pod's or a Job's parts
// (under spec: a key no Kubernetes field can have).
inline constexpr char kPodPartsKey[] = "kernelcache.io/parts";

// The parts of a pod spec (a pod's spec or a Job's spec.template.spec);
// empty for anything that is not an object.
PodParts PodPartsOf(const nlohmann::json& pod_spec);

// "" when `pod` runs `job_template`: every container of the template is in
// the pod with the same parts, and every template volume a container mounts
// is the pod's, mounted by the same containers (a sidecar an admission
// webhook injects may run beside them, never with their volumes). Else what
// differs, naming the container or volume. An empty template matches only
// an empty pod (views built by hand: the API server admits no pod, and no
// Job, without containers).
std::string TemplateMismatch(const PodParts& pod, const PodParts& job_template);

// The parts kept under spec[kPodPartsKey] of an informer object, else
// computed from `pod_spec`.
PodParts KeptPodParts(const nlohmann::json& spec, const nlohmann::json& pod_spec);

}  // namespace kc::op

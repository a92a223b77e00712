// Views: informer JSON (Node, Job, Pod, PVC) -> the small structs Decide
// reads (operator/decide/types.h), projected from the one typed decoding of each
// object (api/node.h, api/job.h, api/pod.h, api/pvc.h). Lenient: a missing
// or mistyped field leaves the default.
// Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "operator/decide/types.h"

namespace kc::op {

NodeView NodeViewFromJson(const Json& node);
JobView JobViewFromJson(const Json& job);
// The seal container is the container named kSealContainer; warmup_seconds
// is the run of the init container named kWarmupContainer.
PodView PodViewFromJson(const Json& pod);
// `owner_uid`: the KernelCache's uid; sets owned_by_us when an
// ownerReference carries it.
PvcView PvcViewFromJson(const Json& pvc, const std::string& owner_uid);

// Whether an update of an owned Job or warmup Pod can change what Decide
// reads: its view changed. A Ready count, a condition Decide does not read
// (SuccessCriteriaMet, PodReadyToStartContainers), uncountedTerminatedPods, a
// new resourceVersion: no pass. (Adds and deletes always queue one.)
bool JobChangeMatters(const Json& before, const Json& after);
bool PodChangeMatters(const Json& before, const Json& after);

}  // namespace kc::op
